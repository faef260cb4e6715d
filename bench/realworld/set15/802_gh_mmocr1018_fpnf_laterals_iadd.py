# source: https://github.com/open-mmlab/mmocr/pull/1018
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# mmocr PR #1018 "[Fix] inplace operator "+=" will cause RuntimeError when model backward" (merged): PSENet's FPNF
# neck (mmocr/models/textdet/necks/fpnf.py) builds the top-down path with
# `laterals[i - 1] += F.interpolate(laterals[i], size=prev_shape, mode='nearest')`; every lateral is the output of a
# ConvModule (conv + BN + ReLU), and the ReLU saved that output for backward, so the `+=` makes `loss.backward()`
# fail ("... output 0 of ReluBackward0, is at version 1; expected version 0"). (An earlier PR, #884, fixed the same
# kind of `+=` in the FPEM_FFM neck; this one is the FPNF neck.)
# Fix (PR): `laterals[i - 1] = laterals[i - 1] + F.interpolate(...)`.
# Stand-ins: mmcv's ConvModule is written out as conv + BatchNorm + ReLU (inplace=False, as in the neck's config);
# backbone features are random tensors with small channel counts; fusion_type 'concat' (PSENet's config), a
# sum-of-squares loss on the neck output.
import torch
import torch.nn.functional as F
from torch import nn


class ConvModule(nn.Module):
    """stand-in for mmcv.cnn.ConvModule(conv_cfg=None, norm_cfg=BN, act_cfg=ReLU)"""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0, inplace=False):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        return self.activate(self.bn(self.conv(x)))


class FPNF(nn.Module):
    """FPN-like fusion module in Shape Robust Text Detection with Progressive
    Scale Expansion Network."""

    def __init__(self, in_channels=[256, 512, 1024, 2048], out_channels=256, fusion_type='concat'):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.lateral_convs = nn.ModuleList()
        self.fpn_convs = nn.ModuleList()
        self.backbone_end_level = len(in_channels)
        for i in range(self.backbone_end_level):
            l_conv = ConvModule(in_channels[i], out_channels, 1, inplace=False)
            self.lateral_convs.append(l_conv)
            if i < self.backbone_end_level - 1:
                fpn_conv = ConvModule(out_channels, out_channels, 3, padding=1, inplace=False)
                self.fpn_convs.append(fpn_conv)
        self.fusion_type = fusion_type
        if self.fusion_type == 'concat':
            feature_channels = out_channels * len(in_channels)
        elif self.fusion_type == 'add':
            feature_channels = out_channels
        else:
            raise NotImplementedError
        self.output_convs = ConvModule(feature_channels, out_channels, 3, padding=1, inplace=False)

    def forward(self, inputs):
        assert len(inputs) == len(self.in_channels)
        # build laterals
        laterals = [
            lateral_conv(inputs[i])
            for i, lateral_conv in enumerate(self.lateral_convs)
        ]
        # build top-down path
        used_backbone_levels = len(laterals)
        for i in range(used_backbone_levels - 1, 0, -1):
            # step 1: upsample to level i-1 size and add level i-1
            prev_shape = laterals[i - 1].shape[2:]
            laterals[i - 1] += F.interpolate(
                laterals[i], size=prev_shape, mode='nearest')
            # step 2: smooth level i-1
            laterals[i - 1] = self.fpn_convs[i - 1](laterals[i - 1])
        # upsample and cont
        bottom_shape = laterals[0].shape[2:]
        for i in range(1, used_backbone_levels):
            laterals[i] = F.interpolate(
                laterals[i], size=bottom_shape, mode='nearest')
        if self.fusion_type == 'concat':
            out = torch.cat(laterals, 1)
        else:
            raise NotImplementedError
        out = self.output_convs(out)
        return out


def compute():
    torch.manual_seed(0)
    neck = FPNF(in_channels=[4, 8, 16, 32], out_channels=8)
    feats = [torch.randn(2, c, s, s) for c, s in zip([4, 8, 16, 32], [16, 8, 4, 2])]
    out = neck(feats)
    loss = out.pow(2).mean()
    loss.backward()
    return {n: p.grad for n, p in neck.named_parameters()}


if __name__ == "__main__":
    compute()
