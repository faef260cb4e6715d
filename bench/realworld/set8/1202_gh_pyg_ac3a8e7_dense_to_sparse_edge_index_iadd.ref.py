# reference fix for 1202: commit ac3a8e728 in the library module (1202helpers_pyg_sparse_fixed.py): the shifted
# edge_index built out of place with torch.stack.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pyg_sparse = importlib.import_module("1202helpers_pyg_sparse_fixed")


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
