# source: https://github.com/withtimesgo1115/gradCAM-YOLOv3-pytorch/issues/4
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Grad-CAM for YOLOv3 (grad_CAM.py): the detector's inference output goes through build_utils' non_max_suppression()
# (615helpers_yolov3_build_utils.py), which multiplies the class scores by the objectness in place,
# `x[..., 5:] *= x[..., 4:5]`, on the filtered prediction rows; MulBackward saved the objectness column, a slice of the
# same tensor -> "[torch.cuda.FloatTensor [5, 1]], which is output 0 of SliceBackward, is at version 2; expected
# version 0" when GradCAM calls scores.backward(gradient=one_hot_output). Fix given in the thread (confirmed by two
# users): `x[..., 5:] = x[..., 5:].clone() * x[..., 4:5].clone()`. The YOLOv3 network is replaced by a small conv
# head that emits (xywh, obj, cls) rows; the activation/gradient hooks keep GradCAM's structure.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
utils = import_module("615helpers_yolov3_build_utils")


class TinyYOLO(nn.Module):
    """Stand-in detector: conv features (hooked for Grad-CAM) and a YOLO-style inference output."""

    def __init__(self, nc=3, img=32):
        super().__init__()
        self.img = img
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 5 + nc, 1)
        self.gradients = None
        self.activations = None

    def activations_hook(self, grad):
        self.gradients = grad

    def get_activations_gradient(self):
        return self.gradients

    def get_activations_features(self):
        return [self.activations]

    def forward(self, x):
        f = self.features(x)
        self.activations = f
        f.register_hook(self.activations_hook)
        p = self.head(f).permute(0, 2, 3, 1).reshape(x.size(0), -1, self.head.out_channels)
        ny = nx = f.shape[-1]
        yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
        grid = torch.stack((xv, yv), 2).view(1, -1, 2).float()
        stride = self.img / nx
        xy = (torch.sigmoid(p[..., :2]) + grid) * stride
        wh = torch.exp(p[..., 2:4].clamp(max=3)) * stride
        return (torch.cat((xy, wh, torch.sigmoid(p[..., 4:])), -1),)


class GradCAM(object):
    def __init__(self, net):
        self.net = net
        self.net.eval()

    def __call__(self, inputs):
        output = self.net(inputs['image'])[0]
        output_nonmax = utils.non_max_suppression(output, conf_thres=0.25, iou_thres=0.45, multi_label=True)[0]
        scores = output_nonmax[:, 4]
        scores = scores.unsqueeze(0)
        idx = scores.argmax()
        one_hot_output = torch.FloatTensor(1, scores.size()[-1]).zero_()
        one_hot_output[0][idx] = 1
        self.net.zero_grad()
        scores.backward(gradient=one_hot_output, retain_graph=True)
        gradient = self.net.get_activations_gradient()
        feature = self.net.get_activations_features()[0].detach()[0]
        weights = gradient[0].mean(dim=(1, 2))
        cam = torch.relu((weights[:, None, None] * feature).sum(0))
        return cam, gradient


def compute():
    torch.manual_seed(0)
    net = TinyYOLO()
    with torch.no_grad():  # a trained detector: confident objects of plausible size
        net.head.bias[2:4] = 1.0
        net.head.bias[4] = 2.0
    grad_cam = GradCAM(net)
    image = torch.rand(1, 3, 32, 32)
    cam, gradient = grad_cam({'image': image})
    out = {n: p.grad for n, p in net.named_parameters() if p.grad is not None}
    out["feature_gradient"] = gradient
    out["cam"] = cam
    return out


if __name__ == "__main__":
    compute()
