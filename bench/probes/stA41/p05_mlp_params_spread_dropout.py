# source: own knowledge (MLP builders that forward an optional `inplace` as `**params`)
# error: A
# `params = {} if inplace is None else {"inplace": inplace}` with inplace=True by default: the ReLU and the
# Dropout both run in place, and the dropout overwrites the result ReLU's backward saved.
import torch
import torch.nn as nn


class MLP(nn.Sequential):
    def __init__(self, dims, activation_layer=nn.ReLU, inplace=True, dropout=0.25):
        params = {} if inplace is None else {"inplace": inplace}
        layers = []
        for a, b in zip(dims[:-2], dims[1:-1]):
            layers.append(nn.Linear(a, b))
            layers.append(activation_layer(**params))
            layers.append(nn.Dropout(dropout, **params))
        layers.append(nn.Linear(dims[-2], dims[-1]))
        super().__init__(*layers)


def compute():
    torch.manual_seed(0)
    mlp = MLP([6, 8, 8, 2])
    mlp(torch.randn(4, 6)).sum().backward()


if __name__ == "__main__":
    compute()
