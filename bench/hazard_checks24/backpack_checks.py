"""backpack-for-pytorch 1.7.1: the one proven finding of `inplacefix check` (eafcde2, stop 47):
`BCELossWithLogitsDerivatives._sqrt_hessian` (core/derivatives/bcewithlogitsloss.py:157) takes
`sqrt_H = (sigma * (1 - sigma)).sqrt()` and, for reduction "mean", writes `sqrt_H /= ...`: sqrt
saved its result. The path calls the method with grad on and the module's stored input requiring
grad, then backward; the control has line 157 out of place. Context: backpack's own extensions call
it from a backward hook (`loss.backward()` inside `with backpack(DiagGGNExact())`), where grad mode
is off, so the library's usual run records nothing."""

import _shim  # noqa: F401

import torch
from torch import nn
from _check import attempt, expect_line
from _rewrite import rewritten, replaced
from backpack import backpack, extend
from backpack.core.derivatives import bcewithlogitsloss
from backpack.extensions import DiagGGNExact

FINDING = "backpack/core/derivatives/bcewithlogitsloss.py:157:IPF101"
Deriv = bcewithlogitsloss.BCELossWithLogitsDerivatives
method = Deriv._sqrt_hessian
expect_line(method, 157, "sqrt_H /= sqrt(self._get_mean_normalization(module.input0))")


def direct():
    torch.manual_seed(0)
    module = nn.BCEWithLogitsLoss()
    module.input0 = torch.randn(4, 1, requires_grad=True)
    module.input1 = torch.rand(4, 1).round()
    Deriv()._sqrt_hessian(module, None, None, None).sum().backward()


attempt(FINDING, "path", "_sqrt_hessian(input0 requiring grad, reduction mean), backward", direct)
with replaced(Deriv, "_sqrt_hessian", rewritten(method, [
        ("sqrt_H /= sqrt(", "sqrt_H = sqrt_H / sqrt(")])):
    attempt(FINDING, "control", "line 157 out of place", direct)


def library():
    torch.manual_seed(0)
    model = extend(nn.Sequential(nn.Linear(3, 1)))
    loss = extend(nn.BCEWithLogitsLoss())(model(torch.randn(4, 3)), torch.rand(4, 1).round())
    with backpack(DiagGGNExact()):
        loss.backward()
    assert model[0].weight.diag_ggn_exact is not None


attempt(FINDING, "context", "DiagGGNExact over a Linear + BCEWithLogitsLoss (the backward hook, grad off)", library)
