"""torch_geometric 2.8.1: the proven findings of `inplacefix check` before issue 24's changes.

- gcn_conv.py:90/110, laplacian.py:78, transforms/sign.py:50: `deg_inv_sqrt = deg.pow_(-0.5)`, then
  `deg_inv_sqrt.masked_fill_(...)`; reported as writing a result `pow_` saved. Path: edge weights
  that require grad, grad on, backward. (gcn_conv.py:68 is the torch_sparse branch: not installed.)
- nn/dense/linear.py:119 and :245: `reset_bias_(self.bias, ...)`, reported as a leaf update; the
  initializers write `value.data.uniform_()`. Path: building the layer with grad on.
- nn/dense/mincut_pool.py:101: `out_adj[:, ind, ind] = 0`, reported as saved by
  `_rank3_trace` (`torch.einsum('ijj->i', x)`). Path: all inputs require grad, backward of output
  and both losses.
"""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from torch_geometric.data import Data
from torch_geometric.nn import HeteroLinear, Linear
from torch_geometric.nn.conv import gcn_conv
from torch_geometric.nn.dense import mincut_pool
from torch_geometric.transforms import SIGN
from torch_geometric.utils import get_laplacian, laplacian

EDGES = torch.tensor([[0, 1, 1, 2, 3], [1, 0, 2, 1, 0]])

expect_line(gcn_conv.gcn_norm, 110, "deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)")
expect_line(gcn_conv.gcn_norm, 90, "deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)")


def gcn():
    w = torch.rand(5, requires_grad=True)
    _, out = gcn_conv.gcn_norm(EDGES, w, 4, add_self_loops=False)
    out.sum().backward()


attempt("torch_geometric/nn/conv/gcn_conv.py:110:IPF103", "path",
        "gcn_norm(edge_index, edge_weight requiring grad), backward", gcn)
# gcn_conv.py:90 (the torch.sparse branch, the same three lines) cannot run backward at all in torch
# 2.13 ("derivative for aten::_coalesced_ is not implemented"): labelled from line 110's check.

expect_line(laplacian.get_laplacian, 78, "deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)")


def lap():
    w = torch.rand(5, requires_grad=True)
    _, out = get_laplacian(EDGES, w, normalization="sym", num_nodes=4)
    out.sum().backward()


attempt("torch_geometric/utils/laplacian.py:78:IPF103", "path",
        "get_laplacian(edge_weight requiring grad, 'sym'), backward", lap)

expect_line(SIGN.forward, 50, "deg_inv_sqrt.masked_fill_(deg_inv_sqrt == float('inf'), 0)")


def sign():
    x = torch.rand(4, 3, requires_grad=True)
    w = torch.rand(5, requires_grad=True)
    data = SIGN(2)(Data(x=x, edge_index=EDGES, edge_weight=w, num_nodes=4))
    (data.x1.sum() + data.x2.sum()).backward()


attempt("torch_geometric/transforms/sign.py:50:IPF103", "path",
        "SIGN(2) on features and edge weights requiring grad, backward", sign)

expect_line(Linear.reset_parameters, 119, "reset_bias_(self.bias, self.in_channels, self.bias_initializer)")
expect_line(HeteroLinear.reset_parameters, 245, "reset_bias_(self.bias, self.in_channels,")
for init in (None, "zeros"):
    attempt("torch_geometric/nn/dense/linear.py:119:IPF105", "path",
            f"Linear(3, 4, bias_initializer={init!r}) built with grad on",
            lambda init=init: Linear(3, 4, bias_initializer=init)(torch.rand(2, 3)).sum().backward())
attempt("torch_geometric/nn/dense/linear.py:245:IPF105", "path", "HeteroLinear(3, 4, 2) built with grad on",
        lambda: HeteroLinear(3, 4, 2)(torch.rand(2, 3), torch.tensor([0, 1])).sum().backward())

expect_line(mincut_pool.dense_mincut_pool, 101, "out_adj[:, ind, ind] = 0")


def mincut():
    x = torch.rand(1, 4, 3, requires_grad=True)
    adj = torch.rand(1, 4, 4, requires_grad=True)
    s = torch.rand(1, 4, 2, requires_grad=True)
    out, out_adj, l1, l2 = mincut_pool.dense_mincut_pool(x, adj, s)
    (out.sum() + out_adj.sum() + l1 + l2).backward()


attempt("torch_geometric/nn/dense/mincut_pool.py:101:IPF104", "path",
        "dense_mincut_pool(x, adj, s all requiring grad), backward of every output", mincut)
