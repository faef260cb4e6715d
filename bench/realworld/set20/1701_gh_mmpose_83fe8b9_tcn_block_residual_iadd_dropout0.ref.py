# reference fix for 1701: commit 83fe8b9e5 in the library module (1701helpers_mmpose_tcn_fixed.py): dropout
# applied only when > 0, and `out = out + res`.
# Stand-ins: mmcv's ConvModule (see the helper); one block of 8 -> 16 -> 8 channels, kernel 3, dilation 1, on a
# batch of 2 sequences of 9 frames; the loss is the sum of squares of the block's output.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tcn = importlib.import_module("1701helpers_mmpose_tcn_fixed")


def compute():
    torch.manual_seed(0)
    block = tcn.BasicTemporalBlock(8, 8, mid_channels=16, kernel_size=3, dilation=1, dropout=0.0)
    block.train()
    x = torch.randn(2, 8, 9, requires_grad=True)
    out = block(x)
    (out ** 2).sum().backward()
    grads = {"x.grad": x.grad}
    for name, p in block.named_parameters():
        grads[name + ".grad"] = p.grad
    return grads


if __name__ == "__main__":
    compute()
