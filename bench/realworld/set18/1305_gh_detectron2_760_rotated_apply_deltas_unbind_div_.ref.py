# reference fix for 1305: PR #760 in the library module (1305helpers_detectron2_box_regression_fixed.py): column slices
# divided out of place.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
box_regression = importlib.import_module("1305helpers_detectron2_box_regression_fixed")


def compute():
    torch.manual_seed(0)
    head = nn.Linear(16, 5)
    roi_features = torch.randn(4, 16)
    proposals = torch.tensor([[10.0, 12.0, 8.0, 4.0, 30.0],
                              [40.0, 22.0, 12.0, 6.0, -45.0],
                              [25.0, 30.0, 5.0, 9.0, 90.0],
                              [60.0, 50.0, 20.0, 10.0, 0.0]])
    gt_boxes = proposals + torch.tensor([1.0, -0.5, 1.5, 0.5, 5.0])
    transform = box_regression.Box2BoxTransformRotated(weights=(10.0, 10.0, 5.0, 5.0, 1.0))

    deltas = head(roi_features) * 0.1
    pred_boxes = transform.apply_deltas(deltas, proposals)
    loss = (pred_boxes - gt_boxes).abs().sum(1).mean()
    loss.backward()
    return {"pred_boxes": pred_boxes.detach(), "head.weight": head.weight.grad, "head.bias": head.bias.grad}


if __name__ == "__main__":
    compute()
