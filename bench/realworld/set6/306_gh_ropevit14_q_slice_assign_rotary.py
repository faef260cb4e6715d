# source: https://github.com/naver-ai/rope-vit/issues/14
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# rope-vit (rotary position embeddings for vision transformers), self-attn/rope_self_attn.py, RoPEAttention.forward:
# `q, k, v = qkv[0], qkv[1], qkv[2]` then `q[:, :, 1:], k[:, :, 1:] = apply_rotary_emb(q[:, :, 1:], k[:, :, 1:],
# freqs_cis=freqs_cis)`; in float32, apply_rotary_emb's `torch.view_as_complex(xq.float().reshape(...))` is a view of
# q, saved by the product with the learnable frequencies, and the slice assignment writes into q, so backward fails
# ("output 0 of ViewAsComplexBackward0, is at version 2; expected version 0", issue #14, a custom ViT built on
# RoPEAttention; the maintainer reproduced it). The fix, commit ce85c2e ("Debug self-attn backward error"):
# `q_rope, k_rope = apply_rotary_emb(...)` then `q = torch.cat((q[:, :, :1], q_rope), dim=2)` (and k likewise).
# The repository module is 306helpers_rope_self_attn.py (ref: 306helpers_rope_self_attn_fixed.py).
# Stand-ins: the reporter's custom ViT is a two-block pre-norm transformer with a class token over a 4 x 4 patch grid
# (dim 16, 2 heads), patch embedding by a linear layer on 4 x 4 patches of a 3 x 16 x 16 image, classification by
# the class token; loss: cross-entropy on 2 images.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rope = importlib.import_module("306helpers_rope_self_attn")


class Block(nn.Module):
    def __init__(self, dim, num_heads, grid):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = rope.RoPEAttention(dim, num_heads=num_heads, qkv_bias=True, grid=grid)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class RoPEViT(nn.Module):
    def __init__(self, img=16, patch=4, dim=16, depth=2, num_heads=2, num_classes=5):
        super().__init__()
        self.patch = patch
        self.patch_embed = nn.Linear(3 * patch * patch, dim)
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.blocks = nn.ModuleList([Block(dim, num_heads, img // patch) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, img):
        B = img.shape[0]
        p = self.patch
        patches = img.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5).reshape(B, -1, 3 * p * p)
        x = torch.cat([self.cls_token.expand(B, -1, -1), self.patch_embed(patches)], dim=1)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)[:, 0])


def compute():
    torch.manual_seed(0)
    model = RoPEViT()
    img = torch.randn(2, 3, 16, 16)
    y = torch.tensor([1, 4])
    loss = F.cross_entropy(model(img), y)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
