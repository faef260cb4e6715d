"""swyft 0.4.5 (swyft/lightning/core.py:415 `_calc_mass`): the proven finding of `inplacefix check` (stop 57, fresh57,
end of stop). The coverage helper takes `p = torch.exp(r - r.max(axis=0).values)` (:414; exp saves its output) and
normalises it in place, `p /= p.sum(axis=0)` (:415). With log-ratios r that require grad, backward of the mass
raises; `p = p / p.sum(axis=0)` runs. Real by this file's convention: swyft computes coverage masses from the
network's log-ratios after training (no grad is taken of them). `_calc_mass` is compiled alone from the shipped
file."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("swyft/lightning/core.py")
assert linecache.getline(PATH, 415).strip() == "p /= p.sum(axis=0)"


def run(shipped):
    replace = {} if shipped else {415: "p = p / p.sum(axis=0)"}
    ns = compile_alone(PATH, {"_calc_mass"}, {"torch": torch}, replace=replace)

    def go():
        torch.manual_seed(0)
        logits = torch.randn(6, 3, requires_grad=True)
        r = logits * 1  # log-ratios of the network
        r0 = torch.randn(3)
        ns["_calc_mass"](r0, r).sum().backward()
        assert logits.grad is not None
    return go


attempt("swyft/lightning/core.py:415:IPF101", "path", "_calc_mass(r0, r), log-ratios r that require grad: `p /= "
        "p.sum(...)` writes exp's saved output, backward of the mass raises", run(True))
attempt("swyft/lightning/core.py:415:IPF101", "control", "out of place: runs", run(False))
