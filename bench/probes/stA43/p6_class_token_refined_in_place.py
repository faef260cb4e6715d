"""A block refines the class token of a token sequence and writes it back into the sequence:
`cls = x[:, :1]; cls = cls + attn(norm(cls)); x[:, :1] = cls`. The LayerNorm saved the view
`x[:, :1]`; the name is bound again before the write, but the saved tensor is still a view of
`x`, and the write bumps their shared version counter: backward raises."""
import torch
import torch.nn as nn


class ClassTokenBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Linear(dim, dim)

    def forward(self, x):
        x = x + self.mlp(x)
        cls = x[:, :1]
        cls = cls + self.proj(self.norm(cls))
        x[:, :1] = cls
        return x


def compute():
    torch.manual_seed(0)
    blocks = nn.Sequential(ClassTokenBlock(8), ClassTokenBlock(8))
    x = torch.randn(2, 5, 8)
    blocks(x)[:, 0].pow(2).mean().backward()
    return [p.grad.flatten().tolist() for p in blocks.parameters()]
