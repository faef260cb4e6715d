"""Issue 24 (default `fix`, stB40): a write the hazard analysis proves breaks backward writes
into a tensor, whatever the binding shows of its type.

Autograd saves tensors only: where the proof names the op that saved the written value, the
value is a tensor, and the clone-first fix of a subscript write (``h[...] = v``: ``h =
h.clone()`` first) or the rebinding of an augmented assignment no longer stops at
"unknown-type" (a name unpacked from a method's tuple return, which the type facts do not
follow). The other facts still decide: a caller's tensor stays unsafe (``param-mutation``), a
value not proven saved stays where it was.

Each program is written from the pattern (a sequence model that feeds part of its own
prediction back into the hidden states it normalised; a refinement step that rescales them),
run with torch: the original raises at backward, the fixed program's gradients equal the
out-of-place program's.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

# `h` comes from a method's tuple return (its type unknown to the analysis); `_step` normalises
# it RMS-style (`h.pow(2)` saves `h`), then part of `h` is overwritten in place.
FEEDBACK = """\
import torch
import torch.nn as nn


class Feedback(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 4)
        self.out = nn.Linear(4, 4)

    def _prepare(self, x):
        h = self.embed(x)
        return h, x.shape[0]

    def _step(self, h):
        scale = h.pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt()
        return self.out(h * scale)

    def forward(self, x):
        h, n = self._prepare(x)
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
WRITES = {
    "subscript": ("h[:, :2] = pred[:, :2]", "h = h.clone()", "h = h.clone()\n            h[:, :2] = pred[:, :2]"),
    "augassign": ("h *= 0.5", "h = h * 0.5", "h = h * 0.5"),
}


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip() == text)


def _statuses(source: str, line: int):
    return [(f.code, f.status.value, f.reason) for f in process_in_project(source, Settings()).findings
            if f.span.line == line]


def test_a_write_proven_saved_gets_its_safe_fix_though_its_binding_hides_the_type():
    """Before: IPF104 ``manual`` / IPF101 ``unsafe`` with reason ``unknown-type`` (``h`` unpacked
    from ``self._prepare(x)``); after: safe, and the fixed program computes the out-of-place
    program's gradients."""
    for write, fixed_text, control_text in WRITES.values():
        source = FEEDBACK.replace("WRITE", write)
        assert raises_inplace(source)
        statuses = _statuses(source, _line(source, write))
        assert statuses and all(status == "safe" for _, status, _ in statuses), statuses
        fixed = fixed_source(source, project=True)
        assert fixed_text in fixed, fixed
        control = FEEDBACK.replace("WRITE", control_text)
        got, want = run_program(fixed), run_program(control)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert torch.allclose(g, w), fixed


def test_a_write_not_proven_saved_keeps_its_unknown_type():
    """Negative control: ``_step`` reads ``h`` through ``tanh`` (which saves its output, not
    ``h``): nothing proves ``h`` saved, the program works, and the fix stays withheld."""
    for write, _, _ in WRITES.values():
        source = FEEDBACK.replace("WRITE", write).replace(
            "scale = h.pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt()", "scale = torch.tanh(h).sum()")
        source = source.replace("return self.out(h * scale)", "return self.out(torch.tanh(h)) + scale")
        assert not raises_inplace(source)
        run_program(source)
        assert fixed_source(source, project=True) == source
        assert all(status != "safe" for _, status, _ in _statuses(source, _line(source, write)))


def test_a_caller_tensor_proven_saved_stays_unsafe():
    """Negative control: the block writes into its input, which the caller also reads after the
    call (a residual): the proof shows a tensor, but the write is the caller's to see, so the
    fix stays ``param-mutation`` (unsafe), not applied by default."""
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
