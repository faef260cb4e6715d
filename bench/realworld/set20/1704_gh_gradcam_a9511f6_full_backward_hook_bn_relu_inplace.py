# source: https://github.com/jacobgil/pytorch-grad-cam/commit/a9511f6bbc11f3f4bba7e14548fa4ae91722752c
# pattern: inplace_kwarg
# codemod_fixable: no
# error: C
# ref_semantics: same
# pytorch-grad-cam, ActivationsAndGradients: the gradient of each target layer is recorded with
# `register_full_backward_hook`, so the target layer's output is a view returned by BackwardHookFunction; with a
# ResNet-style target (a BatchNorm whose output goes through `nn.ReLU(inplace=True)`) the forward pass fails with
# "Output 0 of BackwardHookFunctionBackward is a view and is being modified inplace". Commit a9511f6 (
# "Use forward hook instead of backward hook to avoid the incompatibility between
# backward hook and inplace operation", pytorch#61519) registers a tensor hook on the output from a forward hook.
# Not a local rewrite of the user's model: the fix is in the library's hook mechanism (the in-place ReLU stays).
# The library module is 1704helpers_gradcam_activations_and_gradients.py (ref: ..._fixed.py).
# Stand-ins: a small ResNet-style classifier (conv, BN, ReLU(inplace=True), conv, BN, ReLU(inplace=True), pool,
# linear) with the second BN as target layer, one 3x12x12 image; GradCAM's use of the recorded tensors is reduced to
# its core (channel weights = spatial mean of the gradient, cam = relu(sum of weighted activations)).
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
aag = importlib.import_module("1704helpers_gradcam_activations_and_gradients")


def compute():
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(inplace=True),
        nn.Conv2d(6, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(6, 5),
    ).eval()
    x = torch.rand(1, 3, 12, 12)
    extractor = aag.ActivationsAndGradients(model, [model[4]], None)
    outputs = extractor(x)
    model.zero_grad()
    outputs[:, outputs.argmax().item()].sum().backward(retain_graph=True)
    activations, grads = extractor.activations[0], extractor.gradients[0]
    weights = grads.mean(dim=(2, 3), keepdim=True)
    cam = torch.relu((weights * activations).sum(dim=1))
    return {"cam": cam, "gradients": grads, "activations": activations}


if __name__ == "__main__":
    compute()
