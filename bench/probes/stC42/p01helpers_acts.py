"""Activation builders shared by the probe's models (a module of its own, as in many repos)."""
import torch.nn as nn


def get_act(name):
    if name == "relu":
        return nn.ReLU(inplace=True)
    elif name == "leaky":
        return nn.LeakyReLU(0.1, inplace=True)
    elif name == "elu":
        return nn.ELU(inplace=True)
    raise ValueError(f"unknown activation {name}")
