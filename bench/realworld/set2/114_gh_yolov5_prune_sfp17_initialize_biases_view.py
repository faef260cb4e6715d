# source: https://github.com/xhwNobody/yolov5_prune_sfp/issues/17
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Model.__init__ -> _initialize_biases() adds the objectness/class priors through a view of each Detect conv bias,
# `b = mi.bias.view(m.na, -1); b[:, 4] += ...`, outside torch.no_grad() (upstream YOLOv5 used `b.data`). The
# in-place update on a view of a leaf Parameter raises while the model is being constructed.
import math

import torch
import torch.nn as nn


class Detect(nn.Module):
    stride = None  # strides computed during build

    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, ch=3, nc=80):
        super(Model, self).__init__()
        anchors = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119], [116, 90, 156, 198, 373, 326]]
        self.backbone = nn.ModuleList([
            nn.Sequential(nn.Conv2d(ch, 8, 3, 2, 1), nn.SiLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.SiLU(),
                          nn.Conv2d(8, 8, 3, 2, 1), nn.SiLU()),                  # P3/8
            nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.SiLU()),                 # P4/16
            nn.Sequential(nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU()),                # P5/32
        ])
        self.head_self = Detect(nc, anchors, ch=(8, 16, 16))
        self.head_self.stride = torch.tensor([8., 16., 32.])
        self.head_self.anchors /= self.head_self.stride.view(-1, 1, 1)
        self._initialize_biases()  # only run once

    def forward(self, x):
        feats = []
        for stage in self.backbone:
            x = stage(x)
            feats.append(x)
        return self.head_self(feats)

    def _initialize_biases(self, cf=None):  # initialize biases into Detect(), cf is class frequency
        m = self.head_self  # Detect() module
        for mi, s in zip(m.m, m.stride):  # from
            b = mi.bias.view(m.na, -1)  # conv.bias(255) to (3,85)
            b[:, 4] += math.log(8 / (640 / s) ** 2)  # obj (8 objects per 640 image)
            b[:, 5:] += math.log(0.6 / (m.nc - 0.99)) if cf is None else torch.log(cf / cf.sum())  # cls
            mi.bias = torch.nn.Parameter(b.view(-1), requires_grad=True)


def compute():
    torch.manual_seed(0)
    model_dst = Model(nc=2)
    out = model_dst(torch.randn(1, 3, 64, 64))
    loss = sum(o.sigmoid().pow(2).mean() for o in out)
    loss.backward()
    return {name: p.grad for name, p in model_dst.named_parameters()}


if __name__ == "__main__":
    compute()
