# source: https://github.com/open-mmlab/mmflow/pull/252
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# mmflow (OpenMMLab optical flow), mmflow/models/utils/res_layer.py, BasicBlock._inner_forward as used by RAFT's
# encoders: `out = self.conv2(out); out = self.norm2(out); out = self.relu(out)` and then `out += identity`, which
# overwrites the ReLU output that ReLU saved for backward; fine-tuning RAFT fails (issue #248). PR #252 "[Fix] Fix
# in-place operator in RAFT" (merged, commit e2d907c): `out = out + identity` in BasicBlock and Bottleneck.
# The library module is 1102helpers_mmflow_res_layer.py (ref: 1102helpers_mmflow_res_layer_fixed.py).
# Stand-ins: RAFT's feature encoder is a stem conv + two BasicBlocks (the second with a strided 1x1 downsample) + a
# 1x1 output conv, 8 channels; the correlation volume of the two frames' features is the all-pairs dot product; loss:
# squared error of a 1x1-conv flow head applied to the first frame's features concatenated with the mean correlation,
# against a fixed flow.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
res_layer = importlib.import_module("1102helpers_mmflow_res_layer")


class RAFTEncoder(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, ch, 3, stride=2, padding=1)
        self.bn1 = nn.BatchNorm2d(ch)
        self.relu = nn.ReLU()
        self.layer1 = res_layer.BasicBlock(ch, ch)
        down = nn.Sequential(nn.Conv2d(ch, ch, 1, stride=2), nn.BatchNorm2d(ch))
        self.layer2 = res_layer.BasicBlock(ch, ch, stride=2, downsample=down)
        self.conv2 = nn.Conv2d(ch, ch, 1)

    def forward(self, x):
        x = self.relu(self.bn1(self.conv1(x)))
        return self.conv2(self.layer2(self.layer1(x)))


def compute():
    torch.manual_seed(0)
    encoder = RAFTEncoder()
    flow_head = nn.Conv2d(8 + 1, 2, 1)
    img1, img2 = torch.randn(2, 3, 16, 16), torch.randn(2, 3, 16, 16)
    f1, f2 = encoder(img1), encoder(img2)
    b, c, h, w = f1.shape
    corr = torch.einsum('bchw,bcuv->bhwuv', f1, f2) / c ** 0.5
    corr_mean = corr.reshape(b, h, w, -1).mean(-1).unsqueeze(1)
    flow = flow_head(torch.cat([f1, corr_mean], 1))
    loss = ((flow - torch.ones_like(flow)) ** 2).mean()
    loss.backward()
    grads = {"encoder." + n: p.grad for n, p in encoder.named_parameters()}
    grads.update({"flow_head." + n: p.grad for n, p in flow_head.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
