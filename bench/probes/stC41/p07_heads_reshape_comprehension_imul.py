# source: own knowledge (attention heads made with reshape in a list comprehension over chunk outputs, then `q *= scale`).
# Written after the change, not tuned to it.
# error: C (Output 0 of ... is a view and is being modified inplace. This view is the output of a function that returns multiple views)
import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.to_qkv = nn.Linear(dim, 3 * dim, bias=False)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = [t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in self.to_qkv(x).chunk(3, dim=-1)]
        q *= self.scale
        out = (q @ k.transpose(-2, -1)).softmax(dim=-1) @ v
        return out.transpose(1, 2).reshape(b, n, -1)


def main():
    torch.manual_seed(0)
    m = SelfAttention()
    out = m(torch.randn(2, 3, 8)).sum()
    out.backward()
    return [out.detach(), m.to_qkv.weight.grad]
