# source: https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/503
# error: B (the fusion weights are an nn.Parameter, a leaf that requires grad; an in-place ReLU module writes into it)
import torch
import torch.nn as nn


class FuseFeature(nn.Module):
    def __init__(self, eps=1e-4):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.weight_relu = nn.ReLU(inplace=True)

    def forward(self, x):
        weight = self.weight_relu(self.weight)
        weight = weight / (torch.sum(weight, dim=0) + self.eps)
        return weight[0] * x[0] + weight[1] * x[1]


def main():
    torch.manual_seed(0)
    fuse = FuseFeature()
    x = [torch.randn(2, 4, 8, 8), torch.randn(2, 4, 8, 8)]
    loss = fuse(x).pow(2).mean()
    loss.backward()
    return [loss.detach(), fuse.weight.grad]
