"""Issue 24 (default `fix`, fix24e): findings the default `check` flags whose fix the default
`fix` withheld, and safe fixes that were not sound.

- A forward's write into its input (`x.add_(...)`) is fixed safely only where nothing reaches
  the block other than by its attribute's name (review36). A computed ``getattr(self, "gate" +
  str(i))`` reaches only attributes whose name starts with ``"gate"``: where no attribute the
  file sets on ``self`` could be so named, the block is not reached by it and the fix stays safe;
  a computed name that could be the block's attribute (``"blo" + "ck"``, no known prefix) keeps
  the write in place.

Each program is written from the pattern, run with torch: the original raises at backward, the
fixed program's gradients equal the out-of-place program's; the negative controls (working
programs) keep what they compute bit-identical.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import assert_same_results, fixed_source, process_in_project, raises_inplace, run_program

# A gated refinement block that adds its messages into its input, computed-name getattr of its
# own gates; its input is a sigmoid's output, which autograd saves for backward.
REFINE = """\
import torch
import torch.nn as nn


class Refine(nn.Module):
    def __init__(self, d, steps):
        super().__init__()
        self.steps = steps
        for i in range(steps):
            setattr(self, "gate" + str(i), nn.Linear(d, d))

    def forward(self, x):
        for i in range(self.steps):
            gate = getattr(self, "gate" + str(i))
            x.add_(0.5 * gate(torch.tanh(x)))
        return x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3, 4)
        self.refine = Refine(4, 2)

    def forward(self, inp):
        h = torch.sigmoid(self.proj(inp))
        h = self.refine(h)
        return h

    def probe(self, inp):
        h = torch.sigmoid(self.proj(inp))
        PROBE
        return h + y


def main():
    torch.manual_seed(0)
    net = Net()
    net(torch.randn(5, 3)).sum().backward()
    return [p.grad for p in net.parameters()]


def run_probe():
    torch.manual_seed(0)
    net = Net()
    with torch.no_grad():
        x = torch.randn(5, 3)
        return [net(x), net.probe(x)]
"""
REFINE_CONTROL = REFINE.replace("x.add_(0.5 * gate(torch.tanh(x)))", "x = x.add(0.5 * gate(torch.tanh(x)))")


def _safe_fixed(source: str) -> str:
    return fixed_source(source, project=True)


def _same_probe_results(source: str) -> None:
    fixed = _safe_fixed(source)
    got, want = run_program(fixed, "run_probe"), run_program(source, "run_probe")
    for g, w in zip(got, want):
        assert torch.equal(g, w), f"the safe fix changed a working program:\n{fixed}"


def test_a_computed_getattr_of_other_members_leaves_the_forward_input_fix_safe():
    """``getattr(self, "gate" + str(i))`` can name no attribute holding ``Refine`` (``proj``,
    ``refine``, ``steps``): the write into the forward's input is fixed by default."""
    source = REFINE.replace("        PROBE\n", "        y = h\n")
    assert raises_inplace(source)
    fixed = _safe_fixed(source)
    assert "x = x.add(" in fixed, fixed
    got, want = run_program(fixed), run_program(REFINE_CONTROL.replace("        PROBE\n", "        y = h\n"))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w)


@pytest.mark.parametrize("probe", [
    'y = getattr(self, "ref" + "ine")(h)',        # a computed name that is the block's attribute
    'y = getattr(self, f"re{\'fine\'}")(h)',      # an f-string starting as the attribute does
    'name = "refine"\n        y = getattr(self, name)(h)',  # no known prefix
    'y = getattr(self, "" + "refine")(h)',         # an empty prefix
], ids=["concat", "fstring", "name", "empty-prefix"])
def test_a_computed_getattr_that_could_name_the_block_keeps_its_in_place_write(probe):
    """Negative controls: the computed name could be ``refine``; the block is called on ``h``,
    which the caller reads again: the write into it is seen, the fix must change nothing."""
    source = REFINE.replace("PROBE", probe)
    _same_probe_results(source)
    statuses = [(f.code, f.status.value) for f in process_in_project(source, Settings()).findings
                if f.code == "IPF103"]
    assert statuses and all(status != "safe" for _, status in statuses), statuses


# ------------------------------------------------------- in-place writes through a view attribute
# `y.real` (`.imag`, `.T`, `.mT`, `.H`, `.mH`, `.data`) is a view of `y` each time it is read, no
# binding: `y.real = t` copies `t` into `y` (still in place), and `w = y.real = y.real.mul(2.0)`
# makes `w` a new tensor where it was a view of `y`.
VIEW_ATTRIBUTE = """\
import torch


def main():
    x = torch.randn(3, 3, dtype=torch.cfloat)
    y = x * 2
    WRITE
    y.add_(1)
    return [w, y]
"""
VIEW_WRITES = {
    "real-assigned": "w = y.real.mul_(2.0)",
    "imag-assigned": "w = y.imag.add_(1.0)",
    "real-statement": "y.real.mul_(2.0)\n    w = y.real",
    "T-assigned": "w = y.T.mul_(2.0)",
    "data-assigned": "w = y.data.mul_(2.0)",
}


@pytest.mark.parametrize("write", sorted(VIEW_WRITES))
def test_an_inplace_method_on_a_view_attribute_is_not_rebound_as_a_name(write):
    """The working program keeps what it computes under every rule's fixes (``--select ALL``),
    and the write into ``y.<view>`` gets no safe fix (before: ``w = y.real = y.real.mul(2.0)``,
    safe, and ``w`` no longer saw ``y.add_(1)``)."""
    source = VIEW_ATTRIBUTE.replace("WRITE", VIEW_WRITES[write])
    everything = Settings(select=("ALL",))
    fixed = fixed_source(source, everything, project=True)
    got, want = run_program(fixed), run_program(source)
    for g, w in zip(got, want):
        assert torch.equal(g, w), f"the safe fix changed a working program:\n{fixed}"
    line = VIEW_ATTRIBUTE.splitlines().index("    WRITE") + 1
    statuses = [(f.code, f.status.value, f.reason) for f in process_in_project(source, everything).findings
                if f.span.line == line]
    assert statuses and all(status != "safe" for _, status, _ in statuses), statuses


def test_an_inplace_method_on_a_tensor_attribute_named_like_a_view_is_still_fixed():
    """Negative control: ``self.T`` of a module (a buffer named ``T``) is an attribute like any
    other: ``self.T.mul_(2)`` keeps its usual rewrite (``self.T = self.T.mul(2)``)."""
    source = """\
import torch
import torch.nn as nn


class Temp(nn.Module):
    def __init__(self):
        super().__init__()
        self.T = torch.ones(3)

    def forward(self, x):
        self.T.mul_(2)
        return x * self.T
"""
    fixed = fixed_source(source, Settings(select=("ALL",)), project=True)
    assert "self.T = self.T.mul(2)" in fixed, fixed


# ------------------------------------------------------- the generated API table
@pytest.mark.parametrize("method, call", [
    ("norm", lambda x: x.norm(dim=1, keepdim=True)),
    ("stft", lambda x: x.flatten().stft(4, window=torch.ones(4), return_complex=True)),
])
def test_tensor_methods_defined_in_python_are_in_the_api_table(method, call):
    """``Tensor.norm`` and ``Tensor.stft`` live in ``torch/_tensor.py``, which no ``.pyi``
    lists: the generator now reads their returns (``torch.norm(self, ...)``), so the analysis
    knows ``x.norm(...)`` is a new tensor."""
    from codemod import torch_api

    x = torch.randn(4, 8)
    out = call(x)
    assert isinstance(out, torch.Tensor) and out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    assert method in torch_api.TENSOR_METHODS
    assert f"torch.{method}" in torch_api.TENSOR_FUNCTIONS
