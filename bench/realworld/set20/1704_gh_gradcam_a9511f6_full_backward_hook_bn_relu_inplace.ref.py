# reference fix for 1704: commit a9511f6 in the library module (1704helpers_gradcam_activations_and_gradients_fixed.py):
# a forward hook registering a tensor hook on the target output replaces the full backward hook.
# Stand-ins: a small ResNet-style classifier (conv, BN, ReLU(inplace=True), conv, BN, ReLU(inplace=True), pool,
# linear) with the second BN as target layer, one 3x12x12 image; GradCAM's use of the recorded tensors is reduced to
# its core (channel weights = spatial mean of the gradient, cam = relu(sum of weighted activations)).
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
aag = importlib.import_module("1704helpers_gradcam_activations_and_gradients_fixed")


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
