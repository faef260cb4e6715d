"""Activation builders, one of which (GELU) saves its input rather than its result."""
import torch.nn as nn


def get_act(name):
    if name == "relu":
        return nn.ReLU(inplace=True)
    elif name == "gelu":
        return nn.GELU()
    raise ValueError(name)
