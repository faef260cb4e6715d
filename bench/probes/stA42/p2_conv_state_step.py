# A causal depthwise convolution run one token at a time (as state-space / conv blocks do in
# their step mode): the window of the last tokens is shifted in place and the new token
# written into its last slot, then the window is multiplied with the kernel.
import torch
from torch import nn


class ConvStep(nn.Module):
    def __init__(self, dim, width=3):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(dim, width))

    def step(self, x, window):
        window.copy_(torch.roll(window, shifts=-1, dims=-1))
        window[:, :, -1] = x
        y = torch.sum(window * self.weight, dim=-1)
        return y, window


def compute():
    torch.manual_seed(0)
    conv = ConvStep(4)
    xs = torch.randn(5, 2, 4)
    window = torch.zeros(2, 4, 3)
    outs = []
    for t in range(5):
        y, window = conv.step(xs[t], window)
        outs.append(y)
    torch.stack(outs).pow(2).sum().backward()
    return conv.weight.grad
