# source: own knowledge (typed code: `typing.cast(Tensor, ...)` around an activation, then an in-place scale).
# Written after the change, not tuned to it.
# error: A (one of the variables needed for gradient computation has been modified by an inplace operation: SigmoidBackward0 saves its output)
from typing import cast

import torch
import torch.nn as nn
from torch import Tensor


class Gate(nn.Module):
    def __init__(self, dim=5):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        g = cast(Tensor, torch.sigmoid(self.proj(x)))
        g.mul_(0.5)
        return g * x


def main():
    torch.manual_seed(0)
    m = Gate()
    out = m(torch.randn(2, 5)).sum()
    out.backward()
    return [out.detach(), m.proj.weight.grad]
