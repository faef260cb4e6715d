# source: https://github.com/automl/Auto-PyTorch/commit/d079e04d711ff8135f9d08668d420a1812742f68
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Auto-PyTorch (AutoML for tabular / time-series data), InceptionTimeBackbone: every third inception block is followed
# by a _ResidualBlock whose forward adds the batch-normed 1x1 shortcut of the block input into the inception block's
# output with `x += shortcut`; that output is `torch.relu(self.bn(cat))`, which relu's backward saved, so any sampled
# configuration with at least three blocks fails at backward with "one of the variables needed for gradient
# computation has been modified by an inplace operation ... which is output 0 of Relu". Commit d079e04d
# ("remove inplace in inception block") writes `x = x + shortcut`, and the same commit makes the backbone test run the
# backward pass under anomaly detection for 10 sampled configurations.
# The library module is 3105helpers_autopytorch_inceptiontime.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a configuration of 3 blocks, 4 filters, kernel size 8 and bottleneck 4 (the search space's defaults are
# 5 / 32 / 32 / 32), a random batch of 2 series of length 12 with 3 features, a linear regression head on the
# time-averaged features and a mean-square loss, one backward pass.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
backbones = importlib.import_module("3105helpers_autopytorch_inceptiontime")


def compute():
    torch.manual_seed(0)
    choice = backbones.InceptionTimeBackbone(num_blocks=3, num_filters=4, kernel_size=8, bottleneck_size=4)
    backbone = choice.build_backbone(input_shape=(12, 3))
    head = nn.Linear(16, 1)
    series = torch.randn(2, 12, 3)
    target = torch.randn(2, 1)

    features = backbone(series)
    pred = head(features.mean(dim=1))
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    return {
        "loss": loss.detach(),
        "pred": pred.detach(),
        "block0.bottleneck.weight.grad": backbone.inception_block_0.bottleneck.weight.grad,
        "block2.conv1.weight.grad": backbone.inception_block_2.conv1.weight.grad,
        "residual2.shortcut.weight.grad": backbone.residual_block_2.shortcut.weight.grad,
        "head.weight.grad": head.weight.grad,
    }


if __name__ == "__main__":
    compute()
