# source: own knowledge (a gradient-scaling / straight-through custom Function that returns its input, called through a helper)
# error: C (Output 0 of ScaleGradBackward is a view and is being modified inplace. This view was created inside a custom Function)
import torch
import torch.nn as nn


class ScaleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None


def scale_grad(x, scale):
    return ScaleGrad.apply(x, scale)


class Head(nn.Module):
    def __init__(self, dim=5):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        h = scale_grad(self.fc(x), 0.5)
        h.relu_()
        return h


def main():
    torch.manual_seed(0)
    m = Head()
    out = m(torch.randn(2, 5)).sum()
    out.backward()
    return [out.detach(), m.fc.weight.grad]
