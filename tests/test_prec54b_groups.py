"""Stop 54 (prec54b): three false groups of the proven tier (bench/hazard_checks24/prec53b_probes.py,
prec53_probes.py), each a program that runs backward without the in-place error and must not be
proven, beside look-alikes that raise and stay proven:

- torch-parameter-no-grad (unsloth diffusion_rocm_compile.py:200): ``with torch.no_grad():`` on a
  ``torch`` the file does not bind to the module (the caller hands it in as a parameter), or on
  another object's ``no_grad``: grad is unknown under it, so a write there is not proven with grad
  on;
- attribute-operand-unknown (bioelectrics ionic/model.py:209): ``c * self._z`` where every
  assignment of ``self._z`` the class makes is a constant tensor (a property building
  ``torch.tensor([...])``): the product saves ``c`` for no gradient;
- imported-no-grad-helper (bert-score score.py:254, mergekit router.py:148): the tensor written is
  what a helper of another project file computes under ``torch.no_grad()``.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- torch-parameter-no-grad
FILL = '''\
import contextlib
import torch
from torch import nn


class Backend:
    no_grad = staticmethod(torch.no_grad)
    inference_mode = staticmethod(torch.inference_mode)
    set_grad_enabled = staticmethod(torch.set_grad_enabled)
    enable_grad = staticmethod(torch.enable_grad)
    zeros = staticmethod(torch.zeros)


def fill(torch, lin):
    with CONTEXT:
        for p in lin.parameters():
            p.copy_(torch.zeros(p.shape))  # MARK
    return lin


def main():
    lin = nn.Linear(3, 2)
    fill(HANDED, lin)
    return lin(torch.randn(4, 3)).sum().backward()
'''

UNSEEN_OFF = [
    ("torch.no_grad()", "torch"),
    ("torch.inference_mode()", "torch"),
    ("torch.set_grad_enabled(False)", "torch"),
    ("torch.no_grad()", "Backend()"),
]

SEEN_ON = [
    ("torch.enable_grad()", "torch"),
    ("torch.inference_mode(False)", "torch"),
    ("torch.set_grad_enabled(True)", "torch"),
    ("contextlib.nullcontext()", "torch"),
    ("torch.enable_grad()", "Backend()"),
]


@pytest.mark.parametrize("context,handed", UNSEEN_OFF)
def test_a_grad_off_context_not_resolved_to_torch_proves_no_write(context, handed):
    _safe(FILL.replace("CONTEXT", context).replace("HANDED", handed))


@pytest.mark.parametrize("context,handed", SEEN_ON)
def test_other_contexts_on_a_torch_parameter_stay_proven(context, handed):
    _real(FILL.replace("CONTEXT", context).replace("HANDED", handed), message="leaf Variable")


SAVED = '''\
import torch


def step(torch, x):
    y = x.exp()
    with torch.no_grad():
        y.add_(1)  # MARK
    return y


def main():
    x = torch.randn(3, requires_grad=True)
    y = step(torch, x)
    return x
'''


def test_a_write_under_an_unseen_no_grad_is_not_proven_either():
    # (the program never differentiates y: it runs; the point is that the unknown grad mode is
    # read as real torch's no_grad is, not as grad on)
    _safe(SAVED)
