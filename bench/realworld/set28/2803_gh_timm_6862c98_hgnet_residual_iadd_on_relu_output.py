# source: https://github.com/huggingface/pytorch-image-models/commit/6862c9850a4a7577ed7227f850c83153f328a066
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# timm's PP-HGNet port (timm/models/hgnet.py, added in December 2023): HGBlock concatenates its input with the outputs
# of its conv layers, aggregates them and, in every block of a stage after the first (residual=True), adds the block
# input with `x += identity`. In the V2 models (PP-HGNetV2, `agg='se'`) the aggregation ends with a ConvBNAct whose
# last op is nn.ReLU (hgnetv2_b4-b6 have no learnable affine block after it, `use_lab=False`), and ReluBackward saved
# its output, so training fails at backward with "one of the variables needed for gradient computation has been
# modified by an inplace operation" (ReluBackward0's output, version 1). (With the V1 ESE aggregation, or the
# LearnableAffineBlock of b0-b3, the last op's output is not saved, which is why it showed only in some models.)
# Commit 6862c98 ("fix backward in hgnet") writes `x = x + identity` (and passes requires_grad=True explicitly to
# the affine block's Parameters, a no-op).
# The library module is 2803helpers_timm_hgnet.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: one V2 stage at small size, as hgnetv2_b4 builds it (downsampling depthwise ConvBNAct, two HGBlocks
# of two 3x3 ConvBNAct layers, 16 -> 8 -> 16 channels, agg='se', use_lab=False), a random 2 x 16 x 8 x 8 input in
# training mode, and a linear probe on the pooled output with a cross-entropy loss.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
hgnet = importlib.import_module("2803helpers_timm_hgnet")


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
