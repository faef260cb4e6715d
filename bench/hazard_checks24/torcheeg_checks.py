"""torcheeg 1.1.3 (torcheeg/transforms/hooks/after_hook.py:282 `after_hook_linear_dynamical_system`): the proven
finding of `inplacefix check` (stop 54, fresh54b, end of stop). The tensor branch smooths a trial with a Kalman
filter: `K[:, 0] * (X[:, 0] - C * u0)` (:277) and `K[:, i] * (X[:, i] - ...)` (:283-284) save a column of the gain
matrix K for the data's gradient, and `K[:, i] = ...` (:282) writes K on the next step. torcheeg runs the hook on the
transformed chunks of a trial (dataset preprocessing, no grad): real by this file's convention (chunks that require
grad). The function is compiled alone from the shipped file (nothing of torcheeg imported)."""

import _shim  # noqa: F401
import linecache
from typing import List, Union

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("torcheeg/transforms/hooks/after_hook.py")
assert linecache.getline(PATH, 282).strip() == "K[:, i] = P[:, i - 1] * C / (C * P[:, i - 1] * C + sigma)"


def run(control=False, grad=True):
    replace = {282: "K = torch.cat([K[:, :i], (P[:, i - 1] * C / (C * P[:, i - 1] * C + sigma))[:, None], "
                    "K[:, i + 1:]], dim=1)"} if control else {}
    ns = compile_alone(PATH, {"after_hook_linear_dynamical_system"},
                       {"torch": torch, "np": np, "List": List, "Union": Union}, replace=replace)

    def go():
        chunks = [torch.randn(4, 8, requires_grad=grad) for _ in range(3)]  # 3 chunks, 4 electrodes x 8 samples
        out = ns["after_hook_linear_dynamical_system"](chunks)
        if grad:
            sum(o.sum() for o in out).backward()
    return go


FID = "torcheeg/transforms/hooks/after_hook.py:282:IPF104"
attempt(FID, "path", "three chunks of a trial that require grad: raises", run())
attempt(FID, "control", "the same with :282 out of place (torch.cat): runs", run(control=True))
attempt(FID, "context", "as torcheeg's preprocessing runs it (no grad): nothing to differentiate", run(grad=False))
