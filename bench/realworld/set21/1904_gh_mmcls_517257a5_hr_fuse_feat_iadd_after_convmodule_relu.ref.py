# reference fix for 1904: commit 517257a5 in the library module (1904helpers_mmcls_hr_fuse_fixed.py):
# `feat = self.downsample_layers[i](feat) + self.increase_layers[i + 1](x[i + 1])`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
hr_fuse = importlib.import_module("1904helpers_mmcls_hr_fuse_fixed")


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
