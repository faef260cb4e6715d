"""mambatransformer 0.0.4 (mamba_transformer/blocks.py:34 `LinearAttention.forward`): the proven finding of
`inplacefix check` (stop 55, fresh55, end of stop). `k.masked_fill_(mask, 0.0)` writes `k`, the output of
`k.softmax(dim=-2)` (:31), which softmax saved. With a mask, a forward in training (x and to_qkv's weight require
grad) raises at backward: real in the library's own use. `LinearAttention` is compiled alone from the shipped file
(its `nn.Module` base kept), with stand-ins for `zeta.utils.exists` (`x is not None`) and the two
`einops.rearrange` patterns it uses."""

import _shim  # noqa: F401
import linecache
import types

import torch
from torch import einsum, nn
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("mamba_transformer/blocks.py")
LINE = "k.masked_fill_(mask, 0.0)"
assert linecache.getline(PATH, 34).strip() == LINE


def rearrange(t, pattern, h):
    if pattern == "b n (h d) -> (b h) n d":
        b, n, hd = t.shape
        return t.reshape(b, n, h, hd // h).permute(0, 2, 1, 3).reshape(b * h, n, hd // h)
    if pattern.strip() == "(b h) n d -> b n (h d)":
        bh, n, d = t.shape
        return t.reshape(bh // h, h, n, d).permute(0, 2, 1, 3).reshape(bh // h, n, h * d)
    raise SystemExit(pattern)


def run(control=False, mask=True):
    replace = {34: "k = k.masked_fill(mask, 0.0)"} if control else {}
    ns = compile_alone(PATH, {"LinearAttention"}, {"torch": torch, "nn": nn, "einsum": einsum,
                                                   "rearrange": rearrange, "exists": lambda v: v is not None},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        attn = ns["LinearAttention"](8, heads=2, dim_head=4)
        x = torch.randn(2, 5, 8)
        m = (torch.rand(4, 5, 1) > 0.5) if mask else None
        attn(x, m).sum().backward()
    return go


FID = "mamba_transformer/blocks.py:34:IPF103"
attempt(FID, "path", "LinearAttention(8, heads 2) in training with a mask, backward: raises", run())
attempt(FID, "control", "the same with :34 out of place: runs", run(control=True))
attempt(FID, "context", "without a mask (:34 not reached): runs", run(mask=False))
