# reference fix for 602: denormalize() from 602helpers_flashtorch_utils_fixed.py (channels computed out of place and
# assigned into the clone); the caller is unchanged.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
utils = import_module("602helpers_flashtorch_utils_fixed")
apply_transforms, denormalize = utils.apply_transforms, utils.denormalize
format_for_plotting, standardize_and_clip = utils.format_for_plotting, utils.standardize_and_clip


class Backprop:
    """flashtorch.saliency.Backprop, trimmed to vanilla gradients (no guided ReLU hooks)."""

    def __init__(self, model):
        self.model = model
        self.gradients = None

    def calculate_gradients(self, input_, target_class=None, take_max=False):
        self.model.zero_grad()
        output = self.model(input_)
        if target_class is None:
            _, top_class = output.topk(1, dim=1)
            target_class = top_class
        target = torch.zeros_like(output)
        target[0][target_class] = 1
        output.backward(gradient=target)
        gradients = input_.grad.detach()[0]
        if take_max:
            gradients = gradients.abs().max(dim=0, keepdim=True)[0]
        return gradients

    def visualize(self, input_, target_class, take_max=True):
        max_gradients = self.calculate_gradients(input_, target_class, take_max=True)
        # plotting (matplotlib) omitted: the images that would be shown are returned
        return (format_for_plotting(denormalize(input_)),
                format_for_plotting(standardize_and_clip(max_gradients)))


def compute():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 5))
    image = torch.rand(3, 8, 8)
    input_ = apply_transforms(image)
    backprop = Backprop(model)
    shown_input, shown_saliency = backprop.visualize(input_, target_class=2)
    grads = {n: p.grad for n, p in model.named_parameters()}
    grads["input_"] = input_.grad
    grads["shown_input"] = shown_input
    grads["shown_saliency"] = shown_saliency
    return grads


if __name__ == "__main__":
    compute()
