# source: https://github.com/ultralytics/yolov5/issues/671 (same code: WongKinYiu/yolov7#1527, jacobgil/pytorch-grad-cam#215)
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Detect.forward (inference branch) decodes boxes in place: y = x[i].sigmoid(); y[..., 0:2] = ...; y[..., 2:4] = ...
# Backpropagating through it (adversarial patch / Grad-CAM) fails: "output 0 of SigmoidBackward, is at version 2;
# expected version 0".
import torch
import torch.nn as nn


class Detect(nn.Module):
    stride = None  # strides computed during build
    export = False  # onnx export

    def __init__(self, nc=80, anchors=(), ch=()):  # detection layer
        super(Detect, self).__init__()
        self.nc = nc  # number of classes
        self.no = nc + 5  # number of outputs per anchor
        self.nl = len(anchors)  # number of detection layers
        self.na = len(anchors[0]) // 2  # number of anchors
        self.grid = [torch.zeros(1)] * self.nl  # init grid
        a = torch.tensor(anchors).float().view(self.nl, -1, 2)
        self.register_buffer('anchors', a)  # shape(nl,na,2)
        self.register_buffer('anchor_grid', a.clone().view(self.nl, 1, -1, 1, 1, 2))  # shape(nl,1,na,1,1,2)
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)  # output conv

    def forward(self, x):
        # x = x.copy()  # for profiling
        z = []  # inference output
        self.training |= self.export
        for i in range(self.nl):
            x[i] = self.m[i](x[i])  # conv
            bs, _, ny, nx = x[i].shape  # x(bs,255,20,20) to x(bs,3,20,20,85)
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()

            if not self.training:  # inference
                if self.grid[i].shape[2:4] != x[i].shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny).to(x[i].device)

                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2. - 0.5 + self.grid[i].to(x[i].device)) * self.stride[i]  # xy
                y[..., 2:4] = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]  # wh
                z.append(y.view(bs, -1, self.no))

        return x if self.training else (torch.cat(z, 1), x)

    @staticmethod
    def _make_grid(nx=20, ny=20):
        yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing='ij')
        return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()


def compute():
    torch.manual_seed(0)
    anchors = [[10, 13, 16, 30, 33, 23], [30, 61, 62, 45, 59, 119]]
    detect = Detect(nc=3, anchors=anchors, ch=(4, 8))
    detect.stride = torch.tensor([8., 16.])
    detect.eval()
    patch = torch.rand(1, 4, 4, 4, requires_grad=True)   # e.g. an adversarial patch feeding the head
    feats = [patch * 1.0, torch.randn(1, 8, 2, 2)]
    output = detect(feats)[0]  # get yolo output
    obj_loss = output[..., 4].mean() + 0.01 * output[..., :4].mean()
    obj_loss.backward()
    grads = {"patch": patch.grad}
    grads.update({name: p.grad for name, p in detect.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
