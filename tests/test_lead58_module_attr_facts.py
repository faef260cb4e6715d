"""What a module attribute holds when a forward calls it (stop 58, found by recall58 on main c403b0c).

Two false proofs, each with a program that runs backward cleanly:
- ``m.agg.act = nn.Identity()`` after construction replaces the ReLU ``__init__`` set: the module
  call ``self.act(x)`` must not be read as a ReLU (which saves its output) when the file sets that
  attribute through another receiver (``summaries.set_from_outside``).
- ``if plain: return`` in ``__init__`` before ``self.act = nn.Sigmoid()``: the assignment after a
  ``return`` that may run may not run, so ``Decided.final`` must not take it as what every instance
  holds (it left ``nn.Identity()``, which saves nothing).
Their look-alikes (no replacement; the return that every construction skips) raise and stay proven.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven, runs_unproven  # noqa: E402

_REPLACED = """import torch
import torch.nn as nn


class ConvAct(nn.Module):
    def __init__(self, c, use_act=True):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 1)
        self.act = nn.ReLU() if use_act else nn.Identity()

    def forward(self, x):
        x = self.conv(x)
        x = self.act(x)
        return x


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.agg = ConvAct(c)

    def forward(self, x):
        identity = x
        x = self.agg(x)
        x += identity  # MARK
        return x


def main():
    m = Block(4)
{replace}
    x = torch.randn(2, 4, 3, 3, requires_grad=True)
    m(x).sum().backward()
"""

_EARLY_RETURN = """import torch
import torch.nn as nn


class Unit(nn.Module):
    def __init__(self, d=4, plain={plain}):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.act = nn.Identity()
        if plain:
            return
        self.act = nn.Sigmoid()

    def forward(self, x):
        h = self.lin(x)
        h = self.act(h)
        h += 1  # MARK
        return h


def main():
    m = Unit()
    m(torch.randn(3, 4)).sum().backward()
"""


def test_module_replaced_from_outside_is_not_read_as_its_init_value():
    runs_unproven(_REPLACED.format(replace="    m.agg.act = nn.Identity()"))


def test_module_left_as_init_set_it_stays_proven():
    raises_proven(_REPLACED.format(replace="    m.eval()"))


def test_assignment_after_an_early_return_that_may_run_is_not_final():
    runs_unproven(_EARLY_RETURN.format(plain="True"))


def test_early_return_every_construction_skips_leaves_the_proof():
    raises_proven(_EARLY_RETURN.format(plain="False"))
