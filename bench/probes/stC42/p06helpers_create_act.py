"""Activation factory of a layers package: a table of classes, in place unless told otherwise."""
import torch.nn as nn

_ACT_LAYERS = {"relu": nn.ReLU, "leaky_relu": nn.LeakyReLU, "elu": nn.ELU}


def create_act_layer(name="relu", inplace=True):
    return _ACT_LAYERS[name](inplace=inplace)
