# reference fix for 419: the maintainer's docs fix: `out = out + self.bias`.
import os
import sys
from importlib import import_module

import torch
from torch.nn import Linear, Parameter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
pyg = import_module("419helpers_torch_geometric")
MessagePassing, add_self_loops, degree = pyg.MessagePassing, pyg.add_self_loops, pyg.degree


class GCNConv(MessagePassing):
    def __init__(self, in_channels, out_channels, aggr='add'):
        super().__init__(aggr=aggr)
        self.lin = Linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.empty(out_channels))

        self.reset_parameters()

    def reset_parameters(self):
        self.lin.reset_parameters()
        self.bias.data.zero_()

    def forward(self, x, edge_index):
        # x has shape [N, in_channels]
        # edge_index has shape [2, E]

        # Step 1: Add self-loops to the adjacency matrix.
        edge_index, _ = add_self_loops(edge_index, num_nodes=x.size(0))

        # Step 2: Linearly transform node feature matrix.
        x = self.lin(x)

        # Step 3: Compute normalization.
        row, col = edge_index
        deg = degree(col, x.size(0), dtype=x.dtype)
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt[deg_inv_sqrt == float('inf')] = 0
        norm = deg_inv_sqrt[row] * deg_inv_sqrt[col]

        # Step 4-5: Start propagating messages.
        out = self.propagate(edge_index, x=x, norm=norm)

        # Step 6: Apply a final bias vector.
        out = out + self.bias

        return out

    def message(self, x_j, norm):
        # x_j has shape [E, out_channels]

        # Step 4: Normalize node features.
        return norm.view(-1, 1) * x_j


def compute():
    torch.manual_seed(0)
    conv1 = GCNConv(4, 8, aggr='max')
    conv2 = GCNConv(8, 2, aggr='max')
    with torch.no_grad():
        conv1.bias.normal_()
        conv2.bias.normal_()
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 4, 2], [1, 0, 2, 1, 4, 3, 4]])
    h = torch.relu(conv1(x, edge_index))
    out = conv2(h, edge_index)
    loss = torch.nn.functional.cross_entropy(out, torch.tensor([0, 1, 0, 1, 1]))
    loss.backward()
    grads = {"conv1." + n: p.grad for n, p in conv1.named_parameters()}
    grads.update({"conv2." + n: p.grad for n, p in conv2.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
