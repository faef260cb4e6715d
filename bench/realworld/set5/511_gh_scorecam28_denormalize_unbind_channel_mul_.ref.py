# reference fix for 511 (hayleeXinyi in the issue): denormalize writes each channel back out of place
# (denormalized[0][count] = denormalized[0][count].mul(std) / .add(mean)); see 511helpers_utils_fixed.py.
import importlib.util
import os

import torch
import torch.nn as nn


def _load(name):
    spec = importlib.util.spec_from_file_location(
        "utils", os.path.join(os.path.dirname(os.path.abspath(__file__)), name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


utils = _load("511helpers_utils_fixed.py")


def compute():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(4, 5)).eval()
    input_image = torch.rand(3, 16, 16)
    input_ = utils.apply_transforms(input_image)
    scores = model(input_)
    predicted_class = scores.max(1)[-1]
    scores[0, predicted_class].backward()
    saliency_map = input_.grad.abs().sum(1, keepdim=True)
    input_.grad = None

    image, heat = utils.basic_visualize(input_, saliency_map)

    denorm = utils.denormalize(input_)
    w = torch.linspace(-1, 1, denorm.numel()).view_as(denorm)
    (denorm * w).sum().backward()
    return {"image": image, "heat": heat, "input_.grad": input_.grad.clone()}


if __name__ == "__main__":
    compute()
