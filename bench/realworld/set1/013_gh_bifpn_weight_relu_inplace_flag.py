# source: https://github.com/pytorch/pytorch/issues/42525 (same module also in https://github.com/zylo117/Yet-Another-EfficientDet-Pytorch/issues/503)
# pattern: inplace_kwarg
# codemod_fixable: no
# error: B
# ref_semantics: same
# BiFPN-style fusion weights: self.weight_relu = nn.ReLU() is applied to an nn.Parameter; the traceback in the issue
# shows torch.relu_ i.e. the module's inplace flag was switched on elsewhere (here: a YOLOv5-style
# initialize_weights() that sets m.inplace = True on every ReLU), so the in-place hits the leaf parameter.
import torch
import torch.nn as nn


class Swish(nn.Module):
    def forward(self, x):
        return x * torch.sigmoid(x)


class Fusefeature(nn.Module):
    # replace concat with fusefeature
    def __init__(self, e=1e-4):    # concat, nums_input, epsilon, dimension
        super(Fusefeature, self).__init__()
        self.e = e
        self.weight = nn.Parameter(torch.ones(2, dtype=torch.float32), requires_grad=True)
        self.weight_relu = nn.ReLU()
        self.swish = Swish()

    def forward(self, x):
        weight = self.weight_relu(self.weight)
        weight = weight / (torch.sum(weight, dim=0) + self.e)
        return self.swish(weight[0] * x[0] + weight[1] * x[1])


class Model(nn.Module):
    def __init__(self):
        super(Model, self).__init__()
        self.cv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.cv2 = nn.Conv2d(3, 8, 3, padding=1)
        self.fuse = Fusefeature()

    def forward(self, x):
        return self.fuse([self.cv1(x), self.cv2(x)])


def initialize_weights(model):
    for m in model.modules():
        t = type(m)
        if t is nn.Conv2d:
            pass  # nn.init.kaiming_normal_(m.weight, mode='fan_out', nonlinearity='relu')
        elif t is nn.BatchNorm2d:
            m.eps = 1e-3
            m.momentum = 0.03
        elif t in [nn.Hardswish, nn.LeakyReLU, nn.ReLU, nn.ReLU6]:
            m.inplace = True


def compute():
    torch.manual_seed(0)
    model = Model()
    initialize_weights(model)
    out = model(torch.randn(2, 3, 8, 8))
    out.mean().backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
