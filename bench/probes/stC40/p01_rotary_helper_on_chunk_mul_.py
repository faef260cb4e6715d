# source: own knowledge (rotary / scaling helpers applied to q, k from a fused projection, as in GPT-NeoX style blocks)
# error: C (Output 0 of SplitBackward0 is a view and is being modified inplace)
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.qkv = nn.Linear(dim, dim * 3)
        self.scale = dim ** -0.5

    def _scale_query(self, q):
        q.mul_(self.scale)
        return q

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = self._scale_query(q)
        att = (q @ k.transpose(-2, -1)).softmax(-1)
        return att @ v


def main():
    torch.manual_seed(0)
    m = Attention()
    out = m(torch.randn(2, 4, 8)).sum()
    out.backward()
    return [out.detach(), m.qkv.weight.grad]
