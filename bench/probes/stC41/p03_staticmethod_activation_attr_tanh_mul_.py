# source: own knowledge (an activation picked as a class attribute, `squash = staticmethod(_squash)`, called as `self.squash(h)`)
# error: A (one of the variables needed for gradient computation has been modified by an inplace operation: TanhBackward0 saves its output)
import torch
import torch.nn as nn


def _squash(v):
    return torch.tanh(v)


class Gate(nn.Module):
    squash = staticmethod(_squash)

    def __init__(self, dim=5):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.squash(self.fc(x))
        h.mul_(0.5)
        return h


def main():
    torch.manual_seed(0)
    m = Gate()
    out = m(torch.randn(2, 5)).pow(2).sum()
    out.backward()
    return [out.detach(), m.fc.weight.grad]
