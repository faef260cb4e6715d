"""auto-gptq 0.7.1 (quantization/quantizer.py:72, :74; `Quantizer.find_params`): the proven findings of
`inplacefix check` on main f57423a (stop 52, fresh52b). With `sym` (the default), `xmax =
torch.maximum(torch.abs(xmin), xmax)` (line 69; abs saves xmin), then `xmin[tmp] = -xmax[tmp]` (:72, when some
row minimum is negative) and `xmin[tmp] = -1` (:74, always; an all-false mask still bumps the version) write
xmin. The class and the `quantize` function are compiled alone from the shipped file (the package imports its
CUDA extensions). Weights requiring grad raise when the scale is backpropagated: real by this file's
convention; GPTQ calls find_params on `layer.weight.data.clone()`, without grad (context). :72 is run with :74
out of place, and :74 on all-positive weights (then :72's `if torch.any(tmp)` arm does not run)."""

import _shim  # noqa: F401
import linecache

import torch
import torch.nn as nn
from _check import attempt
from _fresh52b import compile_alone, src

SRC = src("auto_gptq/quantization/quantizer.py")
assert linecache.getline(SRC, 72).strip() == "xmin[tmp] = -xmax[tmp]"
assert linecache.getline(SRC, 74).strip() == "xmin[tmp] = -1"
OUT72 = "xmin = torch.where(tmp, -xmax, xmin)"
OUT74 = "xmin = torch.where(tmp, torch.full_like(xmin, -1), xmin)"


def run(replace, weights, grad=True):
    def go():
        ns = compile_alone(SRC, {"Quantizer", "quantize"}, {"torch": torch, "nn": nn}, replace=replace)
        q = ns["Quantizer"]()
        q.configure(4, perchannel=True, sym=True)
        w = weights.clone().requires_grad_(grad)
        q.find_params(w, weight=True)
        if grad:
            q.scale.sum().backward()
    return go


torch.manual_seed(0)
MIXED = torch.randn(4, 8)
POSITIVE = torch.rand(4, 8) + 0.1
F72 = "auto_gptq/quantization/quantizer.py:72:IPF104"
F74 = "auto_gptq/quantization/quantizer.py:74:IPF104"
attempt(F72, "path", "find_params(weights requiring grad, some negative; sym), :74 out of place, backward from the "
        "scale", run({74: OUT74}, MIXED))
attempt(F72, "control", ":72 and :74 out of place", run({72: OUT72, 74: OUT74}, MIXED))
attempt(F74, "path", "find_params(all-positive weights requiring grad; sym), :72's arm not taken, backward from "
        "the scale", run({}, POSITIVE))
attempt(F74, "control", "as path, :74 out of place", run({74: OUT74}, POSITIVE))
attempt(F72, "context", "find_params on weights without grad (GPTQ's `layer.weight.data.clone()`), as shipped: runs",
        run({}, MIXED, grad=False))
