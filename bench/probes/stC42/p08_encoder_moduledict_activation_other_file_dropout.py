# source: own knowledge (encoders whose activation comes from a utility returning an entry of an
# nn.ModuleDict of built modules, followed by an in-place dropout)
# error: A
# every entry runs in place and saves its result; the in-place dropout after it overwrites that result.
import torch
import torch.nn as nn

from p08helpers_utils import activation_func


class Encoder(nn.Module):
    def __init__(self, dim, act="selu", p=0.2):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = activation_func(act)
        self.drop = nn.Dropout(p=p, inplace=True)
        self.out = nn.Linear(dim, 2)

    def forward(self, x):
        return self.out(self.drop(self.act(self.fc(x))))


def compute():
    torch.manual_seed(0)
    enc = Encoder(6)
    enc(torch.randn(4, 6)).sum().backward()
    return [p.grad.sum().item() for p in enc.parameters()]


if __name__ == "__main__":
    compute()
