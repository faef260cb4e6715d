# reference fix for 306: commit ce85c2e in the repository module (306helpers_rope_self_attn_fixed.py): the rotated q/k joined with torch.cat.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rope = importlib.import_module("306helpers_rope_self_attn_fixed")


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
