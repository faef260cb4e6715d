# source: https://github.com/open-mmlab/mmdetection3d/pull/283
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# MMDetection3D (3D object detection), BaseInstance3DBoxes / CameraInstance3DBoxes before January 2021: the box
# constructors keep the caller's tensor as `self.tensor` and, when the boxes are given with another origin than the
# class's own (CameraInstance3DBoxes is bottom-centred, (0.5, 1.0, 0.5); a head predicting gravity centres passes
# origin=(0.5, 0.5, 0.5)), move the centres in place with `self.tensor[:, :3] += self.tensor[:, 3:6] * (dst - src)`.
# Issue #277 ("Bug in BaseInstance3DBoxes") names two consequences: ground-truth arrays overwritten through
# torch.as_tensor, and, for predictions under the gradient, "RuntimeError: one of the variables needed for gradient
# computation has been modified by an inplace operation": when the prediction tensor was already used by a loss, the
# constructor overwrites the tensor that loss saved. PR #283 (commit 0a7fb9c) keeps `self.tensor = tensor.clone()` in
# both constructors.
# The library module is 2908helpers_mmdet3d_box3d.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a linear box head on random features for 6 objects predicting (x, y, z, w, h, l, yaw) with gravity
# centres, a smooth-L1 regression loss on the raw predictions, then the predictions wrapped in CameraInstance3DBoxes
# with origin=(0.5, 0.5, 0.5) and an L1 loss of their gravity centres and heights to the targets' (a centre-consistency
# term of the kind monocular 3D heads add).
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
box3d = importlib.import_module("2908helpers_mmdet3d_box3d")


def compute():
    torch.manual_seed(0)
    head = nn.Linear(8, 7)
    feats = torch.randn(6, 8)
    target = torch.randn(6, 7)

    bbox_pred = head(feats)
    loss_reg = F.smooth_l1_loss(bbox_pred, target)
    boxes = box3d.CameraInstance3DBoxes(bbox_pred, box_dim=7, origin=(0.5, 0.5, 0.5))
    gt_boxes = box3d.CameraInstance3DBoxes(target, box_dim=7, origin=(0.5, 0.5, 0.5))
    loss_center = (boxes.gravity_center - gt_boxes.gravity_center).abs().mean() + \
        (boxes.height - gt_boxes.height).abs().mean()
    loss = loss_reg + loss_center
    loss.backward()
    return {
        "head.weight.grad": head.weight.grad,
        "head.bias.grad": head.bias.grad,
        "gravity_center": boxes.gravity_center.detach(),
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
