"""fastai 2.8.12: the two proven findings of `inplacefix check` (main at ec70a2c, stop 36), both
in optimizer step functions of `fastai/optimizer.py`: `rms_prop_step` (line 192,
`denom = sqr_avg.sqrt().add_(eps)`: sqrt saves its result) and `radam_step` (line 257,
`denom += eps` after `denom = (sqr_avg/debias2).sqrt()`). The path runs each step with a squared
gradient average that requires grad, stopped right after the flagged line, and calls backward
through `denom`; the control the same with the line made out of place; the context how fastai's
`Optimizer` runs them (the average comes from `p.grad.data`: nothing requires grad, and fastai
does not turn grad off around its steps).

The package imports need matplotlib (not installed for this torch); the functions checked use only
torch and math, so they are run from the installed file's own source (`functions_from`: names and
line numbers kept), with `F` and `math` set (the file has them from a star import)."""

import importlib.util
import math

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line, stop_after
from _rewrite import functions_from, rewritten

PATH = str(importlib.util.find_spec("fastai").submodule_search_locations[0]) + "/optimizer.py"
LIB = functions_from(PATH, ["debias", "rms_prop_step", "radam_step"])
LIB["F"], LIB["math"] = torch.nn.functional, math
RMS = "fastai/optimizer.py:192:IPF103"
RADAM = "fastai/optimizer.py:257:IPF101"
expect_line(LIB["rms_prop_step"], 192, "denom = sqr_avg.sqrt().add_(eps)")
expect_line(LIB["radam_step"], 257, "if eps: denom += eps")


def step(name, line, grad, edits=(), **hyper):
    """Run the step on a parameter whose squared-gradient average requires grad (``grad``) or is
    made as fastai makes it (from ``p.grad.data``); with grad, stop after ``line`` and backward
    through ``denom``."""
    def run():
        torch.manual_seed(0)
        p = torch.nn.Parameter(torch.randn(4, 3))
        p.grad = torch.randn(4, 3)
        if grad:
            raw = torch.rand(4, 3, requires_grad=True)
            sqr_avg = raw * 1.0
        else:
            sqr_avg = torch.zeros_like(p.grad.data).addcmul_(p.grad.data, p.grad.data, value=0.01)
        function = rewritten(LIB[name], edits) if edits else LIB[name]
        args = dict(p=p, lr=0.1, sqr_avg=sqr_avg, grad_avg=p.grad.data.clone(), **hyper)
        if not grad:
            function(**args)
            return
        local = stop_after(function, line, lambda: function(**args))
        local["denom"].sum().backward()
    return run


RADAM_HYPER = dict(mom=0.9, step=100, sqr_mom=0.99, eps=1e-5, beta=0.)
attempt(RMS, "path", "rms_prop_step with sqr_avg requiring grad, stopped after line 192, backward through denom",
        step("rms_prop_step", 192, True, eps=1e-8))
attempt(RMS, "control", "the same with `.add(eps)` (out of place)",
        step("rms_prop_step", 192, True, [("sqr_avg.sqrt().add_(eps)", "sqr_avg.sqrt().add(eps)")], eps=1e-8))
attempt(RMS, "context", "as fastai's Optimizer runs it: sqr_avg from p.grad.data (no grad), grad on",
        step("rms_prop_step", 192, False, eps=1e-8))
attempt(RADAM, "path", "radam_step (step 100: r > 5) with sqr_avg requiring grad, stopped after line 257, backward",
        step("radam_step", 257, True, **RADAM_HYPER))
attempt(RADAM, "control", "the same with `denom = denom + eps` (out of place)",
        step("radam_step", 257, True, [("if eps: denom += eps", "if eps: denom = denom + eps")], **RADAM_HYPER))
attempt(RADAM, "context", "as fastai's Optimizer runs it: sqr_avg from p.grad.data (no grad), grad on",
        step("radam_step", 257, False, **RADAM_HYPER))
