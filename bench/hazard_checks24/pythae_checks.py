"""pythae 0.1.2 (pythae/models/pvae/pvae_utils.py:542 `cdf_r`): the proven finding of `inplacefix check` (stop 58,
fresh58, end of stop). pythae's Poincare VAE ships pvae's hyperbolic-radius CDF (pvae/distributions/
hyperbolic_radius.py:43, fresh57, real in the library's use): for dim > 2, `output = torch.exp(S1 - S2)` (:540; exp
saves its output) and then `output[zero_value_idx] = 0.0` (:542) writes it. `HyperbolicRadius.cdf(value)` calls
`cdf_r(value, self.scale, self.c, self.dim)`: with a scale that requires grad (a learned scale) and a value with a
zero, backward of the CDF raises: the library's own use. torch.where (out of place) runs. `cdf_r` is compiled alone
from the shipped file, with `rexpand` and `log_sum_exp_signs` from the same file."""

import _shim  # noqa: F401
import linecache
import math

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pythae/models/pvae/pvae_utils.py")
assert linecache.getline(PATH, 542).strip() == "output[zero_value_idx] = 0.0"


def run(shipped):
    ns = {"torch": torch, "math": math, "np": np}
    replace = {} if shipped else {542: "output = torch.where(zero_value_idx, torch.zeros_like(output), output)"}
    compile_alone(PATH, {"rexpand", "log_sum_exp_signs", "cdf_r"}, ns, replace=replace)

    def go():
        scale = torch.tensor([0.7], requires_grad=True)
        c = torch.tensor([1.0])
        value = torch.tensor([[0.0], [0.5], [1.2]])
        out = ns["cdf_r"](value, scale, c, 3)
        out.sum().backward()
        assert scale.grad is not None
    return go


attempt("pythae/models/pvae/pvae_utils.py:542:IPF104", "path", "cdf_r(value, scale, c, dim=3) as HyperbolicRadius.cdf "
        "calls it, a scale that requires grad, a value with a zero: the write of the zeros spoils exp's saved output, "
        "backward of the CDF raises", run(True))
attempt("pythae/models/pvae/pvae_utils.py:542:IPF104", "control", "torch.where: runs", run(False))
