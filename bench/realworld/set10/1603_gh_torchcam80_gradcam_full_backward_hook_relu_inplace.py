# source: https://github.com/frgfm/torch-cam/commit/8a39f07757046e256a28bf65df96e52258d19401
# pattern: inplace_kwarg
# codemod_fixable: no
# error: C
# ref_semantics: same
# TorchCAM (class activation maps), _GradCAM: the extractor reads the target layer's output gradient through
# `register_full_backward_hook`, so the layer's output is a view returned by BackwardHookFunction; the model's
# `nn.ReLU(inplace=True)` right after the target conv then fails in the forward pass with "Output 0 of
# BackwardHookFunctionBackward is a view and is being modified inplace". Commit 8a39f07 "Fixed grad storage for
# architectures with inplace ops" (PR #80 "Fixed gradient-based CAMs for architectures with inplace ops", issue #72)
# replaces the module backward hook by a forward hook that registers a tensor hook on the output. Not a local rewrite
# of the user's model: the fix is in the library's hook mechanism (the in-place ReLU stays).
# The library module is 1603helpers_torchcam_gradcam.py (ref: 1603helpers_torchcam_gradcam_fixed.py).
# Stand-ins: the PR's own unit-test model (conv, ReLU, conv, ReLU(inplace=True), pool, flatten, linear), hooked at
# layer '2' before the in-place ReLU, on one 3x16x16 image instead of the 224x224 mock image.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
gradcam = importlib.import_module("1603helpers_torchcam_gradcam")


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
