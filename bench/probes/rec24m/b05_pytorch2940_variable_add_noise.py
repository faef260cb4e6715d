# source: https://github.com/pytorch/pytorch/issues/2940
# error: B
import torch
from torch.autograd import Variable


def perturb(noise):
    a = Variable(torch.rand(5, 5), requires_grad=True)
    a.add_(noise)
    return a


def main():
    torch.manual_seed(0)
    a = perturb(torch.randn(5, 5))
    a.sum().backward()
    return [a.detach()]
