# source: own knowledge (a training script re-drawing a custom layer's nn.Parameter with the helper, grad on)
import torch
import torch.nn as nn
from initlib import he_init


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(4, 3))

    def forward(self, x):
        return x @ self.w


def build():
    net = Net()
    he_init(net.w, 3)
    return net


def main():
    torch.manual_seed(0)
    net = build()
    net(torch.randn(2, 4)).sum().backward()
    return net.w.grad
