"""Issue 24 (default `fix`, stB40): a call's result kind from its callee's returns, for the
pieces of a tuple a method or a module of the file returns, and for a sub-module's member.

``h, n = self._prepare(x)`` (a method of the class, not overridden), ``h, n = self.enc(x)``
(the ``forward`` of the file's module class ``self.enc`` was built as) and
``self.enc.proj(x)`` (``Enc`` sets ``self.proj = nn.Linear(...)``) were of unknown type: a
proven write into ``h`` then got no fix (IPF104 ``manual``, IPF101 ``unsafe``, reason
``unknown-type``). Now the piece's kind is the kind every ``return`` gives at that place.

A proven hazard alone does not show the type: ``spacing = torch.sqrt(a)`` on one branch,
``np.sqrt(a)`` on the other, the write's hazard is proven on the torch path, and
``spacing.clone()`` would crash on the other (monai's ``affine_to_spacing``). Such a value
stays unknown.

Each program is written from the pattern (a sequence model that feeds part of its own
prediction back into the hidden states it normalised; an encoder that rescales them), run
with torch: the original raises at backward, the fixed program's gradients equal the
out-of-place program's.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

# `h` comes from PREPARE (its type unknown to the analysis before); `_step` normalises it
# RMS-style (`h.pow(2)` saves `h`), then part of `h` is overwritten in place.
FEEDBACK = """\
import torch
import torch.nn as nn


class Enc(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)

    def forward(self, x):
        h = self.proj(x)
        return h, x.shape[0]


class Feedback(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = Enc()
        self.out = nn.Linear(4, 4)

    def _prepare(self, x):
        h = self.enc.proj(x)
        return h, x.shape[0]

    def _step(self, h):
        scale = h.pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt()
        return self.out(h * scale)

    def forward(self, x):
        PREPARE
        loss = 0.0
        for step in range(2):
            pred = self._step(h)
            WRITE
            loss = loss + pred.sum() / n
        return loss


def main():
    torch.manual_seed(0)
    net = Feedback()
    net(torch.randn(5, 3)).backward()
    return [p.grad for p in net.parameters()]
"""
PREPARES = {
    "own-method": "h, n = self._prepare(x)",
    "module-forward": "h, n = self.enc(x)",
    "member-module": "h = self.enc.proj(x)\n        n = x.shape[0]",
}
WRITES = {
    "subscript": ("h[:, :2] = pred[:, :2]", "h = h.clone()", "h = h.clone()\n            h[:, :2] = pred[:, :2]"),
    "augassign": ("h *= 0.5", "h = h * 0.5", "h = h * 0.5"),
}


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip() == text)


def _statuses(source: str, line: int):
    return [(f.code, f.status.value, f.reason) for f in process_in_project(source, Settings()).findings
            if f.span.line == line]


@pytest.mark.parametrize("prepare", sorted(PREPARES))
@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_piece_returned_as_a_tensor_gets_the_safe_fix(prepare, write):
    """Before: IPF104 ``manual`` / IPF101 ``unsafe``, ``unknown-type``; after: safe, and the fixed
    program computes the out-of-place program's gradients."""
    text, fixed_text, control_text = WRITES[write]
    program = FEEDBACK.replace("PREPARE", PREPARES[prepare])
    source = program.replace("WRITE", text)
    assert raises_inplace(source)
    statuses = _statuses(source, _line(source, text))
    assert statuses and all(status == "safe" for _, status, _ in statuses), statuses
    fixed = fixed_source(source, project=True)
    assert fixed_text in fixed, fixed
    got, want = run_program(fixed), run_program(program.replace("WRITE", control_text))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w), fixed


# Negative controls: the piece may be something else than a tensor, or another method may run.
NOT_SHOWN = {
    # one return gives None at that place
    "a-return-without-a-tensor": ("        return h, x.shape[0]\n\n    def _step",
                                  "        if x.shape[0] > 99:\n            return None, 0\n"
                                  "        return h, x.shape[0]\n\n    def _step"),
    # a subclass of the file overrides the method
    "overridden": ("\n\ndef main():", "\n\nclass Other(Feedback):\n    def _prepare(self, x):\n"
                   "        return [0.0], 1\n\n\ndef main():"),
}


@pytest.mark.parametrize("case", sorted(NOT_SHOWN))
def test_a_piece_not_shown_a_tensor_keeps_its_fix_withheld(case):
    """The piece's kind stays unknown: the subscript write gets no fix (``manual``), the working
    program is not changed by the default fix."""
    old, new = NOT_SHOWN[case]
    program = FEEDBACK.replace("PREPARE", PREPARES["own-method"])
    assert old in program
    source = program.replace(old, new).replace("WRITE", "h[:, :2] = pred[:, :2]")
    statuses = _statuses(source, _line(source, "h[:, :2] = pred[:, :2]"))
    assert statuses and all(status != "safe" for _, status, _ in statuses), statuses
    assert "h = h.clone()" not in fixed_source(source, project=True)


def test_a_member_set_from_outside_stays_unknown():
    """``net.enc.proj = ...`` elsewhere in the file: ``self.enc.proj`` may be anything."""
    program = FEEDBACK.replace("PREPARE", PREPARES["member-module"]).replace(
        "    net = Feedback()\n", "    net = Feedback()\n    net.enc.proj = nn.Linear(3, 4)\n")
    source = program.replace("WRITE", "h[:, :2] = pred[:, :2]")
    statuses = _statuses(source, _line(source, "h[:, :2] = pred[:, :2]"))
    assert statuses and all(status != "safe" for _, status, _ in statuses), statuses


def test_a_value_tensor_on_one_branch_only_stays_unknown_though_its_hazard_is_proven():
    """monai's ``affine_to_spacing`` shape: a torch op's output on one branch, numpy's on the
    other; the hazard is proven (on the torch path), the clone-first fix is not offered."""
    source = """\
import numpy as np
import torch


def spacing_of(affine, suppress_zeros=True):
    if isinstance(affine, torch.Tensor):
        spacing = torch.sqrt(torch.sum(affine * affine, dim=0))
    else:
        spacing = np.sqrt(np.sum(affine * affine, axis=0))
    if suppress_zeros:
        spacing[spacing == 0] = 1.0
    return spacing
"""
    statuses = _statuses(source, _line(source, "spacing[spacing == 0] = 1.0"))
    assert statuses and all(status == "manual" for _, status, _ in statuses), statuses


def test_a_caller_tensor_proven_saved_stays_unsafe():
    """Negative control: the block writes into its input, which the caller also reads after the
    call (a residual): the fix stays ``param-mutation`` (unsafe), not applied by default."""
    source = """\
import torch
import torch.nn as nn


class Half(nn.Module):
    def forward(self, t):
        y = t.pow(2)
        t[:, :1] = 0.0
        return y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.halve = Half()

    def forward(self, x):
        h = self.lin(x)
        return self.halve(h) + h


def main():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(4, 3)).sum().backward()
    return [p.grad for p in net.parameters()]
"""
    assert raises_inplace(source)
    statuses = _statuses(source, _line(source, "t[:, :1] = 0.0"))
    assert statuses and all(status != "safe" for _, status, _ in statuses), statuses
    assert fixed_source(source, project=True) == source


# `h @ h.T` saves `h` only where `h` is floating (`@` also multiplies integer tensors): the
# piece's dtype comes from the callee's return too (`self.proj(x)`: a torch module's output).
SIMILARITY = """\
import torch
import torch.nn as nn


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.cls = nn.Parameter(torch.zeros(4))

    def _embed(self, x):
        h = self.proj(x)
        return h, x.abs().sum(-1) > 0

    def forward(self, x):
        h, mask = self._embed(x)
        sim = h @ h.transpose(0, 1)
        WRITE
        return (sim.softmax(-1) @ h).sum() + mask.sum()


def main():
    torch.manual_seed(0)
    net = Tokens()
    net(torch.randn(5, 3)).backward()
    return [p.grad for p in net.parameters()]
"""


def test_a_piece_returned_floating_makes_its_save_proven():
    """Before: IPF204 (possible: "if it is a floating tensor"), not in the default check; after:
    IPF104 proven, fixed by default, the out-of-place program's gradients."""
    source = SIMILARITY.replace("WRITE", "h[0] = self.cls")
    assert raises_inplace(source)
    findings = [(f.code, f.status.value) for f in process_in_project(source, Settings()).findings
                if f.span.line == _line(source, "h[0] = self.cls")]
    assert findings == [("IPF104", "safe")], findings
    fixed = fixed_source(source, project=True)
    got = run_program(fixed)
    want = run_program(SIMILARITY.replace("WRITE", "h = h.clone()\n        h[0] = self.cls"))
    for g, w in zip(got, want):
        assert torch.allclose(g, w), fixed


def test_a_piece_returned_integral_keeps_its_save_possible():
    """Negative control: the piece is ``x.argmax(-1)`` (integral: ``@`` saves no gradient for
    it); the program works, the default check stays silent on the write."""
    source = SIMILARITY.replace("return h, x.abs().sum(-1) > 0", "return h.argmax(-1), x.abs().sum(-1) > 0").replace(
        "sim = h @ h.transpose(0, 1)", "sim = h @ h").replace(
        "(sim.softmax(-1) @ h).sum()", "sim.float() + self.proj(x).sum() + self.cls.sum()")
    source = source.replace("WRITE", "h[0] = 0")
    assert not raises_inplace(source)
    run_program(source)
    assert [f.code for f in process_in_project(source, Settings()).findings
            if f.span.line == _line(source, "h[0] = 0")] == []


# A module returns (index, length, vec); the caller normalises the rows of `vec` a mask picks,
# `vec[mask] = vec[mask] / torch.norm(vec[mask], ...)`: the norm saves `vec[mask]`, a copy (the
# mask is a comparison of the index rows), not `vec`; nothing saved `vec` itself.
PAIRS = """\
import torch
import torch.nn as nn


class Pairs(nn.Module):
    def forward(self, pos: torch.Tensor, index):
        vec = pos[index[0]] - pos[index[1]]
        keep = index[0] != index[1]
        length = torch.zeros(vec.size(0))
        length[keep] = torch.norm(vec[keep], dim=-1)
        return index, length, vec


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pairs = Pairs()
        self.lin = nn.Linear(1, 4)

    def forward(self, pos, index):
        index, length, vec = self.pairs(pos, index)
        mask = index[0] != index[1]
        vec[mask] = vec[mask] / torch.norm(vec[mask], dim=1).unsqueeze(1)
        return self.lin(length[:, None]).sum() + vec.sum()


def main():
    torch.manual_seed(0)
    net = Net()
    pos = torch.randn(4, 3, requires_grad=True)
    index = torch.tensor([[0, 1, 2, 2], [1, 0, 2, 3]])
    net(pos, index).backward()
    return [pos.grad] + [p.grad for p in net.parameters()]
"""


def test_a_masked_row_write_into_a_returned_piece_is_not_claimed_saved():
    """Negative control (torch_geometric's ViSNet shape): the piece is known a tensor now, and the
    mask, a comparison of unknown sides, is not shown a view: the default check stays silent
    (before the mask rule: IPF104 "saved by torch.norm", a proven finding on a working program)."""
    assert not raises_inplace(PAIRS)
    run_program(PAIRS)
    line = _line(PAIRS, "vec[mask] = vec[mask] / torch.norm(vec[mask], dim=1).unsqueeze(1)")
    assert [f.code for f in process_in_project(PAIRS, Settings()).findings if f.span.line == line] == []
