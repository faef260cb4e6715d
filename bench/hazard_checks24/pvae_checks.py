"""pvae 0.2 (pvae/distributions/hyperbolic_radius.py:43 `cdf_r`): the proven finding of `inplacefix check` (stop 57,
fresh57, end of stop). For dim > 2 the radius CDF is `output = torch.exp(S1 - S2)` (:41; exp saves its output) and
then `output[zero_value_idx] = 0.` (:43) writes it. `HyperbolicRadius.cdf(value)` calls `cdf_r(value, self.scale,
self.c, self.dim)`: with the distribution's scale requiring grad (a learned scale, as the Poincare VAE's
posterior has) and a value with a zero, backward of the CDF raises: the library's own use (a distribution's cdf is
differentiable in its parameters). torch.where (out of place) runs. `cdf_r` is compiled alone from the shipped file,
with `rexpand` and `log_sum_exp_signs` from pvae/utils.py."""

import _shim  # noqa: F401
import linecache
import math

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pvae/distributions/hyperbolic_radius.py")
UTILS = src("pvae/utils.py")
assert linecache.getline(PATH, 43).strip() == "output[zero_value_idx] = 0."


def run(shipped):
    ns = {"torch": torch, "math": math}
    compile_alone(UTILS, {"rexpand", "log_sum_exp_signs"}, ns)
    replace = {} if shipped else {43: "output = torch.where(zero_value_idx, torch.zeros_like(output), output)"}
    compile_alone(PATH, {"cdf_r"}, ns, replace=replace)

    def go():
        scale = torch.tensor([0.7], requires_grad=True)
        c = torch.tensor([1.0])
        value = torch.tensor([[0.0], [0.5], [1.2]])
        out = ns["cdf_r"](value, scale, c, 3)
        out.sum().backward()
        assert scale.grad is not None
    return go


attempt("pvae/distributions/hyperbolic_radius.py:43:IPF104", "path", "cdf_r(value, scale, c, dim=3) as "
        "HyperbolicRadius.cdf calls it, a scale that requires grad, a value with a zero: the write of the zeros "
        "spoils exp's saved output, backward of the CDF raises", run(True))
attempt("pvae/distributions/hyperbolic_radius.py:43:IPF104", "control", "torch.where: runs", run(False))
