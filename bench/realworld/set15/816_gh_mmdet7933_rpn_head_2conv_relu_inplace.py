# source: https://github.com/open-mmlab/mmdetection/issues/7933
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# mmdetection 2.x, mmdet/models/dense_heads/rpn_head.py: with `rpn_head=dict(num_convs=2)` (the reporter's config,
# mask_rcnn_r50_fpn_syncbn-all_rpn-2conv_ssj_scp_32x2_270k_coco.py), `self.rpn_conv` is an nn.Sequential of two
# mmcv ConvModules whose activation is `nn.ReLU(inplace=True)` (ConvModule's default), and forward_single then does
# `x = F.relu(x, inplace=True)` on the output of the second ConvModule's ReLU, which ReluBackward0 saved: "one of
# the variables needed for gradient computation has been modified by an inplace operation" at backward. With the
# default num_convs=1 `rpn_conv` is a plain Conv2d and it trains. The fix given in the thread (shinya7y, confirmed
# for `model.rpn_head.num_convs=2`): `x = F.relu(x, inplace=False)` in forward_single; PR #8439, which closes the
# issue, fixed rpn_head too: mmdet's rpn_head now builds the ConvModules with `inplace=False` and calls
# `x = F.relu(x)`.
# Stand-ins: mmcv's ConvModule reduced to conv + ReLU (no norm, as RPNHead builds it); AnchorHead reduced to the
# layers and the multi-level forward; the anchor assignment and losses are replaced by a sum-of-squares loss over
# the scores and deltas of three FPN levels with 16 channels.
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def multi_apply(func, *args, **kwargs):
    pfunc = partial(func, **kwargs) if kwargs else func
    map_results = map(pfunc, *args)
    return tuple(map(list, zip(*map_results)))


class ConvModule(nn.Module):
    """mmcv.cnn.ConvModule stand-in: conv -> activation, `inplace` passed to the activation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, inplace=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=True)
        self.with_activation = True
        self.activate = nn.ReLU(inplace=inplace)

    def forward(self, x):
        x = self.conv(x)
        if self.with_activation:
            x = self.activate(x)
        return x


class AnchorHead(nn.Module):
    def __init__(self, num_classes, in_channels, feat_channels=16, num_anchors=3):
        super().__init__()
        self.in_channels = in_channels
        self.num_classes = num_classes
        self.feat_channels = feat_channels
        self.use_sigmoid_cls = True
        self.cls_out_channels = num_classes
        self.num_base_priors = num_anchors
        self._init_layers()

    def forward(self, feats):
        return multi_apply(self.forward_single, feats)


class RPNHead(AnchorHead):
    def __init__(self, in_channels, num_convs=1, **kwargs):
        self.num_convs = num_convs
        super(RPNHead, self).__init__(1, in_channels, **kwargs)

    def _init_layers(self):
        """Initialize layers of the head."""
        if self.num_convs > 1:
            rpn_convs = []
            for i in range(self.num_convs):
                if i == 0:
                    in_channels = self.in_channels
                else:
                    in_channels = self.feat_channels
                rpn_convs.append(
                    ConvModule(
                        in_channels,
                        self.feat_channels,
                        3,
                        padding=1))
            self.rpn_conv = nn.Sequential(*rpn_convs)
        else:
            self.rpn_conv = nn.Conv2d(
                self.in_channels, self.feat_channels, 3, padding=1)
        self.rpn_cls = nn.Conv2d(self.feat_channels,
                                 self.num_base_priors * self.cls_out_channels,
                                 1)
        self.rpn_reg = nn.Conv2d(self.feat_channels, self.num_base_priors * 4, 1)

    def forward_single(self, x):
        """Forward feature map of a single scale level."""
        x = self.rpn_conv(x)
        x = F.relu(x, inplace=True)
        rpn_cls_score = self.rpn_cls(x)
        rpn_bbox_pred = self.rpn_reg(x)
        return rpn_cls_score, rpn_bbox_pred


def compute():
    torch.manual_seed(0)
    head = RPNHead(16, num_convs=2)
    feats = [torch.randn(2, 16, s, s) for s in (16, 8, 4)]
    cls_scores, bbox_preds = head(feats)
    loss = sum(c.pow(2).mean() for c in cls_scores) + sum(b.pow(2).mean() for b in bbox_preds)
    loss.backward()
    out = {n: p.grad for n, p in head.named_parameters()}
    out["cls_scores_0"] = cls_scores[0].detach()
    return out


if __name__ == "__main__":
    compute()
