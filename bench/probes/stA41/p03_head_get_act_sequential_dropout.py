# source: own knowledge (heads built as nn.Sequential with a `get_act(name)` helper and in-place dropout)
# error: A
# `get_act("relu")` returns `nn.ReLU(inplace=True)` (or a Sigmoid): both save their result, which the in-place
# Dropout after them overwrites.
import torch
import torch.nn as nn


def get_act(name):
    if name == "relu":
        return nn.ReLU(inplace=True)
    if name == "sigmoid":
        return nn.Sigmoid()
    raise ValueError(name)


class Head(nn.Module):
    def __init__(self, dim, classes, act="relu", p=0.3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(dim, dim), get_act(act), nn.Dropout(p, inplace=True),
                                  nn.Linear(dim, classes))

    def forward(self, x):
        return self.body(x)


def compute():
    torch.manual_seed(0)
    head = Head(8, 3)
    head(torch.randn(5, 8)).sum().backward()


if __name__ == "__main__":
    compute()
