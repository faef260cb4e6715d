# source: https://github.com/open-mmlab/mmpretrain/commit/517257a54a8663d7beb61678b126889c97d46b6f
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# mmclassification (mmpretrain) HRNet classifier neck, HRFuseScales.forward: each scale is downsampled by an mmcv
# ConvModule (conv, BN, ReLU(inplace=True) by default) and the next scale's features are then added in place,
# `feat += self.increase_layers[i + 1](x[i + 1])`; ReluBackward saved the ConvModule's output, so training an
# HRNet classifier fails with "modified by an inplace operation ... output 0 of ReluBackward0". Commit 517257a5
# "Fix a bug in backward" writes `feat = self.downsample_layers[i](feat) + self.increase_layers[i + 1](x[i + 1])`.
# The library module is 1904helpers_mmcls_hr_fuse.py (ref: ..._fixed.py); its header names its stand-ins.
# Harness (stand-in): the four HRNet-W18 branch widths (18, 36, 72, 144 channels) at 8x8, 4x4, 2x2, 1x1 from random
# inputs in place of the backbone, a batch of 2; the neck's 2048-channel output goes through global average pooling
# and a linear classifier of 10 classes (the LinearClsHead), cross-entropy on random labels.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
hr_fuse = importlib.import_module("1904helpers_mmcls_hr_fuse")


def compute():
    torch.manual_seed(0)
    in_channels = [18, 36, 72, 144]
    neck = hr_fuse.HRFuseScales(in_channels=in_channels)
    head = torch.nn.Linear(2048, 10)
    x = tuple(torch.randn(2, c, s, s) for c, s in zip(in_channels, [8, 4, 2, 1]))
    feat = neck(x)
    logits = head(torch.nn.functional.adaptive_avg_pool2d(feat, 1).flatten(1))
    loss = torch.nn.functional.cross_entropy(logits, torch.tensor([3, 7]))
    loss.backward()
    return {
        "neck.increase_layers.0.0.conv1.weight.grad": neck.increase_layers[0][0].conv1.weight.grad,
        "neck.increase_layers.3.0.conv3.weight.grad": neck.increase_layers[3][0].conv3.weight.grad,
        "neck.downsample_layers.0.conv.weight.grad": neck.downsample_layers[0].conv.weight.grad,
        "neck.downsample_layers.2.conv.bias.grad": neck.downsample_layers[2].conv.bias.grad,
        "neck.final_layer.conv.weight.grad": neck.final_layer.conv.weight.grad,
        "head.weight.grad": head.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
