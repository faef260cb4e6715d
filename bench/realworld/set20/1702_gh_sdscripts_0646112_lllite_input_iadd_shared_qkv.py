# source: https://github.com/kohya-ss/sd-scripts/commit/0646112010acaea0d2f3f3235472e05f013e9b18
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# sd-scripts ControlNet-LLLite (SDXL), LLLiteModule.forward: each LLLite module wraps one Linear of a transformer
# block's self-attention (attn1 to_q, to_k, to_v) and adds its conditioning residual to that Linear's input in place,
# `x += cx`, then calls the original forward. The three modules receive the same normalised hidden states, so the
# add is written into a tensor that this module's own `self.down(x)` and the previous module's Linear saved: training
# the LLLite modules fails with "modified by an inplace operation". Commit 0646112 "fix a bug x is updated inplace"
# calls `self.org_forward(x + cx)`. ref_semantics differs: in the original each later projection also sees the earlier
# modules' residuals (the leak the commit names a bug); the reference gives each projection only its own residual.
# The library module is 1702helpers_sdscripts_lllite.py (ref: 1702helpers_sdscripts_lllite_fixed.py).
# Stand-ins: the SDXL UNet is one self-attention block (LayerNorm, to_q/to_k/to_v/to_out Linears of width 8, one
# head) over 16 latent tokens; ControlNetLLLite's module search is the three explicit LLLiteModule(depth=1,
# cond_emb_dim=4, mlp_dim=4) wrappers and apply_to(); the zero-initialised `up` projections get small random weights
# (standing in for a partly trained LLLite, so the residuals are not zero); a 3x32x32 conditioning image; the loss is
# a squared error of the block output against a random target.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
lllite = importlib.import_module("1702helpers_sdscripts_lllite")


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
