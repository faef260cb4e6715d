"""pygmtools 0.6.0 (pygmtools/pytorch_astar_modules.py:548 `GCNConv.forward`): the proven finding of `inplacefix
check` (stop 58, fresh58, end of stop). `GCNConv.forward(A, x)` writes the caller's adjacency, `A[i, i] = 1` (:548),
and then takes `torch.mm(torch.mm(D, A), D)`, which saves A (D, built from A's row sums, requires grad when A does).
`GENN.convolutional_pass` hands the same `edge_index` to three GCNConv layers in a row: the second layer's write
spoils what the first layer's product saved, and backward raises when the adjacency requires grad (a non-leaf: a
leaf would raise the leaf error at the first write). The docstring calls A a {0,1} adjacency, and GENN builds it
from `to_dense_adj` of integer edge lists (no grad): real by this file's convention (an adjacency that requires
grad, a soft or learned one). Writing the diagonal on a copy (`A = A.clone()` first) runs. GCNConv and
GENN.convolutional_pass are compiled alone from the shipped file, with a stand-in self holding three layers."""

import _shim  # noqa: F401
import linecache
import types

import torch
import torch.nn as nn
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pygmtools/pytorch_astar_modules.py")
assert linecache.getline(PATH, 548).strip() == "A[i,i] = 1"


def run(shipped):
    replace = {} if shipped else {548: "A = A.clone(); A[i,i] = 1"}
    ns = compile_alone(PATH, {"GCNConv", "GENN.convolutional_pass"},
                       {"torch": torch, "nn": nn, "F": nn.functional, "Parameter": nn.Parameter, "Tensor": torch.Tensor},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        convs = []
        for fin, fout in ((3, 8), (8, 8), (8, 4)):
            c = ns["GCNConv"](fin, fout)
            nn.init.normal_(c.weight)
            nn.init.zeros_(c.bias)
            convs.append(c)
        me = types.SimpleNamespace(convolution_1=convs[0], convolution_2=convs[1], convolution_3=convs[2])
        w = torch.rand(5, 5, requires_grad=True)
        adj = (w + w.T) / 2  # a soft adjacency that requires grad
        out = ns["convolutional_pass"](me, adj, torch.randn(5, 3))
        out.sum().backward()
        assert w.grad is not None
    return go


FID = "pygmtools/pytorch_astar_modules.py:548:IPF104"
attempt(FID, "path", "GENN.convolutional_pass(A, x) through three GCNConv layers, a soft adjacency that requires "
        "grad: the second layer's `A[i,i] = 1` spoils what the first layer's mm saved, backward raises", run(True))
attempt(FID, "control", "the diagonal written on a copy of A: runs", run(False))
