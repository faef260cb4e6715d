# source: https://github.com/kornia/kornia/issues/1579
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# kornia, kornia/contrib/distance_transform.py, distance_transform: each iteration convolves `boundary` (a clone of the
# image) with `filter2d(boundary, kernel, border_type='replicate')`, whose replication pad saves its input, and then
# marks the reached pixels with `boundary[mask == 1] = 1`, overwriting the tensor the pad saved. Using the distance
# transform of a predicted mask inside an MSE loss fails at loss.backward() ("Error detected in
# ReplicationPad2DBackward", issue #1579 "Gradient computation failed for distance_transform"). The reporter's fix, PR
# #1584 "Fix gradient bug for distance_transform": `boundary = torch.where(mask == 1, torch.ones_like(boundary),
# boundary)`.
# The library module is 1105helpers_kornia_distance_transform.py (ref: ..._fixed.py).
# Stand-ins: the reporter's script (distance_transform_loss.py) is not shown; a one-layer convolutional "segmenter"
# with a sigmoid produces a soft 1 x 1 x 8 x 8 mask, and the loss is the MSE between its distance transform and the
# distance transform of a fixed target mask (computed without gradients).
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dt = importlib.import_module("1105helpers_kornia_distance_transform")


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
