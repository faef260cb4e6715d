"""Leaves that require grad held in a list or dict the function builds (``ws = [torch.zeros(3,
requires_grad=True) for _ in range(2)]``, ``state = {"w": nn.Parameter(...)}``) and written by
element (``ws[0].add_(1)``): the write raises "a leaf Variable that requires grad is being used
in an in-place operation". Each program is run with torch; the look-alikes that run (grad off,
an element replaced rather than written, elements that require no grad) keep no proven finding."""

from __future__ import annotations

import pytest

from codemod.config import Settings
from tests.programs import assert_same_results, process_in_project, raises_inplace, run_program

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation"


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


LISTED = """\
import torch


def fit(xs, ys, steps):
    ws = [torch.zeros(3, requires_grad=True) for _ in range(2)]
    ws[1].fill_(0.1)
    for _ in range(steps):
        loss = ((xs @ ws[0] + ws[1].sum() - ys) ** 2).mean()
        loss.backward()
    return [w.detach() for w in ws]


def main():
    torch.manual_seed(0)
    return fit(torch.randn(5, 3), torch.randn(5), 2)
"""

KEYED = """\
import torch
import torch.nn as nn


def make_state():
    state = {"gain": nn.Parameter(torch.ones(4)), "shift": nn.Parameter(torch.zeros(4))}
    state["gain"][0] = 2.0
    return state


def main():
    state = make_state()
    return [state["gain"].detach()]
"""


@pytest.mark.parametrize("source", [LISTED, KEYED], ids=["list-fill_", "dict-setitem"])
def test_a_write_into_a_leaf_held_in_a_container_is_proven(source):
    assert raises_inplace(source, message=(_LEAF, "a view of a leaf Variable"))
    assert [code for code, _ in _proven(source)] == ["IPF105"], _proven(source)


RUNNING = {
    "grad-off": LISTED.replace("    ws[1].fill_(0.1)\n", "    with torch.no_grad():\n        ws[1].fill_(0.1)\n"),
    "element-replaced": LISTED.replace("ws[1].fill_(0.1)", "ws[1] = torch.full((3,), 0.1, requires_grad=True)"),
    "no-grad-elements": KEYED.replace("nn.Parameter(torch.ones(4))", "nn.Parameter(torch.ones(4), requires_grad=False)")
                             .replace("nn.Parameter(torch.zeros(4))", "nn.Parameter(torch.zeros(4), requires_grad=False)"),
}


@pytest.mark.parametrize("source", RUNNING.values(), ids=RUNNING.keys())
def test_look_alikes_that_run_have_no_proven_finding(source):
    run_program(source)
    assert not _proven(source), _proven(source)
    assert_same_results(source)
