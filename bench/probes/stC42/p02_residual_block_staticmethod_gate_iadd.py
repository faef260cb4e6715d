# source: own knowledge (gated residual blocks whose gate is chosen by a static builder of the class)
# error: A
# `self.gate = self.make_gate(kind)`: a staticmethod returning a Sigmoid or a Tanh (both save their output);
# `h += x` then writes into that saved output.
import torch
import torch.nn as nn


class GatedResidual(nn.Module):
    def __init__(self, dim, kind="sigmoid"):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.gate = self.make_gate(kind)

    @staticmethod
    def make_gate(kind):
        if kind == "sigmoid":
            gate = nn.Sigmoid()
        else:
            gate = nn.Tanh()
        return gate

    def forward(self, x):
        h = self.gate(self.fc(x))
        h += x
        return h


def compute():
    torch.manual_seed(0)
    block = nn.Sequential(GatedResidual(6), GatedResidual(6, kind="tanh"))
    block(torch.randn(4, 6)).sum().backward()
    return [p.grad.sum().item() for p in block.parameters()]


if __name__ == "__main__":
    compute()
