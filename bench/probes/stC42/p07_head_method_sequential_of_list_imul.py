# source: own knowledge (heads built by a method appending layers to a list and returning nn.Sequential(*layers))
# error: A
# the head ends in a Tanh (saves its output); `y *= self.scale` writes into it.
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, dim, hidden=8, depth=2):
        super().__init__()
        self.scale = 2.0
        self.head = self._make_head(dim, hidden, depth)

    def _make_head(self, dim, hidden, depth):
        layers = []
        for _ in range(depth):
            layers.append(nn.Linear(dim, hidden))
            layers.append(nn.ReLU())
            dim = hidden
        layers.append(nn.Linear(hidden, 2))
        layers.append(nn.Tanh())
        return nn.Sequential(*layers)

    def forward(self, x):
        y = self.head(x)
        y *= self.scale
        return y


def compute():
    torch.manual_seed(0)
    pi = Policy(4)
    pi(torch.randn(5, 4)).sum().backward()
    return [p.grad.sum().item() for p in pi.parameters()]


if __name__ == "__main__":
    compute()
