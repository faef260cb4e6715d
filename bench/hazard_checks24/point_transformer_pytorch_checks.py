"""point-transformer-pytorch 0.1.5: the two proven findings of `inplacefix check` on main e0a91e4 (stop 50,
prec50b): `PointTransformerLayer.forward` (point_transformer_pytorch.py:83) and
`MultiheadPointTransformerLayer.forward` (multihead_point_transformer_pytorch.py:105) write
`rel_dist.masked_fill_(~mask, mask_value)` on `rel_dist = rel_pos.norm(dim=-1)` (norm saves its output). The
written result's only use is `dist, indices = rel_dist.topk(num_neighbors, largest=False)`: `dist` is never read
and `indices` is integral, so no gradient reaches norm's backward and the saved output is never unpacked.
Sources: the unpacked wheel under $PREC50B_SITE (default /work/tmp/prec50b/pk) imported as they are; einops
(pure Python, the package's one dependency) from $PREC50B_DEPS (default /work/tmp/prec50b/deps, `pip download
--no-deps einops` unzipped). The path: each layer with a mask, num_neighbors < n, positions and features and
parameters requiring grad, backward: runs (FALSE). Context (what the report describes, for contrast): the same
norm output written then read by a backward (`rel_dist.masked_fill_(...)` then `rel_dist.sum()` in the loss)
raises."""

import _shim  # noqa: F401
import os
import sys

import torch
from _check import attempt, expect_line

sys.path[:0] = [os.environ.get("PREC50B_SITE", "/work/tmp/prec50b/pk"),
                os.environ.get("PREC50B_DEPS", "/work/tmp/prec50b/deps")]
from point_transformer_pytorch import MultiheadPointTransformerLayer, PointTransformerLayer  # noqa: E402

expect_line(PointTransformerLayer.forward, 83, "rel_dist.masked_fill_(~mask, mask_value)")
expect_line(MultiheadPointTransformerLayer.forward, 105, "rel_dist.masked_fill_(~mask, mask_value)")
F1 = "point_transformer_pytorch/point_transformer_pytorch.py:83:IPF103"
F2 = "point_transformer_pytorch/multihead_point_transformer_pytorch.py:105:IPF103"


def run(layer_cls, **kw):
    def go():
        torch.manual_seed(0)
        layer = layer_cls(dim=16, pos_mlp_hidden_dim=8, attn_mlp_hidden_mult=2, num_neighbors=4, **kw)
        feats = torch.randn(1, 10, 16, requires_grad=True)
        pos = torch.randn(1, 10, 3, requires_grad=True)
        mask = torch.ones(1, 10, dtype=torch.bool)
        mask[0, -2:] = False
        out = layer(feats, pos, mask=mask)
        out.sum().backward()
        assert pos.grad is not None and feats.grad is not None
    return go


def read_after_write():
    pos = torch.randn(1, 10, 3, requires_grad=True)
    rel_dist = (pos[:, :, None, :] - pos[:, None, :, :]).norm(dim=-1)
    mask = torch.rand(1, 10, 10) > 0.2
    rel_dist.masked_fill_(~mask, 1e4)
    dist, _ = rel_dist.topk(4, largest=False)
    dist.sum().backward()  # the values of topk now reach norm's backward


attempt(F1, "path", "PointTransformerLayer(num_neighbors=4) with a mask, feats/pos/parameters requiring grad, "
        "backward", run(PointTransformerLayer))
attempt(F2, "path", "MultiheadPointTransformerLayer(heads=2, num_neighbors=4) with a mask, backward",
        run(MultiheadPointTransformerLayer, heads=2, dim_head=8))
attempt(F1, "context", "norm output written by masked_fill_ then topk's values read by backward (not the "
        "library's code: shows what the report describes)", read_after_write)
