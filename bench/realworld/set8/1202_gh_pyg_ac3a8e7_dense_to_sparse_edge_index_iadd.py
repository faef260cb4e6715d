# source: https://github.com/pyg-team/pytorch_geometric/commit/ac3a8e728990c1325e114d6d4cb65128acd6765e
# pattern: subscript_augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch Geometric, torch_geometric/utils/sparse.py, dense_to_sparse: for a batched (three-dimensional) adjacency the
# edge weights are gathered with `edge_attr = flatten_adj[edge_index[0], edge_index[1]]`, which saves the index rows
# for the backward pass, and the column indices are then shifted per graph in place,
# `edge_index[1] += offset[edge_index[0]]`; `edge_attr.sum().backward()` fails with "modified by an inplace
# operation" (a LongTensor at version 2). Commit ac3a8e728 "Fix dense_to_sparse backward pass for three-dimensional
# input": `row, col = edge_index[0], edge_index[1]; edge_index = torch.stack([row, col + offset[row]], dim=0)`, and
# the test `adj = torch.rand(1, 3, 3).requires_grad_(); _, edge_attr = dense_to_sparse(adj, mask);
# edge_attr.sum().backward()` with and without a node mask.
# The library module is 1202helpers_pyg_sparse.py (ref: 1202helpers_pyg_sparse_fixed.py).
# Stand-ins: the dense adjacency is learned (sigmoid of node-embedding products, as in a DiffPool / graph
# autoencoder decoder), two graphs of 3 nodes, the second with one padded node (its adjacency rows and columns zeroed, as DenseDataLoader pads); the sparse graph then feeds a
# sum-aggregation message passing step whose output is the loss.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pyg_sparse = importlib.import_module("1202helpers_pyg_sparse")


class DenseDecoder(nn.Module):
    def __init__(self, in_channels=4, hidden=5):
        super().__init__()
        self.lin = nn.Linear(in_channels, hidden)

    def forward(self, x):
        z = self.lin(x)
        return torch.sigmoid(z @ z.transpose(-1, -2))


def compute():
    torch.manual_seed(0)
    decoder = DenseDecoder()
    msg = nn.Linear(4, 3)
    x = torch.randn(2, 3, 4)
    mask = torch.tensor([[True, True, True], [True, True, False]])

    adj = decoder(x) * mask[:, :, None] * mask[:, None, :]
    edge_index, edge_attr = pyg_sparse.dense_to_sparse(adj, mask)

    x_flat = x[mask]
    h = msg(x_flat)
    out = torch.zeros(x_flat.size(0), 3).index_add(0, edge_index[1], edge_attr[:, None] * h[edge_index[0]])
    loss = out.pow(2).sum() + edge_attr.sum()
    loss.backward()
    grads = {"decoder." + n: p.grad for n, p in decoder.named_parameters()}
    grads.update({"msg." + n: p.grad for n, p in msg.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
