"""cpd-pytorch 1.0.0 (cpd_pytorch/utils.py:48 `squared_distances`, cpd_pytorch/emregistration.py:107
`_posterior_blocks`): the proven findings of `inplacefix check` (stop 56, fresh56, end of stop).

- utils.py:48: on the CPU, `torch.cdist(A, B, ...).square_()` squares cdist's output in place, which cdist saves
  for backward. Point sets that require grad, backward of the squared distances: raises; `.square()` runs.
- emregistration.py:107: the E-step block `P = squared_distances(...).mul_(scale).exp_()` (:103) ends in exp_,
  which saves its result, and `P.div_(denominator)` writes it. Target points X that require grad, backward of the
  posterior blocks: raises; `P / denominator` runs. Isolated from :48 by an out-of-place squared_distances (the
  form of its GPU branch, `(A - B).square()` summed over coordinates).

Real by this file's convention (point sets that require grad; the library's EM registration runs on data without
grad). Both functions are compiled alone from the shipped files (block_rows with squared_distances)."""

import _shim  # noqa: F401
import linecache
import math

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

UTILS = src("cpd_pytorch/utils.py")
EM = src("cpd_pytorch/emregistration.py")
assert linecache.getline(UTILS, 48).strip() == 'return torch.cdist(A, B, compute_mode="donot_use_mm_for_euclid_dist").square_()'
assert linecache.getline(EM, 107).strip() == "yield start, stop, P.div_(denominator)"
torch.set_default_dtype(torch.float64)


def squared(control=False):
    ns = compile_alone(UTILS, {"squared_distances"}, {"torch": torch}, replace={
        48: 'return torch.cdist(A, B, compute_mode="donot_use_mm_for_euclid_dist").square()'} if control else {})

    def go():
        torch.manual_seed(0)
        a = torch.randn(5, 3, requires_grad=True)
        ns["squared_distances"](a, torch.randn(4, 3)).sum().backward()
        assert a.grad is not None
    return go


def oop_squared(A, B):
    return (A[..., :, None, :] - B[..., None, :, :]).square().sum(-1)


def posterior(control=False):
    ns = compile_alone(UTILS, {"block_rows"}, {"torch": torch})
    ns.update({"math": math, "torch": torch, "squared_distances": oop_squared,
               "_DENOMINATOR_FLOOR": float(np.finfo(np.float64).eps)})
    compile_alone(EM, {"_posterior_blocks"}, ns,
                  replace={107: "yield start, stop, P / denominator"} if control else {})

    def go():
        torch.manual_seed(0)
        X = torch.randn(8, 3, requires_grad=True)
        TY = torch.randn(6, 3)
        sigma2 = torch.tensor(1.5)
        total = sum(P.sum() * (start + 1) for start, stop, P in
                    ns["_posterior_blocks"](X, TY, sigma2, 0.1, 24))  # blocks of 4 columns
        total.backward()
        assert X.grad is not None
    return go


FID = "cpd_pytorch/utils.py:48:IPF103"
attempt(FID, "path", "squared_distances on the CPU with a point set that requires grad, backward: raises", squared())
attempt(FID, "control", "the same with .square() out of place: runs", squared(control=True))
FID = "cpd_pytorch/emregistration.py:107:IPF103"
attempt(FID, "path", "posterior blocks (w 0.1, two blocks) for target points that require grad, squared_distances "
        "out of place, backward: raises", posterior())
attempt(FID, "control", "the same with :107 out of place: runs", posterior(control=True))
