"""Stop 47 (prec47): a flag read off ``self`` that no code the analysis sees sets (``self.inplace`` of a
subclass of ``nn.Dropout``: the base class's own attribute, False unless a construction hands
``inplace=True``) is unknown, not True: the write it switches on is at most possible.

Found on darts 0.48.1 (``darts/utils/torch.py:44``, labelled false by running: MonteCarloDropout's
``F.dropout(input, self.p, self.mc_dropout_enabled, self.inplace)`` after a ReLU runs backward).
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import run_program

PROGRAM = '''\
import torch
import torch.nn as nn
import torch.nn.functional as F


class MCDropout(nn.Dropout):
    enabled = False

    def forward(self, input):
        return F.dropout(input, self.p, self.enabled or self.training, self.inplace)


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU()
        self.drop = MCDropout(0.5)

    def forward(self, x):
        g = self.act(self.fc(x))
        return self.drop(g)


def main():
    torch.manual_seed(0)
    model = FeedForward()
    x = torch.randn(3, 4, requires_grad=True)
    model(x).sum().backward()
    return [x.grad]
'''
# the look-alikes whose flag the analysis sees set: in the class's own __init__, or in a base class of the file
RAISING = {
    "own": PROGRAM.replace("    enabled = False\n", "    enabled = False\n\n    def __init__(self, p):\n"
                           "        super().__init__(p)\n        self.inplace = True\n"),
    "base": PROGRAM.replace("class MCDropout(nn.Dropout):", "class Base(nn.Dropout):\n    def __init__(self, p):\n"
                            "        super().__init__(p)\n        self.inplace = True\n\n\nclass MCDropout(Base):"),
}


def proven(source: str) -> list:
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None
    return [(f.code, f.span.line) for f in result.findings]


def possible(source: str) -> list:
    result = process_source(source.encode(), "case.py", Settings(select=("ALL",)))
    assert result.error is None
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF2")]


def test_an_inherited_flag_is_not_proven_true():
    grads = run_program(PROGRAM)  # runs backward: nn.Dropout's inplace is False
    assert torch.isfinite(grads[0]).all()
    assert proven(PROGRAM) == []
    assert possible(PROGRAM) == [("IPF202", 10)]  # unknown, not gone: a construction may hand inplace=True


@pytest.mark.parametrize("where", sorted(RAISING))
def test_a_flag_set_where_the_analysis_sees_stays_proven(where: str):
    source = RAISING[where]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(source)
    line = next(i for i, text in enumerate(source.splitlines(), 1) if "F.dropout" in text)
    assert proven(source) == [("IPF102", line)]
