"""sinkhorn-transformer 0.11.4: the one proven finding of `inplacefix check` on main d1b4fd6 (stop 51, prec51b):
`differentiable_topk(x, k)` writes `x.scatter_(-1, indices, float('-inf'))` (line 146) between its k steps;
`SimpleSortNet.forward` hands it `R = self.act(x @ W)` (line 249, nn.ReLU saves its output).
The package imports local_attention, axial_positional_embedding and product_key_memory (not here): the helpers
and SimpleSortNet are compiled alone from the shipped file (_prec51b.compile_alone). Path: SimpleSortNet(
non_permutative=True) in training, q/k and the parameter requiring grad, forward(q, k, topk=2) (the
`n_top_buckets` option of SinkhornAttention), backward raises (output of ReLU modified). Control: line 146 as
`x = x.scatter(-1, indices, float('-inf'))`: runs. Context: topk=1 (the default n_top_buckets) never writes
(`is_last`): runs. Real in the library's own use with n_top_buckets > 1 (SinkhornAttention passes it as topk)."""

import _shim  # noqa: F401
import linecache
import os

import torch
import torch.nn.functional as F
from torch import nn
from _check import attempt
from _prec51b import PK, compile_alone

SRC = os.path.join(PK, "sinkhorn_transformer/sinkhorn_transformer.py")
assert "x.scatter_(-1, indices, float('-inf'))" in linecache.getline(SRC, 146)
assert "R = self.act(x @ W)" in linecache.getline(SRC, 249)
FINDING = "sinkhorn_transformer/sinkhorn_transformer.py:146:IPF103"
NAMES = {"bucket", "expand_dim", "expand_batch_and_merge_head", "differentiable_topk", "log", "sample_gumbel",
         "sinkhorn_sorting_operator", "gumbel_sinkhorn", "SimpleSortNet"}


def run(control, topk=2):
    def go():
        ns = compile_alone(SRC, NAMES, {"torch": torch, "nn": nn, "F": F}, replace={
            146: "x = x.scatter(-1, indices, float('-inf'))"} if control else None)
        torch.manual_seed(0)
        heads, bucket_size, buckets, dim = 2, 4, 4, 8
        net = ns["SimpleSortNet"](heads, bucket_size, buckets, dim, True, 0.75, 7)
        q = torch.randn(heads, bucket_size * buckets, dim // 2, requires_grad=True)
        k = torch.randn(heads, bucket_size * buckets, dim // 2, requires_grad=True)
        out = net(q, k, topk=topk)
        (out * torch.randn_like(out)).sum().backward()
    return go


attempt(FINDING, "path", "SimpleSortNet(non_permutative=True)(q, k requiring grad, topk=2), backward", run(False))
attempt(FINDING, "control", "the same with line 146 out of place (x = x.scatter(...))", run(True))
attempt(FINDING, "context", "topk=1 (the default n_top_buckets): the write is skipped on the last step",
        run(False, topk=1))
