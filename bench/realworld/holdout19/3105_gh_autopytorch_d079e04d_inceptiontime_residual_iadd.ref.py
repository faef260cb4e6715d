# reference fix for 3105: commit d079e04d in the library module (3105helpers_autopytorch_inceptiontime_fixed.py):
# `x = x + shortcut` in _ResidualBlock.forward.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
backbones = importlib.import_module("3105helpers_autopytorch_inceptiontime_fixed")


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
