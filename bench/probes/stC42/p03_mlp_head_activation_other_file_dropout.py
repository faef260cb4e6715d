# source: own knowledge (prediction heads built from a util module's `get_activation(name, inplace=True)`,
# followed by an in-place dropout)
# error: A
# every module `get_activation` may build (Tanh, Sigmoid, ReLU/LeakyReLU in place) saves its result; the
# in-place Dropout after it overwrites that result.
import torch
import torch.nn as nn

from p03helpers_layers import get_activation


class Head(nn.Module):
    def __init__(self, dim, out, act="lrelu", p=0.1):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.act = get_activation(act)
        self.drop = nn.Dropout(p, inplace=True)
        self.fc2 = nn.Linear(dim, out)

    def forward(self, x):
        return self.fc2(self.drop(self.act(self.fc1(x))))


def compute():
    torch.manual_seed(0)
    head = Head(8, 2)
    head(torch.randn(5, 8)).sum().backward()
    return [p.grad.sum().item() for p in head.parameters()]


if __name__ == "__main__":
    compute()
