# reference fix for 1303: PR #5353 in the library module (1303helpers_pyg_cg_conv_fixed.py): the root features added
# out of place.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cg_conv = importlib.import_module("1303helpers_pyg_cg_conv_fixed")


class CGCNN(nn.Module):
    def __init__(self, channels=6, edge_dim=3):
        super().__init__()
        self.conv1 = cg_conv.CGConv(channels, dim=edge_dim)
        self.conv2 = cg_conv.CGConv(channels, dim=edge_dim)
        self.head = nn.Linear(channels, 1)

    def forward(self, x, edge_index, edge_attr):
        x = self.conv1(x, edge_index, edge_attr)
        x = self.conv2(x, edge_index, edge_attr)
        return self.head(x.sum(0))


def compute():
    torch.manual_seed(0)
    model = CGCNN()
    x = torch.randn(5, 6)
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 4, 2], [1, 0, 2, 1, 4, 3, 2, 4]])
    edge_attr = torch.randn(8, 3)
    target = torch.tensor([1.5])
    loss = (model(x, edge_index, edge_attr) - target).pow(2).sum()
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
