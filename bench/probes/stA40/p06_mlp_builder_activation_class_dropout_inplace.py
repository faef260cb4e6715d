# source: own knowledge (torchvision.ops.MLP / timm Mlp-style builders taking the activation as a class)
# error: A
# The builder takes `activation_layer=nn.ReLU` and builds it with inplace=True, followed by an in-place
# Dropout: the dropout overwrites the ReLU result that ReLU's backward saved.
import torch
import torch.nn as nn


class MLP(nn.Sequential):
    def __init__(self, in_dim, hidden, out_dim, activation_layer=nn.ReLU, dropout=0.2):
        layers = [nn.Linear(in_dim, hidden), activation_layer(inplace=True), nn.Dropout(dropout, inplace=True),
                  nn.Linear(hidden, out_dim)]
        super().__init__(*layers)


def compute():
    torch.manual_seed(0)
    mlp = MLP(6, 8, 2)
    mlp(torch.randn(5, 6)).pow(2).mean().backward()


if __name__ == "__main__":
    compute()
