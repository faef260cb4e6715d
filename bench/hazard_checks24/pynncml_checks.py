"""pynncml 0.3.7 (pynncml/single_sml_methods/kalman_filter.py:37, :40 `KalmanFilter.forward`): the proven findings
of `inplacefix check` (stop 56, fresh56, end of stop). The filter preallocates its state columns and writes them per
time step: `Pminus[:, k] = P[:, k - 1] + Q` (:37) and `K[:, k] = Pminus[:, k] / (Pminus[:, k] + R)` (:40), while
the previous step's division saved the column view `Pminus[:, k - 1]` (of the same tensor) and `K[:, k] * (...)`
(:41) saved `K[:, k]`. Input data that requires grad (R is its variance; the filter applied to a network's output
inside training), backward of the filtered series: raises. Each line isolated by the other written on a fresh copy
(value first, then `X = X.clone(); X[:, k] = value`), the control both so. Real by this file's convention (the
library's `apply_kalman_filter_*` filter measured attenuation without grad). `KalmanFilter` is compiled alone from the
shipped file."""

import _shim  # noqa: F401
import linecache

import numpy as np
import torch
from torch import nn
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pynncml/single_sml_methods/kalman_filter.py")
assert linecache.getline(PATH, 37).strip() == "Pminus[:, k] = P[:, k - 1] + Q"
assert linecache.getline(PATH, 40).strip() == "K[:, k] = Pminus[:, k] / (Pminus[:, k] + R)"
FRESH = {37: "_v = P[:, k - 1] + Q; Pminus = Pminus.clone(); Pminus[:, k] = _v",
         40: "_v = Pminus[:, k] / (Pminus[:, k] + R); K = K.clone(); K[:, k] = _v"}


def run(shipped):
    ns = compile_alone(PATH, {"KalmanFilter"}, {"torch": torch, "nn": nn, "np": np},
                       replace={n: code for n, code in FRESH.items() if n != shipped})

    def go():
        torch.manual_seed(0)
        x = torch.randn(1, 6, requires_grad=True)  # one series: with B > 1 `Pminus[:, k] + R` broadcasts to [B, B]
        ns["KalmanFilter"](r_scale=1e-3, q=1e-5)(x * 1.0).sum().backward()
        assert x.grad is not None
    return go


for n in (37, 40):
    FID = f"pynncml/single_sml_methods/kalman_filter.py:{n}:IPF104"
    attempt(FID, "path", f"KalmanFilter(1e-3, 1e-5) on a [1, 6] series that requires grad, :{n} as shipped, the "
            "other on fresh copies: raises", run(n))
    attempt(FID, "control", "both on fresh copies: runs", run(None))
