# reference fix for 1105: PR #1584 in the library module (1105helpers_kornia_distance_transform_fixed.py): torch.where instead of the masked write.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dt = importlib.import_module("1105helpers_kornia_distance_transform_fixed")


def compute():
    torch.manual_seed(0)
    segmenter = nn.Sequential(nn.Conv2d(3, 1, 3, padding=1), nn.Sigmoid())
    img = torch.randn(1, 3, 8, 8)
    target = torch.zeros(1, 1, 8, 8)
    target[:, :, 2:5, 3:6] = 1.0
    with torch.no_grad():
        target_dist = dt.distance_transform(target)
    pred = segmenter(img)
    loss = ((dt.distance_transform(pred) - target_dist) ** 2).mean()
    loss.backward()
    return {n: p.grad for n, p in segmenter.named_parameters()}


if __name__ == "__main__":
    compute()
