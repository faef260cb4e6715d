"""mermaid 0.3.2 (mermaid/spline_interpolation.py:406, :408 `SplineInterpolation_ND_BCXYZ._compute_interpolation_weights`):
the proven findings of `inplacefix check` (stop 57, fresh57, end of stop). For spline order 5 the B-spline weights
take `w2 = w * w` and `weight[5] = (1.0 / 120.0) * w * w2 * w2` (:405: the products save w2 and w), then write
both in place: `w2 -= w` (:406) and `w -= 1.0 / 2.0` (:408; `w * w` at :404 saved w). With coordinates x that require
grad (a map being registered), backward of the weights raises; real by this file's convention (the class's own
forward hands the weights to PerformSplineInterpolationHelper, a legacy autograd Function with a non-static forward
that PyTorch 2 refuses, so the weights are run here as the method computes them). Each line is isolated (the other
write out of place); the control has both out of place. The method is compiled alone from the shipped file with a
stand-in self (n = 5) and MyTensor/MyLongTensor as torch.FloatTensor/LongTensor (data_wrapper's CPU choice)."""

import _shim  # noqa: F401
import linecache
import types

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("mermaid/spline_interpolation.py")
assert linecache.getline(PATH, 406).strip() == "w2 -= w"
assert linecache.getline(PATH, 408).strip() == "w -= 1.0 / 2.0"
OFF = {406: "w2 = w2 - w", 408: "w = w - 1.0 / 2.0"}


def run(shipped):
    replace = {n: code for n, code in OFF.items() if n != shipped}
    ns = compile_alone(PATH, {"SplineInterpolation_ND_BCXYZ._compute_interpolation_weights"},
                       {"torch": torch, "np": np, "MyTensor": torch.FloatTensor, "MyLongTensor": torch.LongTensor},
                       replace=replace)
    self = types.SimpleNamespace(n=5)

    def go():
        torch.manual_seed(0)
        phi = torch.rand(2, 2, 5, 6, requires_grad=True)
        x = phi * 4.0  # map coordinates in i,j format
        index, weight = ns["_compute_interpolation_weights"](self, x)
        weight.sum().backward()
        assert phi.grad is not None
    return go


for n in (406, 408):
    attempt(f"mermaid/spline_interpolation.py:{n}:IPF101", "path", f"order-5 weights of a 2-D map that requires grad, "
            f":{n} as shipped and the other write out of place: the write spoils what `* w2`/`w * w` saved, backward "
            "of the weights raises", run(n))
    attempt(f"mermaid/spline_interpolation.py:{n}:IPF101", "control", "both out of place: runs", run(None))
