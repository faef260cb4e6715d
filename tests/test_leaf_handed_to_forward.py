"""A tensor made a leaf that requires grad by ``.requires_grad_()`` (``torch.randn(4, 3)
.requires_grad_()``, ``x.detach().requires_grad_()``) and handed to a function or a module's
``forward`` that writes into its input: the write raises "a leaf Variable that requires grad is
being used in an in-place operation". ``requires_grad_()`` makes a leaf only of a tensor that
did not require grad: on ``(w * 2)`` it changes nothing, so that one stays unproven. Each program
is run with torch."""

from __future__ import annotations

import pytest

from codemod.config import Settings
from tests.programs import assert_same_results, process_in_project, raises_inplace, run_program

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


PROGRAM = """\
import torch
import torch.nn as nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(3, 1)

    def forward(self, feats):
        feats *= 0.5
        return self.head(feats)


def main():
    torch.manual_seed(0)
    model = Scaler()
    INPUT
    out = model(inp)
    out.sum().backward()
    return [out.detach(), model.head.weight.grad]
"""

RAISING = {
    "factory": "inp = torch.randn(4, 3).requires_grad_()",
    "detached": "inp = torch.ones(4, 3).detach().requires_grad_(True)",
}


@pytest.mark.parametrize("made", RAISING.values(), ids=RAISING.keys())
def test_a_leaf_made_by_requires_grad_and_handed_to_forward_is_proven(made):
    source = PROGRAM.replace("INPUT", made)
    assert raises_inplace(source, message=_LEAF)
    assert [code for code, _ in _proven(source)] == ["IPF101"], _proven(source)


RUNNING = {
    "already-requires-grad": "w = torch.ones(4, 3, requires_grad=True)\n    inp = (w * 2).requires_grad_()",
    "switched-off": "inp = torch.randn(4, 3).requires_grad_(False)",
    "grad-off-at-the-call": "inp = torch.randn(4, 3).requires_grad_()\n    with torch.no_grad():\n"
                            "        model(inp.clone())\n    inp = inp.detach()",
}


@pytest.mark.parametrize("made", RUNNING.values(), ids=RUNNING.keys())
def test_look_alikes_that_run_have_no_proven_finding(made):
    source = PROGRAM.replace("INPUT", made)
    run_program(source)
    assert not _proven(source), _proven(source)
    assert_same_results(source)
