# source: https://github.com/pyg-team/pytorch_geometric/commit/30e86fc086eae2d8b7ff383dff0b4287273ccef8
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch Geometric (May 2018), torch_geometric/transform/cartesian.py: the Cartesian transform stores the globally
# normalised relative positions of linked nodes as edge pseudo-coordinates, `cart = pos[col] - pos[row]`, then
# `cart /= 2 * cart.abs().max()` and `cart += 0.5`. AbsBackward saved `cart`, so the in-place division makes any
# backward that reaches the node positions fail with "one of the variables needed for gradient computation has been
# modified by an inplace operation" (the transform applied to positions that carry a gradient, inside a model rather
# than as data preprocessing). Commit 30e86fc ("fixed backprop") writes `cart = cart / (2 * cart.abs().max())` and
# makes the same change in LocalCartesian, Polar (`rho /= rho.max()` after torch.norm), Spherical and
# TargetIndegree.
# The library module is 2804helpers_pyg_cartesian.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a 6-node ring graph (both directions) whose 2-D node positions are a learnable leaf, the transform
# with its default cat=True over existing scalar edge weights, and an edge-conditioned aggregation: a linear map of the
# pseudo-coordinates gates the source node features, summed into the targets with index_add, then a squared loss.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
T = importlib.import_module("2804helpers_pyg_cartesian")


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
