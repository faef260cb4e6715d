"""auto-esn 0.0.7 (auto_esn/esn/reservoir/initialization.py:184 `loopify`): the proven finding of `inplacefix check`
(stop 54, fresh54b, end of stop). `weight = weight * zero_diag_mask` (:180) saves the mask for the weight's
gradient, then `zero_diag_mask[sampling, sampling] = 1` writes it. auto-esn uses it to initialise fixed reservoir
weights (no grad): real by this file's convention (a weight that requires grad). `loopify` is compiled alone from
the shipped file (the module imports networkx; nothing of auto-esn is imported)."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("auto_esn/esn/reservoir/initialization.py")
assert linecache.getline(PATH, 184).strip() == "zero_diag_mask[sampling, sampling] = 1"
assert linecache.getline(PATH, 180).strip() == "weight = weight * zero_diag_mask"


def run(control=False, grad=True):
    replace = {184: "zero_diag_mask = zero_diag_mask.index_put((sampling, sampling), torch.tensor(1.0))"} \
        if control else {}
    ns = compile_alone(PATH, {"loopify"}, {"torch": torch, "Tensor": torch.Tensor}, replace=replace)

    def go():
        w = torch.randn(6, 6, requires_grad=grad)
        out = ns["loopify"](w, 0.5)
        if grad:
            out.sum().backward()
    return go


FID = "auto_esn/esn/reservoir/initialization.py:184:IPF104"
attempt(FID, "path", "loopify(weight, 0.5) on a weight that requires grad: raises", run())
attempt(FID, "control", "the same with :184 out of place (index_put): runs", run(control=True))
attempt(FID, "context", "as auto-esn initialises a reservoir (no grad): nothing to differentiate", run(grad=False))
