# reference fix for 1304: PR #17901 in the library module (1304helpers_executorch_arm_pass_fixed.py): torch.nan_to_num
# out of place, the new tensor set on the graph module.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
arm_pass = importlib.import_module("1304helpers_executorch_arm_pass_fixed")


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
