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
