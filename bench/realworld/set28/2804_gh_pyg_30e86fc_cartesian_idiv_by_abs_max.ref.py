# reference fix for 2804: commit 30e86fc in the library module (2804helpers_pyg_cartesian_fixed.py):
# `cart = cart / (2 * cart.abs().max())`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
T = importlib.import_module("2804helpers_pyg_cartesian_fixed")


def compute():
    torch.manual_seed(0)
    n = 6
    src = torch.arange(n)
    dst = (src + 1) % n
    index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])])
    pos = torch.randn(n, 2, requires_grad=True)
    x = torch.randn(n, 4)
    edge_weight = torch.rand(index.size(1))
    lin = torch.nn.Linear(3, 4)

    data = T.Data(x, pos, index, edge_weight, None)
    data = T.Cartesian()(data)
    row, col = data.index
    msg = x[col] * torch.sigmoid(lin(data.weight))
    out = torch.zeros(n, 4).index_add(0, row, msg)
    loss = out.pow(2).mean()
    loss.backward()
    return {
        "pos.grad": pos.grad,
        "lin.weight.grad": lin.weight.grad,
        "pseudo": data.weight.detach(),
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
