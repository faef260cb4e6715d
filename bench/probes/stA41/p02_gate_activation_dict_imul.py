# source: own knowledge (gating units whose nonlinearity comes from a table of classes keyed by name)
# error: A
# `self.gate = GATES[kind]()` is a Sigmoid or a Tanh (both save their result); `g *= 0.5` overwrites it.
import torch
import torch.nn as nn

GATES = {"sigmoid": nn.Sigmoid, "tanh": nn.Tanh}


class GatedUnit(nn.Module):
    def __init__(self, dim, kind="sigmoid"):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.gate = GATES[kind]()

    def forward(self, x):
        g = self.gate(self.proj(x))
        g *= 0.5
        return x * g


def compute():
    torch.manual_seed(0)
    unit = GatedUnit(6)
    unit(torch.randn(4, 6)).sum().backward()


if __name__ == "__main__":
    compute()
