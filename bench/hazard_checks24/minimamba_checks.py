"""minimamba 1.0.1 (minimamba/s6.py:330 `S6._selective_scan_inference`): the proven finding of `inplacefix check`
(stop 55, fresh55, end of stop). `ssm_state.copy_(deltaA * ssm_state + deltaB_u)` writes the cached state that the
same line's `deltaA * ssm_state` saved for the gradient of `deltaA` (exp of the step size times `A = -exp(A_log)`,
both from parameters). The single-token decoding step runs with the layer's parameters, so decoding with grad on
(and differentiating the output) raises: real by this file's convention (eval with grad on, as resselt's inference
paths). `S6._selective_scan_inference` is compiled alone from the shipped file, called as `selective_scan` calls it
(dt from softplus, A from A_log, D a parameter)."""

import _shim  # noqa: F401
import linecache

import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("minimamba/s6.py")
LINE = "ssm_state.copy_(deltaA * ssm_state + deltaB_u)"
assert linecache.getline(PATH, 330).strip() == LINE


def run(control=False, no_grad=False):
    replace = {330: "ssm_state = deltaA * ssm_state + deltaB_u"} if control else {}
    ns = compile_alone(PATH, {"S6._selective_scan_inference"}, {"torch": torch}, replace=replace)

    def go():
        b, d, s = 2, 4, 3
        A_log = torch.nn.Parameter(torch.randn(d, s))
        D = torch.nn.Parameter(torch.ones(d))
        dt_raw = torch.nn.Parameter(torch.randn(b, 1, d))
        u, B, C, z = torch.randn(b, 1, d), torch.randn(b, 1, s), torch.randn(b, 1, s), torch.randn(b, 1, d)
        ssm_state = torch.zeros(b, d, s)
        with torch.set_grad_enabled(not no_grad):
            y = ns["_selective_scan_inference"](None, u, F.softplus(dt_raw), -torch.exp(A_log.float()), B, C, D, z,
                                                ssm_state)
        if y.requires_grad:
            y.sum().backward()
    return go


FID = "minimamba/s6.py:330:IPF103"
attempt(FID, "path", "one decoding step with parameters that require grad (A_log, D, the step size), backward of "
        "the output: raises", run())
attempt(FID, "control", "the same with :330 out of place (the state rebound): runs", run(control=True))
attempt(FID, "context", "under no_grad (generation): nothing to differentiate", run(no_grad=True))
