# source: own knowledge (an init helper module in the style of e2cnn's nn/init.py: it writes the new values into
# the tensor it is given, `tensor[:] = ...`, and is meant for `.data` or under no_grad)
import torch


def he_init(tensor, fan_in):
    tensor[:] = torch.randn_like(tensor) * (2.0 / fan_in) ** 0.5
