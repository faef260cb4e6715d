# models/yolo.py at 305c6a0^ (ultralytics/yolov5, Aug 2020), reduced: Detect as in the source (its training-mode
# forward); Model is a stand-in: three small stride-8/16/32 convolution stages in place of the yaml-parsed
# YOLOv5s backbone and PANet head, with the source's stride / anchor set-up (`m.anchors /= m.stride.view(-1, 1, 1)`)
# and the attributes train.py sets on it (nc, hyp, gr).
import torch
import torch.nn as nn


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.stride = None  # strides computed during build
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))  # shape(nl,1,na,1,1,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv
        self.export = False  # onnx export

    def forward(self, x):
        z = []  # inference output
        self.training |= self.export
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        return x


class Model(nn.Module):
    def __init__(self, nc=80, anchors=((10, 13, 16, 30, 33, 23), (30, 61, 62, 45, 59, 119), (116, 90, 156, 198, 373, 326))):
        super(Model, self).__init__()
        def stage(c1, c2):
            return nn.Sequential(nn.Conv2d(c1, c2, 3, 2, 1, bias=False), nn.BatchNorm2d(c2), nn.Hardswish())
        self.stem = nn.Sequential(stage(3, 8), stage(8, 16), stage(16, 16))   # stride 8
        self.p4 = stage(16, 32)                                              # stride 16
        self.p5 = stage(32, 32)                                              # stride 32
        self.model = nn.ModuleList([self.stem, self.p4, self.p5, Detect(nc, anchors, ch=(16, 32, 32))])
        m = self.model[-1]
        s = 128  # 2x min stride
        m.stride = torch.tensor([s / x.shape[-2] for x in self.forward(torch.zeros(1, 3, s, s))])  # forward
        m.anchors /= m.stride.view(-1, 1, 1)
        self.stride = m.stride

    def forward(self, x):
        p3 = self.stem(x)
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        return self.model[-1]([p3, p4, p5])
