# source: https://github.com/open-mmlab/mmrotate/commit/570af21431fe83f1f02d73d2a166fde9be72b440
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# MMRotate (rotated object detection), gwd_loss (Gaussian Wasserstein distance loss, GDLoss(loss_type='gwd')): the
# distance is `(xy_distance + alpha * alpha * whr_distance).clamp(0).sqrt()` and then normalised in place,
# `distance /= scale`; SqrtBackward saved its output, so the detector's backward fails with "modified by an inplace
# operation ... output 0 of SqrtBackward0". Commit 570af21 "rm inplace operation in gwd" writes
# `distance = distance / scale` (and `whr_distance = whr_distance + ...` for the augmented add before it).
# The library module is 1601helpers_mmrotate_gaussian_dist_loss.py (ref: ..._fixed.py).
# Stand-ins: GDLoss.forward reduced to what it does for gwd with the defaults (representation 'xy_wh_r', fun
# 'log1p', tau 1.0, alpha 1.0, reduction 'mean', loss_weight 1.0): preprocess both box sets, gwd_loss, mean;
# 6 predicted rotated boxes (x, y, w, h, angle) regressed from a linear head on random features, and 6 targets.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
gd = importlib.import_module("1601helpers_mmrotate_gaussian_dist_loss")


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
