# reference fix for 1601: commit 570af21 in the library module (1601helpers_mmrotate_gaussian_dist_loss_fixed.py):
# `distance = distance / scale` (and the add before it) out of place.
# 'log1p', tau 1.0, alpha 1.0, reduction 'mean', loss_weight 1.0): preprocess both box sets, gwd_loss, mean;
# 6 predicted rotated boxes (x, y, w, h, angle) regressed from a linear head on random features, and 6 targets.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
gd = importlib.import_module("1601helpers_mmrotate_gaussian_dist_loss_fixed")


def compute():
    torch.manual_seed(0)
    head = torch.nn.Linear(4, 5)
    feats = torch.randn(6, 4)
    base = torch.tensor([10.0, 10.0, 6.0, 3.0, 0.2])
    pred_boxes = base + 0.5 * head(feats)
    target_boxes = base + 0.5 * torch.randn(6, 5)
    pred = gd.xy_wh_r_2_xy_sigma(pred_boxes)
    target = gd.xy_wh_r_2_xy_sigma(target_boxes)
    loss = gd.gwd_loss(pred, target, fun='log1p', tau=1.0, alpha=1.0, normalize=True).mean() * 1.0
    loss.backward()
    return {"head.weight.grad": head.weight.grad, "head.bias.grad": head.bias.grad, "loss": loss.detach()}


if __name__ == "__main__":
    compute()
