"""Issue 24 (default `fix`, fix24c): the result of a module of this file whose ``forward`` returns
a tensor on every path, the last statement being an ``if``/``else`` of returns
(``if self.act: return F.relu(y)`` / ``else: return y``), is a tensor.

Before, only a ``forward`` whose last statement is a ``return`` counted: ``x = self.block(x)``
then ``x += shortcut`` was of unknown type, and its fix unsafe (``unknown-type``) although the
block returns a tensor whichever way it goes. A ``forward`` with a path that falls off its end
(returns ``None``) stays unknown as a kind; a write there whose own hazard shows the tensor is
fixed, the None path failing alike (stop 46). Each program is written from the pattern, run with
torch: the original raises at backward, the fixed program's gradients equal an out-of-place control.
"""

from __future__ import annotations


import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import fixed_source, run_program

BLOCK = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, act):
        super().__init__()
        self.fc = nn.Linear(d, d)
        self.act = act

    def forward(self, x):
        y = self.fc(x)
        if self.act:
            return F.relu(y)
        else:
            return y


class Path(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.side = Block(d, False)
        self.main = Block(d, True)
        self.n = n

    def forward(self, x):
        for _ in range(self.n):
            shortcut = self.side(x)
            x = self.main(x)
            x += shortcut
            x = torch.sigmoid(x)
        return x


def main():
    torch.manual_seed(0)
    net = Path(4, 3)
    net(torch.randn(2, 4)).sum().backward()
    return [p.grad for p in net.parameters()]
"""
WRITE = "            x += shortcut\n"
CONTROL = BLOCK.replace(WRITE, "            x = x + shortcut\n")
# a path that falls off the end of forward: the call may return None, its kind stays unknown
FALLS_OFF = BLOCK.replace("        else:\n            return y\n", "        elif self.act is None:\n            return y\n")


def run(source: str):
    return run_program(source)


def finding_at_write(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    line = source[:source.index(WRITE)].count("\n") + 1
    return [(f.status.value if f.status else None, f.reason) for f in result.findings if f.span.line == line]


def fixed(source: str) -> str:
    return fixed_source(source)


def test_block_with_if_else_returns_gives_a_tensor_and_a_safe_fix():
    try:
        run(BLOCK)
        raised = False
    except RuntimeError as error:
        raised = "modified by an inplace operation" in str(error)
    assert raised  # the hazard is real: relu's saved output is written
    assert finding_at_write(BLOCK) == [("safe", None)]
    result = fixed(BLOCK)
    assert "x = x + shortcut" in result and "x += shortcut" not in result
    for got, want in zip(run(result), run(CONTROL)):
        assert torch.equal(got, want)
    assert fixed(result) == result  # a fixed point


def test_a_forward_that_may_return_none_is_fixed_where_none_fails_alike():
    """Stop 46's decision (the strict xfail of stop 45 closed): the write's own hazard shows the
    value written is the tensor a forward returned (relu's saved output); where the forward falls
    off its end instead, `x += shortcut` and `x = x + shortcut` both raise TypeError on None, so
    the rewrite changes no program. The fix is safe; both programs fail alike on the None path."""
    assert finding_at_write(FALLS_OFF) == [("safe", None)]
    result = fixed(FALLS_OFF)
    assert "x = x + shortcut" in result and "x += shortcut" not in result
    for source in (FALLS_OFF, result):  # side = Block(d, False) falls off its end: shortcut is None
        with pytest.raises(TypeError):
            run(source)
