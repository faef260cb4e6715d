# source: own knowledge (a module keeping `self.softmax = functools.partial(torch.softmax, dim=-1)`, masking the weights afterwards)
# error: A (one of the variables needed for gradient computation has been modified by an inplace operation: SoftmaxBackward0 saves its output)
import functools

import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, dim=6):
        super().__init__()
        self.key = nn.Linear(dim, dim)
        self.softmax = functools.partial(torch.softmax, dim=-1)

    def forward(self, q, x, pad):
        weights = self.softmax(q @ self.key(x).t())
        weights.masked_fill_(pad, 0.0)
        return weights @ x


def main():
    torch.manual_seed(0)
    m = Scorer()
    pad = torch.zeros(2, 4, dtype=torch.bool)
    pad[:, -1] = True
    out = m(torch.randn(2, 6), torch.randn(4, 6), pad).sum()
    out.backward()
    return [out.detach(), m.key.weight.grad]
