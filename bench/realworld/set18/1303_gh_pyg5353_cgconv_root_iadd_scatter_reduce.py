# source: https://github.com/pyg-team/pytorch_geometric/pull/5353
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch Geometric, torch_geometric/nn/conv/cg_conv.py, CGConv.forward (crystal graph convolution for materials
# property prediction): the aggregated messages get the root features added in place, `out += x[1]`. When PyG moved
# its `scatter` to `torch.scatter_reduce` (PR #5120), whose backward saves its result, such in-place updates of a
# propagate() output made autograd "complain about inplace modifications" ("modified by an inplace operation"), and
# a `out = out.clone()` workaround was put into `scatter`. PR #5353 "Replace in-place operations by out-of-place ones"
# (merged, commit 5b1051fca: "utils.scatter (torch.scatter_reduce wrapper) ... do not allow user to perform in-place
# operation on its output in case of training") rewrote the layers, `out = out + x[1]` here, and removed the clone.
# This case is the layer as it was with `scatter` as that PR leaves it.
# The library module is 1303helpers_pyg_cg_conv.py (ref: 1303helpers_pyg_cg_conv_fixed.py).
# Stand-ins: MessagePassing.propagate written out (see the helper); a two-layer CGCNN-style regressor on a random
# 5-atom crystal graph (8 edges, 3 edge features), sum pooling and a linear head predicting one property.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
cg_conv = importlib.import_module("1303helpers_pyg_cg_conv")


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
