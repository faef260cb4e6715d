"""torchvine 0.3.0 (torchvine/tll_fit.py:124, :125, :138, :144 `ace`): the proven findings of `inplacefix check`
(stop 57, fresh57, end of stop). ACE's transformed ranks `phi` are written column by column: `phi[:, 0] = phi[:, 0] *
w` (:124, :125 with weights) and, in the fixed 15 x 3 loop, `phi[:, 1] = phi_1 / s1` (:138), `phi[:, 0] = phi_0 / s0`
(:144); the products `phi[:, k] * w` save the column views of phi. phi comes from argsort ranks (integers), so only
weights that require grad can carry grad into it; and then every path runs `_cef(phi[:, 0] * w, ...)` ->
`_win_smoother`, whose `torch.cumsum(xp, dim=0, out=csum[1:])` refuses an operand that requires grad in the forward
("functions with out=... arguments don't support automatic differentiation"). So ace either carries no grad (data
that requires grad: the ranks are integers) or stops in the forward before any backward: no use raises the in-place
error. False (out-call-aborts-forward, through a helper: fresh57_probes.py). The context rewrites the cumsum out of
place, to show what the writes would do without the abort. The functions are compiled alone from the shipped file."""

import _shim  # noqa: F401
import linecache
import math

import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("torchvine/tll_fit.py")
for n, text in ((124, "phi[:, 0] = phi[:, 0] * w"), (125, "phi[:, 1] = phi[:, 1] * w"), (138, "phi[:, 1] = phi_1 / s1"),
                (144, "phi[:, 0] = phi_0 / s0")):
    assert linecache.getline(PATH, n).strip() == text, n
assert linecache.getline(PATH, 77).strip() == "torch.cumsum(xp, dim=0, out=csum[1:])"
FRESH = {124: "v = phi[:, 0] * w; phi = phi.clone(); phi[:, 0] = v", 125: "v = phi[:, 1] * w; phi = phi.clone(); phi[:, 1] = v",
         138: "v = phi_1 / s1; phi = phi.clone(); phi[:, 1] = v", 144: "v = phi_0 / s0; phi = phi.clone(); phi[:, 0] = v"}


def run(shipped, weights_grad=True, data_grad=False, cumsum_out_of_place=False):
    replace = {n: code for n, code in FRESH.items() if n != shipped}
    if cumsum_out_of_place:
        replace[77] = "csum = torch.cat([csum[:1], torch.cumsum(xp, dim=0)])"
    ns = compile_alone(PATH, {"ace", "_cef", "_win_smoother"}, {"torch": torch, "F": F, "math": math},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        x = torch.rand(20, 2, requires_grad=data_grad)
        data = x * 1 if data_grad else x
        w0 = torch.rand(20, requires_grad=weights_grad)
        w = w0 * 1 if weights_grad else w0
        phi = ns["ace"](data, weights=w)
        if phi.requires_grad:
            phi.sum().backward()
    return go


for n in (124, 125, 138, 144):
    fid = f"torchvine/tll_fit.py:{n}:IPF104"
    attempt(fid, "path", f"ace(data, weights=w), weights that require grad, :{n} as shipped (the other column writes "
            "on a fresh copy): the first smoothing's cumsum(out=...) refuses the operand that carries the weights' "
            "grad, in the forward", run(n), expected=(RuntimeError,))
    attempt(fid, "path", f"ace(data, weights=w), data that requires grad, plain weights, :{n} as shipped: the ranks "
            "are integers, nothing of phi requires grad: runs", run(n, weights_grad=False, data_grad=True))
    attempt(fid, "context", f"the cumsum rewritten out of place (not as shipped), weights that require grad, :{n} as "
            "shipped: what the write would do without the abort", run(n, cumsum_out_of_place=True))
    attempt(fid, "control", "all four on fresh copies, the cumsum out of place: runs",
            run(None, cumsum_out_of_place=True))
