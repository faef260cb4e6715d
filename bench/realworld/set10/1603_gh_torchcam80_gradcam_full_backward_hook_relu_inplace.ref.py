# reference fix for 1603: commit 8a39f07 (PR #80) in the library module (1603helpers_torchcam_gradcam_fixed.py): a
# forward hook registering a tensor hook on the target output replaces the full backward hook.
# Stand-ins: the PR's own unit-test model (conv, ReLU, conv, ReLU(inplace=True), pool, flatten, linear), hooked at
# layer '2' before the in-place ReLU, on one 3x16x16 image instead of the 224x224 mock image.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
gradcam = importlib.import_module("1603helpers_torchcam_gradcam_fixed")


def compute():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 8, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d((1, 1)),
        nn.Flatten(1),
        nn.Linear(8, 10)
    )
    img = torch.rand(1, 3, 16, 16)
    # Hook before the inplace ops
    extractor = gradcam.GradCAM(model, '2')
    scores = model(img)
    cam = extractor(scores[0].argmax().item(), scores)
    return {"cam": cam, "hook_g": extractor.hook_g}


if __name__ == "__main__":
    compute()
