"""A constructor argument handed down a chain of functions that each call the next from several
sites (avalanche 0.6.0's benchmarks/utils): what the argument may hold was asked once per path
through the call sites, the width to the power of the depth (134 CPU s for those 23 files at
stop 48). ``Decided.values`` remembers each expression's answer at a depth: the same answer, asked
a bounded number of times. The program raises (run with torch) and stays proven."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.analysis import summaries  # noqa: E402
from tests.programs import proven, raises_inplace  # noqa: E402


def _chain(depth: int, width: int) -> str:
    lines = ["import torch", "import torch.nn as nn", "", "",
             "class Block(nn.Module):",
             "    def __init__(self, act=None):",
             "        super().__init__()",
             "        self.lin = nn.Linear(3, 3)",
             "        self.act = nn.ReLU() if act is not None else None",
             "",
             "    def forward(self, x):",
             "        x = self.lin(x)",
             "        if self.act is not None:",
             "            x = self.act(x)",
             "        x += 1",
             "        return x",
             "", "",
             "def h0(act):", "    return Block(act)", ""]
    for i in range(1, depth + 1):
        lines += ["", f"def h{i}(act):"] + [f"    h{i - 1}(act)"] * width + [f"    return h{i - 1}(act)", ""]
    lines += ["", "def main():", f"    block = h{depth}('relu')", "    x = torch.randn(2, 3)",
              "    block(x).sum().backward()", ""]
    return "\n".join(lines)


def test_a_constructor_argument_down_a_wide_chain_is_asked_a_bounded_number_of_times(monkeypatch):
    calls = []
    original = summaries.Decided.values

    def counted(self, expr, depth):
        calls.append(depth)
        return original(self, expr, depth)

    monkeypatch.setattr(summaries.Decided, "values", counted)
    source = _chain(6, 4)
    assert raises_inplace(source, "main")
    assert ("IPF101", 15) in proven(source)  # `x += 1` on the ReLU's output: the chain decides `self.act`
    assert len(calls) <= 500  # asked once per path: 5 ** 6 paths, tens of thousands of calls


def test_a_short_chain_decides_the_same():
    assert ("IPF101", 15) in proven(_chain(1, 2))
