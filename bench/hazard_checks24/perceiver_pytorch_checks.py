"""perceiver-pytorch 0.11.0: the one proven finding of `inplacefix check` (b47935c, stop 46):
`LinearAttention.forward` (experimental.py:40) takes `k = k.softmax(dim=-2)` and then, with a mask,
`k.masked_fill_(mask, 0.)`: softmax saved its result `k` for its backward. The path runs the module
with a mask, x requiring grad, and calls backward; the control has line 40 out of place
(`k = k.masked_fill(mask, 0.)`)."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from _rewrite import rewritten, replaced
from perceiver_pytorch import experimental

FINDING = "perceiver_pytorch/experimental.py:40:IPF103"
forward = experimental.LinearAttention.forward
expect_line(forward, 37, "q, k = q.softmax(dim = -1), k.softmax(dim = -2)")
expect_line(forward, 40, "k.masked_fill_(mask, 0.)")


def linear_attention():
    torch.manual_seed(0)
    layer = experimental.LinearAttention(8, heads=2, dim_head=4)
    x = torch.randn(2, 5, 8, requires_grad=True)
    mask = torch.rand(2 * 2, 5, 1) > 0.5
    layer(x, mask=mask).sum().backward()


attempt(FINDING, "path", "LinearAttention(x requiring grad, mask), backward", linear_attention)


def control():
    with replaced(experimental.LinearAttention, "forward",
                  rewritten(forward, [("k.masked_fill_(mask, 0.)", "k = k.masked_fill(mask, 0.)")])):
        linear_attention()


attempt(FINDING, "control", "line 40 out of place (`k = k.masked_fill(mask, 0.)`)", control)
