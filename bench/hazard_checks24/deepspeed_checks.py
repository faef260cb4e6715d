"""deepspeed 0.19.8 (the pure-torch fallbacks of the NPU and SUPA op builders, each shipped twice: deepspeed/ops/
op_builder/... and the top-level op_builder/...): the proven findings of `inplacefix check` (stop 58, fresh58, end of
stop).
- npu/fused_lamb.py:59 and supa/fused_lamb.py:48 (`lamb`, eps_mode 1): `denom = exp_avg_sq.sqrt().add_(eps)` writes
  sqrt's output, which sqrt saves. With a gradient that requires grad (a create_graph backward), `addcmul_(g, g)`
  makes exp_avg_sq require grad, and the returned `lamb_coeff` (clamped ||p|| / ||exp_avg / denom||) reaches the
  sqrt: its backward raises. DeepSpeed never differentiates its optimiser step: real by this file's convention
  (inputs that require grad), like pytorch-optimizer's step helpers (stop 45). `exp_avg_sq.sqrt() + eps` runs.
- supa/fused_adam.py:55 (`multi_tensor_adam`, mode 1): `v.mul_(beta2).addcmul_(g, g, ...)` writes v, and the check
  says g was saved by that addcmul_. g is `tensor_lists[0][i].float()` and v is `tensor_lists[3][i]`: DeepSpeed's
  four lists (grads, params, exp_avgs, exp_avg_sqs) hold distinct tensors, so the write of v never touches g, with
  or without grad anywhere. The check reads two elements of one container parameter (`tensor_lists[0][i]` and
  `tensor_lists[3][i]`) as one tensor. False (container-elements-read-as-one: fresh58_probes.py). The context passes
  the grads list as the exp_avg_sqs list too (not a use): then the write spoils what addcmul_ saved.
The functions are compiled alone (the staticmethods as plain functions) from the shipped files, both copies."""

import _shim  # noqa: F401
import linecache
import math

import torch
from _check import attempt
from _fresh53 import compile_alone, src

LAMBS = [("deepspeed/ops/op_builder/npu/fused_lamb.py", "NPUFusedLamb", 59),
         ("op_builder/npu/fused_lamb.py", "NPUFusedLamb", 59),
         ("deepspeed/ops/op_builder/supa/fused_lamb.py", "SUPAFusedLamb", 48),
         ("op_builder/supa/fused_lamb.py", "SUPAFusedLamb", 48)]
ADAMS = ["deepspeed/ops/op_builder/supa/fused_adam.py", "op_builder/supa/fused_adam.py"]
for rel, _, line in LAMBS:
    assert linecache.getline(src(rel), line).strip() == "denom = exp_avg_sq.sqrt().add_(eps)", rel
for rel in ADAMS:
    assert linecache.getline(src(rel), 55).strip() == "v.mul_(beta2).addcmul_(g, g, value=1.0 - beta2)", rel


def run_lamb(rel, cls, line, shipped):
    replace = {} if shipped else {line: "denom = exp_avg_sq.sqrt() + eps"}
    ns = compile_alone(src(rel), {f"{cls}.lamb"}, {"torch": torch, "math": math}, replace=replace)

    def go():
        torch.manual_seed(0)
        w = torch.randn(8, requires_grad=True)
        p = torch.randn(8)
        grad = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)[0]  # a create_graph gradient
        coeff = ns["lamb"](p, torch.empty(0), torch.zeros(8), torch.zeros(8), grad, 1e-3, 0.9, 0.999, 10.0, 0.01,
                           1e-8, 1.0, 1, 1, True, 0.01)
        coeff.backward()
        assert w.grad is not None
    return go


def run_adam(rel, alias=False):
    ns = compile_alone(src(rel), {"SUPAFusedAdam.multi_tensor_adam"}, {"torch": torch, "math": math,
                                                                        "_has_kernel": False})

    def go():
        torch.manual_seed(0)
        w = torch.randn(2, 8, requires_grad=True)
        gg = torch.autograd.grad((w ** 3).sum(), w, create_graph=True)[0]
        grads = [gg[i] * 1 for i in range(2)]
        params = [torch.randn(8) for _ in range(2)]
        ms, vs = [torch.zeros(8) for _ in range(2)], [torch.zeros(8) for _ in range(2)]
        lists = [grads, params, ms, grads if alias else vs]
        ns["multi_tensor_adam"](2048, torch.zeros(1), lists, 1e-3, 0.9, 0.999, 1e-8, 1, 1, True, 0.01)
        (sum(v.sum() for v in lists[3]) + sum(m.sum() for m in ms)).backward()
        assert w.grad is not None
    return go


for rel, cls, line in LAMBS:
    fid = f"{rel}:{line}:IPF103"
    attempt(fid, "path", f"{cls}.lamb(..., eps_mode=1) with a create_graph gradient: exp_avg_sq requires grad, "
            "sqrt's saved output is written by add_, backward of the returned lamb_coeff raises",
            run_lamb(rel, cls, line, True))
    attempt(fid, "control", "exp_avg_sq.sqrt() + eps: runs", run_lamb(rel, cls, line, False))
for rel in ADAMS:
    fid = f"{rel}:55:IPF103"
    attempt(fid, "path", "SUPAFusedAdam.multi_tensor_adam(mode=1) with DeepSpeed's four lists, create_graph "
            "gradients (g and v require grad): backward of the states runs", run_adam(rel))
    attempt(fid, "context", "the grads list passed as exp_avg_sqs too (not a use): v is g, the write spoils what "
            "addcmul_ saved", run_adam(rel, alias=True))
