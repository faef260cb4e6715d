# reference fix for 2908: PR #283 (commit 0a7fb9c) in the library module (2908helpers_mmdet3d_box3d_fixed.py):
# `self.tensor = tensor.clone()` in both box constructors.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
box3d = importlib.import_module("2908helpers_mmdet3d_box3d_fixed")


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
