# reference fix for 2803: commit 6862c98 in the library module (2803helpers_timm_hgnet_fixed.py):
# `x = x + identity` in HGBlock.forward.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
hgnet = importlib.import_module("2803helpers_timm_hgnet_fixed")


def compute():
    torch.manual_seed(0)
    stage = hgnet.HGStage(16, 8, 16, block_num=2, layer_num=2, downsample=True, light_block=False, kernel_size=3,
                          use_lab=False, agg='se')
    head = torch.nn.Linear(16, 5)
    x = torch.randn(2, 16, 8, 8)
    target = torch.tensor([1, 3])

    feats = stage(x)
    logits = head(feats.mean((2, 3)))
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return {
        "downsample.conv.weight.grad": stage.downsample.conv.weight.grad,
        "block0.layer0.conv.weight.grad": stage.blocks[0].layers[0].conv.weight.grad,
        "block1.aggregation1.conv.weight.grad": stage.blocks[1].aggregation[1].conv.weight.grad,
        "head.weight.grad": head.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
