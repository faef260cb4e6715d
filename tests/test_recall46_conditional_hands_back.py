"""A conditional expression handing the tensor itself back (issue 24, stop 46).

``out = out if self.norm is None else self.norm(out)``: on the path where the conditional
expression hands back ``out`` itself, the bindings that reached it still say what the tensor is,
as they do for ``if self.norm is not None: out = self.norm(out)`` (proven already). Written in the
public shape of an optional normalisation after a layer, not copied from a report.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, proven, raises_inplace, run_program


def _line(source: str, text: str) -> int:
    return source.splitlines().index(text) + 1
OPTIONAL = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.norm = None

        def forward(self, x):
            out = torch.sigmoid(self.lin(x))
            out = out if self.norm is None else self.norm(out)
            out += x
            return out


    def main():
        torch.manual_seed(0)
        block = Block()
        block(torch.randn(3, 4)).pow(2).sum().backward()
        return [block.lin.weight.grad]
""")
OPTIONAL_WRITE = "        out += x"
OPTIONAL_HAND = OPTIONAL.replace(OPTIONAL_WRITE, "        out = out + x")


@pytest.mark.parametrize("form", ["body", "orelse"])
def test_a_conditional_expression_handing_the_tensor_back_keeps_its_producer(form):
    source = OPTIONAL if form == "body" else OPTIONAL.replace(
        "out = out if self.norm is None else self.norm(out)", "out = self.norm(out) if self.norm is not None else out")
    assert raises_inplace(source)
    assert any(found == _line(source, OPTIONAL_WRITE) for _, found in proven(source)), proven(source)
    # the other branch's value is a call the analysis cannot type: the rewrite is unsafe, not safe
    fixed = fixed_source(source, Settings(unsafe_fixes=True), project=True)
    for g, w in zip(run_program(fixed), run_program(OPTIONAL_HAND), strict=True):
        assert torch.allclose(g, w), fixed


def test_a_conditional_expression_of_another_name_proves_nothing():
    source = OPTIONAL.replace("out = out if self.norm is None else self.norm(out)",
                              "out = x.clone() if self.norm is None else self.norm(out)")
    assert not raises_inplace(source)
    assert not any(found == _line(source, OPTIONAL_WRITE) for _, found in proven(source))
