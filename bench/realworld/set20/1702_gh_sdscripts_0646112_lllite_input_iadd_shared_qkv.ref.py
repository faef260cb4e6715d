# reference fix for 1702: commit 0646112 in the library module (1702helpers_sdscripts_lllite_fixed.py):
# `x = self.org_forward(x + cx)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
lllite = importlib.import_module("1702helpers_sdscripts_lllite_fixed")


class SelfAttentionBlock(torch.nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.norm1 = torch.nn.LayerNorm(dim)
        self.to_q = torch.nn.Linear(dim, dim, bias=False)
        self.to_k = torch.nn.Linear(dim, dim, bias=False)
        self.to_v = torch.nn.Linear(dim, dim, bias=False)
        self.to_out = torch.nn.Linear(dim, dim)

    def forward(self, x):
        h = self.norm1(x)
        q, k, v = self.to_q(h), self.to_k(h), self.to_v(h)
        attn = torch.softmax(q @ k.transpose(1, 2) / q.shape[-1] ** 0.5, dim=-1)
        return x + self.to_out(attn @ v)


def compute():
    torch.manual_seed(0)
    block = SelfAttentionBlock()
    for p in block.parameters():
        p.requires_grad_(False)  # the UNet is frozen; only the LLLite modules train
    modules = []
    for name in ["to_q", "to_k", "to_v"]:
        m = lllite.LLLiteModule(1, 4, "lllite_unet_attn1_" + name, getattr(block, name), 4)
        with torch.no_grad():
            m.up[0].weight.normal_(0, 0.3)
        modules.append(m)
    cond_image = torch.rand(1, 3, 32, 32)
    for m in modules:
        m.set_cond_image(cond_image)
        m.apply_to()
    x = torch.randn(1, 16, 8)
    target = torch.randn(1, 16, 8)
    out = block(x)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    grads = {}
    for m in modules:
        for pname, p in m.named_parameters():
            grads[m.lllite_name + "." + pname + ".grad"] = p.grad
    grads["out"] = out.detach()
    return grads


if __name__ == "__main__":
    compute()
