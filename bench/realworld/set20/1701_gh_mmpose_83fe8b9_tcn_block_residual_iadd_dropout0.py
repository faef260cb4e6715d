# source: https://github.com/open-mmlab/mmpose/commit/83fe8b9e521a0af930e3c726f10f9540e822d500
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# mmpose TCN backbone (VideoPose3D 2D-to-3D pose lifting), BasicTemporalBlock.forward: `out += res` adds the
# residual in place to the output of conv2 = Sequential(ConvModule(..., ReLU inplace), nn.Dropout(dropout)). With
# `dropout=0` the Dropout returns its input as-is, so `out` is the ReLU output that ReluBackward saved, and training
# fails with "modified by an inplace operation ... output 0 of ReluBackward0". Commit 83fe8b9e5 "Update TCN backbone
# (support dropout=0; fix error caused by adding residual in place)" moves the dropout out of the Sequential (applied
# only when dropout > 0) and writes `out = out + res`.
# The library module is 1701helpers_mmpose_tcn.py (ref: 1701helpers_mmpose_tcn_fixed.py).
# Stand-ins: mmcv's ConvModule (see the helper); one block of 8 -> 16 -> 8 channels, kernel 3, dilation 1, on a
# batch of 2 sequences of 9 frames; the loss is the sum of squares of the block's output.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
tcn = importlib.import_module("1701helpers_mmpose_tcn")


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
