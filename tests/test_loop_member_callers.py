"""A forward that writes into its input, run by a loop over a module list (stop 36, issue 24
recall): ``for block in self.blocks: h = block(h)`` runs every member's ``forward``; where every
member is one class, the first turn hands that ``forward`` the caller's ``h``, so a write into its
parameter modifies what the caller saved (``h = torch.relu(...)`` before the loop): a proven
hazard, as for a direct call.

Programs written from scratch; torch runs each (the hazard raises at backward, the look-alikes run)
and the look-alikes stay unproven: members of two classes (the first returns a fresh tensor, so the
writer never sees the caller's), and nothing saved before the loop.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward

PROGRAM = """\
import torch
import torch.nn as nn


class Shift(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.offset = nn.Parameter(torch.full((d,), 0.1))

    def forward(self, h):
        h += self.offset
        return h


class Halve(nn.Module):
    def forward(self, h):
        return h * 0.5


class Stack(nn.Module):
    def __init__(self, d, n):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.blocks = nn.ModuleList()
        for _ in range(n):
            self.blocks.append(Shift(d))

    def forward(self, x):
        h = torch.tanh(self.proj(x))
        for block in self.blocks:
            h = block(h)
        return h


def grads():
    torch.manual_seed(0)
    net = Stack(4, 2)
    net(torch.randn(3, 4)).pow(2).sum().backward()
    return {n: p.grad for n, p in net.named_parameters()}
"""
WRITE = 11  # h += self.offset
LOOK_ALIKES = {
    "a_fresh_member_first": PROGRAM.replace(
        "        for _ in range(n):\n            self.blocks.append(Shift(d))\n",
        "        self.blocks.append(Halve())\n        for _ in range(n):\n            self.blocks.append(Shift(d))\n"),
    "nothing_saved_before": PROGRAM.replace("h = torch.tanh(self.proj(x))", "h = self.proj(x) + 1.0"),
}


def _run(source: str):
    space: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), space)
    return space["grads"]()


def _proven(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def test_the_write_in_a_loop_member_breaks_backward():
    assert PROGRAM.splitlines()[WRITE - 1].strip() == "h += self.offset"
    assert raises_at_backward(lambda: _run(PROGRAM))
    assert ("IPF101", WRITE) in _proven(PROGRAM)


def test_look_alikes_run_and_stay_unproven():
    for name, source in LOOK_ALIKES.items():
        assert source != PROGRAM, name
        assert all(g is not None for g in _run(source).values()), name
        assert ("IPF101", WRITE) not in _proven(source), name
