"""Utilities: an activation picked from a ModuleDict of built modules."""
import torch.nn as nn


def activation_func(activation):
    return nn.ModuleDict([
        ["relu", nn.ReLU(inplace=True)],
        ["leaky_relu", nn.LeakyReLU(negative_slope=0.01, inplace=True)],
        ["selu", nn.SELU(inplace=True)],
    ])[activation]
