# source: https://github.com/DataXujing/YOLO-v5/issues/23
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# YOLOv5 fork (models/yolo.py): Model.__init__() calls _initialize_biases(), which takes
# `b = mi.bias.view(m.na, -1)` (a view of a Parameter) and assigns `b[:,4] = b[:,4]+math.log(8 / (640 / s) ** 2)`
# outside torch.no_grad() -> "a view of a leaf Variable that requires grad is being used in an in-place operation"
# (torch >= 1.8). Fix posted in the thread: do the two bias updates under `with torch.no_grad():`. The class line
# is as in upstream yolov5 of the time (`b[:, 5:] += ...`); the error is raised on the obj line. Backbone/neck
# replaced by two strided convs producing the P3/P4 feature maps that Detect() consumes.
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=80, anchors=(), ch=()):
        super(Detect, self).__init__()
        self.nc = nc
        self.no = nc + 5
        self.nl = len(anchors)
        self.na = len(anchors[0]) // 2
        self.grid = [torch.zeros(1)] * self.nl
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=4, ch=3):
        super(Model, self).__init__()
        self.backbone = nn.ModuleList([nn.Conv2d(ch, 8, 3, 8, 1), nn.Conv2d(8, 16, 3, 2, 1)])
        anchors = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]]
        self.model = nn.ModuleList([Detect(nc, anchors, ch=(8, 16))])
        m = self.model[-1]
        m.stride = torch.tensor([8., 16.])
        m.anchors /= m.stride.view(-1, 1, 1)
        self.stride = m.stride
        self._initialize_biases()  # only run once

    def forward(self, x):
        p3 = torch.relu(self.backbone[0](x))
        p4 = torch.relu(self.backbone[1](p3))
        return self.model[-1]([p3, p4])

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.model[-1]  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:,4] = b[:,4]+math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def compute():
    torch.manual_seed(0)
    model = Model(nc=4)
    imgs = torch.rand(2, 3, 32, 32)
    p = model(imgs)
    loss = sum(pi[..., 4].sigmoid().mean() + pi[..., :4].pow(2).mean() for pi in p)
    loss.backward()
    out = {n: prm.grad for n, prm in model.named_parameters()}
    out.update({"init." + n: prm.detach().clone() for n, prm in model.named_parameters() if "model" in n})
    return out


if __name__ == "__main__":
    compute()
