"""A parameter used as an index is integral (stop 36, issue 24 precision): where a helper hands a
parameter, as it came in, to the index operand of ``index_select``/``gather``/``take`` on every
normal return, the call shows it integral, so what an op that also takes integral tensors saved of
it (``torch.max(idx)``) needs no grad and a later write into the caller's tensor breaks nothing.

Programs written from scratch. Each runs with torch: the silent ones run backward, the negative
controls (a float reaches the op through a conversion, in a branch only, or after a ``return``)
raise, and stay proven hazards.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward


def _proven(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def _defined(source: str) -> dict:
    namespace: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _line_of(source: str, start: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip().startswith(start))


TEMPLATE = """\
import torch


def pick(table, rows, flag=True):
    top = torch.max(rows)
USE
    return out * top


def run(table, ids, flag=True):
    rows = ids.clone()
    out = pick(table, rows, flag)
    rows -= 1
    return out, rows
"""
# The index use, as a top-level statement of the helper's body (the parameter shown integral).
INTEGRAL_USES = {
    "index_select": "    out = table.index_select(0, (rows + 0).flatten())",
    "gather": "    out = table.gather(0, (rows * 1).unsqueeze(1).expand(-1, table.size(1)))",
    "torch_index_select": "    flat = (rows - 0).view(-1)\n    out = torch.index_select(table, 0, flat)",
}
# (The index is a fresh tensor each time: index_select and gather save their index, so writing
# into a view of it would break backward; that write is no subject here.)
# Look-alikes that show nothing: a float reaches the op converted, in a branch only (a statement's or
# a comprehension's), after a return.
FLOAT_USES = {
    "converted": "    out = table.index_select(0, rows.long())",
    "in_a_branch": "    out = table * 1.0\n    if flag:\n        out = table.index_select(0, rows)",
    "in_a_comprehension": "    out = table * 1.0\n    picked = [table.index_select(0, rows) for _ in range(int(flag))]",
    "after_a_return": "    if not flag:\n        return table * top\n    out = table.index_select(0, rows + 0)",
}


@pytest.mark.parametrize("use", sorted(INTEGRAL_USES))
def test_a_parameter_used_as_an_index_is_not_proven_saved(use):
    source = TEMPLATE.replace("USE", INTEGRAL_USES[use])
    run = _defined(source)["run"]

    def go():
        table = torch.randn(4, 3, requires_grad=True)
        out, _ = run(table, torch.tensor([0, 2, 3]))
        out.sum().backward()

    assert not raises_at_backward(go)
    assert not [f for f in _proven(source) if f[1] == _line_of(source, "rows -= 1")]


@pytest.mark.parametrize("use", sorted(FLOAT_USES))
def test_a_float_parameter_not_shown_integral_stays_proven(use):
    source = TEMPLATE.replace("USE", FLOAT_USES[use])
    run = _defined(source)["run"]

    def go():
        table = torch.randn(4, 3, requires_grad=True)
        rows = torch.tensor([0.0, 2.0, 3.0], requires_grad=True) * 1.0
        out, rows = run(table, rows, flag=False)
        (out.sum() + rows.sum()).backward()

    assert raises_at_backward(go)
    assert ("IPF101", _line_of(source, "rows -= 1")) in _proven(source)
