"""A binding later in a loop reaches a write on the next turn only where the turn does not bind
the name again before the write (stop 45: avalanche 0.6.0's LaMAML, ``lamaml.py:142`` and
``lamaml_v2.py:149``: ``alpha_param = torch.ones(p.shape) * a; alpha_param[idx] = old;
alpha_param = nn.Parameter(alpha_param, requires_grad=True)`` in a loop over the parameters, the
write taken for one into the last turn's parameter: two false proven IPF105 findings).
``dataflow.reaching`` (``_past_the_turn``) drops those bindings. Programs written from the
pattern, each run with torch: the probes run and are not proven (the plain loop was not proven on
2bba8c4 either: a guard); the look-alikes (no rebinding at the top of the turn, or one in a branch
only) raise the leaf error and stay as they were (proven; possible)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project, proven, raises_inplace  # noqa: E402

LEAF = "a leaf Variable that requires grad is being used in an in-place operation"

GROWN = '''\
import torch
from torch import nn


class Learner:
    def __init__(self, model, alpha_init=0.1):
        self.model = model
        self.alpha_init = alpha_init
        self.alpha_params = nn.ParameterDict()
        for n, p in model.named_parameters():
            self.alpha_params[n] = nn.Parameter(torch.ones(p.shape) * alpha_init, requires_grad=True)

    def update(self):
        for n, p in self.model.named_parameters():
            if self.alpha_params[n].shape != p.shape:
                alpha_param = torch.ones(p.shape) * self.alpha_init
                idx = [slice(el) for el in self.alpha_params[n].shape]
                alpha_param[idx] = self.alpha_params[n].detach().clone()
                alpha_param = nn.Parameter(alpha_param, requires_grad=True)
                self.alpha_params[n] = alpha_param


def main():
    model = nn.Linear(3, 2)
    learner = Learner(model)
    model.weight = nn.Parameter(torch.randn(4, 3))
    model.bias = nn.Parameter(torch.randn(4))
    learner.update()
    return learner.alpha_params["weight"].shape
'''

PLAIN = '''\
import torch
from torch import nn


def main():
    made = []
    for k in range(3):
        w = torch.zeros(4)
        w[k] = 1.0
        w = nn.Parameter(w)
        made.append(w)
    return sum(m.sum() for m in made)
'''

PROBES = {"grown_parameters": GROWN, "plain_loop": PLAIN}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_write_after_the_turns_own_binding_is_not_into_the_last_turns_parameter(name):
    source = PROBES[name]
    assert not raises_inplace(source, "main", LEAF)
    assert proven(source) == []


NOT_REBOUND = '''\
import torch
from torch import nn


def main():
    w = nn.Parameter(torch.zeros(4))
    for k in range(3):
        w[k] = 1.0
        w = nn.Parameter(w.detach())
    return w
'''

REBOUND_IN_A_BRANCH = '''\
import torch
from torch import nn


def main():
    w = nn.Parameter(torch.zeros(4))
    for k in range(3):
        if k == 0:
            w = torch.zeros(4)
        w[k] = 1.0
        w = nn.Parameter(w.detach())
    return w
'''


def test_the_last_turns_parameter_written_raises_and_stays_proven():
    assert raises_inplace(NOT_REBOUND, "main", LEAF)
    assert ("IPF105", 8) in proven(NOT_REBOUND)


def test_a_rebinding_in_a_branch_only_keeps_the_last_turns_parameter_possible():
    # (2bba8c4 reports it possible, IPF204, not proven: several bindings reach the write)
    assert raises_inplace(REBOUND_IN_A_BRANCH, "main", LEAF)
    result = process_in_project(REBOUND_IN_A_BRANCH, Settings(select=("IPF1", "IPF2")))
    assert [(f.code, f.span.line) for f in result.findings] == [("IPF204", 10)]
