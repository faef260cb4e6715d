# source: own knowledge (a module-level helper returning the two halves of a coupling / GLU input, as in RealNVP or Glow code)
# error: C (Output 1 of SplitBackward0 is a view and is being modified inplace)
import torch
import torch.nn as nn


def split_half(h):
    return h.chunk(2, dim=1)


class Coupling(nn.Module):
    def __init__(self, ch=4):
        super().__init__()
        self.net = nn.Linear(ch // 2, ch // 2)

    def forward(self, x):
        x1, x2 = split_half(x)
        x2 += self.net(x1)
        return torch.cat([x1, x2], dim=1)


def main():
    torch.manual_seed(0)
    m = Coupling()
    h = nn.Linear(4, 4)
    out = m(h(torch.randn(3, 4))).sum()
    out.backward()
    return [out.detach(), h.weight.grad]
