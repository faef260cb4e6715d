# source: https://github.com/pytorch/executorch/pull/17901
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# ExecuTorch, Arm backend, backends/arm/_passes/replace_inf_and_limit_values_pass.py, ReplaceInfAndLimitValuesPass:
# before quantisation every floating buffer of the graph module has its infinities replaced in place,
# `tensor[tensor == float("inf")] = 255`, `tensor[tensor == float("-inf")] = -255` (for the attention mask of Llama).
# "For some buffers with grad=True, this triggered Runtime error: a view of a leaf Variable that requires grad is being
# used in an in-place operation." PR #17901 "Arm backend: Avoid inplace buffer modification" (merged, commit
# 17ff2328be): `t = torch.nan_to_num(tensor, posinf=255, neginf=-255)`, `setattr(graph_module, buf_name, t)`.
# The library module is 1304helpers_executorch_arm_pass.py (ref: 1304helpers_executorch_arm_pass_fixed.py).
# Stand-ins: a one-head causal self-attention block whose additive mask (0 / -inf) is a registered buffer that
# requires grad, traced with torch.fx.symbolic_trace instead of torch.export; the pass base classes (see the
# helper); after the pass the graph module runs a forward on a calibration batch and a backward, and compute()
# returns the rewritten mask, the output and the gradients (the input's and the projections').
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
arm_pass = importlib.import_module("1304helpers_executorch_arm_pass")


class CausalSelfAttention(nn.Module):
    def __init__(self, dim=6, seq=5):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        self.register_buffer("attention_mask", mask.requires_grad_())
        self.scale = dim ** -0.5

    def forward(self, x):
        q, k, v = self.qkv(x).split(x.shape[-1], dim=-1)
        scores = q @ k.transpose(-2, -1) * self.scale + self.attention_mask
        return self.proj(torch.softmax(scores, dim=-1) @ v)


def compute():
    torch.manual_seed(0)
    model = CausalSelfAttention()
    graph_module = torch.fx.symbolic_trace(model)
    result = arm_pass.ReplaceInfAndLimitValuesPass()(graph_module)
    gm = result.graph_module

    x = torch.randn(2, 5, 6, requires_grad=True)
    out = gm(x)
    out.pow(2).mean().backward()
    grads = {"attention_mask": gm.attention_mask.detach().clone(), "out": out.detach(), "x": x.grad}
    grads.update({n: p.grad for n, p in gm.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
