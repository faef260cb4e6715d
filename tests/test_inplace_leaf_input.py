"""Issue 24 (family B, stB40): an ``inplace=True`` activation run on a leaf that requires grad.

``self.act = nn.ReLU(inplace=True)`` called on ``self.weight`` (an ``nn.Parameter``), or
``F.relu(w, inplace=True)`` on a tensor made with ``requires_grad=True``: with grad on, PyTorch
raises "a leaf Variable that requires grad is being used in an in-place operation" at the call.
IPF002 only said the module runs in place (possible tier); the leaf fact (``Leaves.origin``,
known) makes it IPF102, proven. Its fix, ``inplace=False``, keeps the rule's safety decision
(safe here: no call site discards the result or reads the input again).

Programs written from the pattern (learned fusion weights kept non-negative by a ReLU, as in
BiFPN-style fusion), run with torch: the original raises, ``--unsafe-fixes``' program runs and
gives the out-of-place program's gradients; the look-alikes (a non-leaf input, grad off, a
frozen parameter, a plain tensor) work and stay silent.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

FUSE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Fuse(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(2)WEIGHT_ARGS)
        self.act = nn.ReLU(inplace=True)

    def forward(self, a, b):
        CALL
        w = w / (w.sum() + 1e-4)
        return w[0] * a + w[1] * b


def main():
    torch.manual_seed(0)
    fuse = Fuse()
    a, b = torch.randn(3, requires_grad=True), torch.randn(3)
    fuse(a, b).sum().backward()
    return [a.grad] + [p.grad for p in fuse.parameters() if p.grad is not None]
"""
CALLS = {
    "module": "w = self.act(self.weight)",
    "functional": "w = F.relu(self.weight, inplace=True)",
}
LEAF_LEAK = "leaf Variable that requires grad is being used in an in-place operation"


def _program(call: str, weight_args: str = "") -> str:
    return FUSE.replace("CALL", call).replace("WEIGHT_ARGS", weight_args)


def _findings(source: str, select=None):
    settings = Settings(select=select) if select else Settings()
    return [(f.code, f.status.value, f.reason) for f in process_in_project(source, settings).findings]


@pytest.mark.parametrize("call", sorted(CALLS))
def test_an_inplace_activation_on_a_parameter_is_proven(call):
    """Before: IPF002/IPF202 (possible); after: IPF102 in the default check, safe; the fixed
    program runs and computes the out-of-place program's gradients."""
    source = _program(CALLS[call])
    assert raises_inplace(source, message=LEAF_LEAK)
    found = _findings(source)
    assert ("IPF102", "safe", None) in found, found
    fixed = fixed_source(source, project=True)
    control = _program(CALLS[call].replace("inplace=True", "inplace=False")).replace(
        "nn.ReLU(inplace=True)", "nn.ReLU(inplace=False)")
    got, want = run_program(fixed), run_program(control)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert torch.allclose(g, w), fixed


LOOK_ALIKES = {
    # the input is computed from the parameter: no leaf
    "non-leaf": (CALLS["functional"].replace("self.weight,", "self.weight * 1.0,"), ""),
    # the parameter requires no grad
    "frozen": (CALLS["functional"], ", requires_grad=False"),
    # grad off around the call
    "no-grad": ("with torch.no_grad():\n            w = F.relu(self.weight.clone(), inplace=True)", ""),
}


@pytest.mark.parametrize("case", sorted(LOOK_ALIKES))
def test_a_working_look_alike_gets_no_leaf_finding(case):
    call, weight_args = LOOK_ALIKES[case]
    source = _program(call, weight_args)
    run_program(source)  # works
    assert not any(code == "IPF102" for code, _, _ in _findings(source, ("ALL",)))
    assert not any(code == "IPF102" for code, _, _ in _findings(source))


COUNTER = """\
import torch
import torch.nn as nn


class Count(nn.Module):
    def __init__(self):
        super().__init__()
        self.steps = nn.Parameter(torch.zeros(1)FLAG)
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        self.steps.add_(1)
        return self.lin(x) * self.steps


def main():
    torch.manual_seed(0)
    m = Count()
    m(torch.randn(3, 2)).sum().backward()
    return [m.steps.detach().clone(), m.lin.weight.grad]
"""


@pytest.mark.parametrize("flag", [", requires_grad=False", ", False"])
def test_a_parameter_made_without_grad_is_no_leaf_that_requires_grad(flag):
    """``nn.Parameter(t, requires_grad=False)``, a step counter: the program works, and the
    default check no longer reports IPF105 ("PyTorch raises ...", proven) on its update."""
    source = COUNTER.replace("FLAG", flag)
    run_program(source)
    assert not any(code == "IPF105" for code, _, _ in _findings(source))


def test_a_parameter_that_requires_grad_keeps_its_leaf_finding():
    """The control: the same counter made as a plain ``nn.Parameter`` raises, and stays IPF105."""
    source = COUNTER.replace("FLAG", "")
    assert raises_inplace(source, message=LEAF_LEAK)
    assert any(code == "IPF105" for code, _, _ in _findings(source))
