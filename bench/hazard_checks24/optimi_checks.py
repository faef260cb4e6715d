"""torch-optimi 0.3.3 (optimi/adam.py, `_single_param_adam`): the four proven findings of `inplacefix check` on
main d1b4fd6 (stop 51, label51c): `exp_avg_sq.sqrt().add_(eps)` (lines 386 and 396: sqrt saves its output, add_
writes it), and on the Kahan arm (bf16 params) `grad.copy_(param.detach())` (389) and `grad.sub_(param)` (393),
both writing `grad`, which `exp_avg_sq.mul_(beta2_hat).addcmul_(grad, grad, ...)` (381) saved.
The function is compiled alone from the shipped file (optimi's package import works, but the function is the
unit); some statements are replaced by `return` to stop after the flagged line (so one line is isolated from the
next ones). Stand-ins: `grad` a non-leaf requiring grad (`w * 1`), the moments plain zeros (they come to require
grad through `lerp_`/`addcmul_`), param and kahan_comp plain tensors; loss = the sum of what the stopped function
wrote. Context: optimi's optimizers call it under no_grad on `p.grad` (nothing requires grad): real by this file's
convention (an input requiring grad raises), like fastai's optimizer.py:192 and pytorch-optimizer's helpers."""

import _shim  # noqa: F401
import linecache
import os

import torch
from torch import Tensor
from _check import attempt
from _prec51b import PK2, compile_alone

SRC = os.path.join(PK2, "optimi/adam.py")
L = {n: linecache.getline(SRC, n).strip() for n in (381, 386, 389, 390, 393, 396)}
assert L[381] == "exp_avg_sq.mul_(beta2_hat).addcmul_(grad, grad, value=beta2_comp)"
assert L[386] == "kahan_comp.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(eps), value=-lr)"
assert L[389] == "grad.copy_(param.detach())"
assert L[390] == "param.add_(kahan_comp)"
assert L[393] == "kahan_comp.add_(grad.sub_(param))"
assert L[396] == "param.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(eps), value=-lr)"
OUT386 = "kahan_comp.addcdiv_(exp_avg, exp_avg_sq.sqrt().add(eps), value=-lr)"
OUT396 = "param.addcdiv_(exp_avg, exp_avg_sq.sqrt().add(eps), value=-lr)"


def run(replace, kahan):
    def go():
        ns = compile_alone(SRC, {"_single_param_adam"}, {"torch": torch, "Tensor": Tensor}, replace=replace)
        dtype = torch.bfloat16 if kahan else torch.float32
        w = torch.randn(5, dtype=dtype, requires_grad=True)
        grad = w * 1
        param, exp_avg, exp_avg_sq = torch.randn(5, dtype=dtype), torch.zeros(5, dtype=dtype), torch.zeros(5, dtype=dtype)
        kahan_comp = torch.zeros(5, dtype=dtype) if kahan else None
        ns["_single_param_adam"](param, grad, exp_avg, exp_avg_sq, kahan_comp, lr=1e-3, beta1_comp=0.1,
                                 beta2_hat=0.99, beta2_comp=0.01, weight_decay=0.0, eps=1e-8, decouple_wd=True,
                                 kahan_sum=kahan)
        loss = (kahan_comp.float().sum() if kahan else param.sum()) + exp_avg_sq.float().sum()
        loss.backward()
    return go


F386, F389, F393, F396 = ("optimi/adam.py:%d:IPF103" % n for n in (386, 389, 393, 396))
attempt(F386, "path", "Kahan arm (bf16), grad requiring grad, stopped after line 386, backward", run({389: "return"}, True))
attempt(F386, "control", "line 386 as .add(eps), stopped after it", run({386: OUT386, 389: "return"}, True))
attempt(F389, "path", "Kahan arm, line 386 out of place, stopped after line 389, backward",
        run({386: OUT386, 390: "return"}, True))
attempt(F389, "control", "as the path with line 389 as `grad = param.detach().clone()`",
        run({386: OUT386, 389: "grad = param.detach().clone()", 390: "return"}, True))
attempt(F393, "path", "Kahan arm, 386 out of place, 389 skipped (`pass`), to the end, backward",
        run({386: OUT386, 389: "pass"}, True))
attempt(F393, "path", "Kahan arm as shipped (all three writes), backward", run({}, True))
attempt(F393, "control", "as the first path with line 393 as `kahan_comp.add_(grad - param)`",
        run({386: OUT386, 389: "pass", 393: "kahan_comp.add_(grad - param)"}, True))
attempt(F396, "path", "fp32 arm, grad requiring grad, backward from param", run({}, False))
attempt(F396, "control", "line 396 as .add(eps)", run({396: OUT396}, False))
