"""ESMFold `EsmFoldTriangleMultiplicativeUpdate._inference_forward` (transformers 5.24.0,
modeling_esmfold.py:662-664): in its nested `compute_projection_helper`, `p = linear_g(pair)`,
`p.sigmoid_()` (SigmoidBackward saves its result, p itself), then `p *= linear_p(pair)` and
`p *= mask`.

Path: the module built from a tiny config, z computed from a tensor requiring grad, grad on,
`inplace_safe=True` (the "inference-only" branch its docstring names), stopped right after the
flagged line ran the first time, backward from `p`. Control: stopped right after `p.sigmoid_()`
(line 662: the write not yet run). Line 664 is not isolated from 663 (663 runs first).
Context: the whole module with `inplace_safe=False` (the default: nothing in transformers passes
True; every caller hands down its own default False) runs backward.
Run: /work/venvs/real/bin/python bench/hazard_checks/esmfold_inference_forward.py
"""

from types import SimpleNamespace

import torch
from _check import attempt, expect_line, stop_after
from transformers.models.esm import modeling_esmfold

UPDATE = modeling_esmfold.EsmFoldTriangleMultiplicativeUpdate
HELPER = SimpleNamespace(__code__=next(c for c in UPDATE._inference_forward.__code__.co_consts
                                       if getattr(c, "co_name", "") == "compute_projection_helper"))


def module_call(inplace_safe):
    torch.manual_seed(0)
    module = UPDATE(SimpleNamespace(pairwise_state_dim=8)).train()
    z = torch.randn(1, 5, 5, 8, requires_grad=True) * 1.0
    return module(z, mask=torch.ones(1, 5, 5), inplace_safe=inplace_safe, _inplace_chunk_size=2)


def stopped_after(line):
    def run():
        p = stop_after(HELPER, line, lambda: module_call(True))["p"]
        p.sum().backward()
    return run


def whole(inplace_safe):
    def run():
        module_call(inplace_safe).sum().backward()
    return run


expect_line(HELPER, 662, "p.sigmoid_()")
for line, code in ((663, "p *= linear_p(pair)"), (664, "p *= mask")):
    finding = f"transformers/models/esm/modeling_esmfold.py:{line}:IPF101"
    expect_line(HELPER, line, code)
    attempt(finding, "path", "_inference_forward (inplace_safe=True), z requires grad, grad on, stopped after "
            f"line {line}, backward from p", stopped_after(line))
    attempt(finding, "control", "the same stopped after line 662 (p.sigmoid_() only)", stopped_after(662))
    attempt(finding, "context", "the module with inplace_safe=False (the default), backward", whole(False))
