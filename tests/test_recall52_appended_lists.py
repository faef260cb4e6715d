"""A list the function fills with ``append`` (``outs = []``, ``outs.append(w * i)`` in a loop,
then ``torch.stack(outs)``) holds what was appended: its elements require grad where every value
appended does, and none where none does. Both ``GradRequirement`` (views) and ``Constants``
(requires_grad) read the literal alone, ``[]``: no element, so "requires no grad" / "constant",
and the sigmoid of the stack saved nothing as far as they could tell (a miss), also where the
list was handed to a helper that appends what requires grad (an unsound "no"). Now a list
handed to a call, extended, set at an item or read in a nested scope is unknown; look-alikes
(detached values appended) stay unproven; every program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, proven, raises_inplace, run_program  # noqa: E402

_PROGRAM = """import torch


def fill(rows, w):
    rows.append(w * 2)


def main():
    w = torch.ones(3, requires_grad=True)
    outs = []
    for i in range(2):
        {append}
    y = torch.stack(outs)
    z = y.sigmoid()
    z.mul_(2)
    (z.sum() + w.sum()).backward()
    return w.grad
"""


def _source(append: str) -> str:
    return _PROGRAM.format(append=append.replace("\n", "\n        "))


def _line(source: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if "z.mul_(2)" in text)


@pytest.mark.parametrize("append", [
    "outs.append(w * (i + 1))",
    "h = torch.tanh(w)\nouts.append(h[:2] * i)",
    "if i:\n    outs.append(w + 1)\nelse:\n    outs.append(w.exp())",
])
def test_what_every_append_hands_requires_grad_makes_the_stack_require_grad(append):
    source = _source(append)
    assert raises_inplace(source)
    assert ("IPF103", _line(source)) in proven(source)


@pytest.mark.parametrize("append", [
    "outs.append(w.detach() * (i + 1))",  # nothing appended requires grad
    "outs.append(torch.ones(3) * i)",
])
def test_look_alikes_stay_unproven(append):
    source = _source(append)
    assert not raises_inplace(source)
    run_program(source)
    assert ("IPF103", _line(source)) not in proven(source)


def test_one_append_that_requires_no_grad_leaves_it_unknown():
    # element 0 requires grad, element 1 does not: "yes" would claim `outs[1]` requires grad
    source = _source("if i == 0:\n    outs.append(w * 2)\nelse:\n    outs.append(torch.ones(3))")
    assert raises_inplace(source)  # (the stack does require grad: one element does)
    assert ("IPF103", _line(source)) not in proven(source)  # not every element: no proof drawn


@pytest.mark.parametrize("append", [
    "fill(outs, w)",  # a call it is handed to appends what requires grad
    "outs.extend([w * 2])",
    "outs += [w * 2]",
    "rows = outs\nrows.append(w * 2)",  # another name for the list appends
])
def test_a_list_changed_otherwise_is_no_constant(append):
    """The literal alone said "constant": the sigmoid's save was not even a possible hazard."""
    source = _source(append)
    assert raises_inplace(source)
    settings = Settings(select=("IPF",))
    found = [(f.code, f.span.line) for f in process_in_project(source, settings).findings]
    assert ("IPF203", _line(source)) in found or ("IPF103", _line(source)) in found
