"""nadir 0.1.1 (nadir/adadelta.py:56 `Adadelta.update`): the proven finding of `inplacefix check` (stop 54,
fresh54b, end of stop). `delta = m.add(eps).sqrt_().div_(denom).mul_(grad)`: `sqrt_` saves its result for backward
and the chained `div_` writes it. nadir's `DoEOptimizer.step` runs `update` under `torch.no_grad()` on `p.grad.data`
and zero-initialised state: real by this file's convention (an accumulated delta that requires grad, as fastai's
`rms_prop_step` and the other optimiser helpers before). `Adadelta.update` and `Adam.adaptivity` are compiled alone
from the shipped files (`@amsgrad` as the identity: amsgrad off, nadir's default; stand-in self with the
`AdadeltaConfig` defaults); the run stops right after :56 (`return delta`)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("nadir/adadelta.py")
ADAM = src("nadir/adam.py")
assert linecache.getline(PATH, 56).strip() == "delta = m.add(eps).sqrt_().div_(denom).mul_(grad)"


def run(control=False, no_grad=False):
    replace = {58: "return delta"}
    if control:
        replace[56] = "delta = m.add(eps).sqrt_().div(denom).mul_(grad)"
    ns = compile_alone(PATH, {"Adadelta.update"}, {"torch": torch}, replace=replace)
    ad = compile_alone(ADAM, {"Adam.adaptivity"}, {"torch": torch, "amsgrad": lambda f: f})

    def go():
        cfg = types.SimpleNamespace(lr=1, rho=0.9, beta_2=0.9, eps=1e-6, bias_correction=False, amsgrad=False)
        me = types.SimpleNamespace(config=cfg)
        me.adaptivity = lambda state, grad: ad["adaptivity"](me, state, grad)
        leaf = torch.rand(4, 3, requires_grad=True)
        state = {"step": 0, "adaptivity": torch.zeros(4, 3), "acc_delta": leaf * 1.0}
        param = torch.nn.Parameter(torch.randn(4, 3))
        with torch.set_grad_enabled(not no_grad):
            delta = ns["update"](me, state, {"lr": 1.0}, torch.randn(4, 3), param)
        if delta.requires_grad:
            delta.sum().backward()
    return go


FID = "nadir/adadelta.py:56:IPF103"
attempt(FID, "path", "Adadelta.update up to :56 (return delta), an accumulated delta that requires grad: raises", run())
attempt(FID, "control", "the same with the `div_` that writes sqrt_'s result out of place: runs", run(control=True))
attempt(FID, "context", "as nadir's step runs it (under no_grad): nothing to differentiate", run(no_grad=True))
