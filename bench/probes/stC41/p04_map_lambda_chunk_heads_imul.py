# source: own knowledge (attention heads split as `q, k, v = map(lambda t: t.view(...).transpose(1, 2), qkv.chunk(3, dim=-1))`, then `q *= scale`)
# error: C (Output 0 of SplitBackward0 is a view and is being modified inplace ... This view is the output of a function that returns multiple views)
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = map(lambda t: t.view(b, n, self.heads, d // self.heads).transpose(1, 2),
                      self.qkv(x).chunk(3, dim=-1))
        q *= self.scale
        attn = (q @ k.transpose(-1, -2)).softmax(-1)
        return (attn @ v).transpose(1, 2).reshape(b, n, d)


def main():
    torch.manual_seed(0)
    m = Attention()
    out = m(torch.randn(2, 3, 8)).sum()
    out.backward()
    return [out.detach(), m.qkv.weight.grad]
