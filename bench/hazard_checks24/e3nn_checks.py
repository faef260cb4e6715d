"""e3nn 0.6.0, nn/_normact.py:96: `norms[norms < self._eps_squared] = self._eps_squared`, reported
(before issue 24's changes) as writing a result `Norm.forward` saved via `sqrt`; with an epsilon
the Norm is built `squared=True` and returns the tensor product unrooted. Path: features requiring
grad, normalize=True (epsilon 1e-8), backward."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from e3nn import o3
from e3nn.nn import NormActivation

expect_line(NormActivation.forward, 96, "norms[norms < self._eps_squared] = self._eps_squared")


def run(normalize: bool):
    def go():
        torch.manual_seed(0)
        act = NormActivation(o3.Irreps("2x1o + 1x0e"), torch.sigmoid, normalize=normalize, bias=True)
        act(torch.randn(3, 7, requires_grad=True)).sum().backward()
    return go


attempt("e3nn/nn/_normact.py:96:IPF104", "path", "NormActivation(normalize=True, epsilon 1e-8), backward", run(True))
