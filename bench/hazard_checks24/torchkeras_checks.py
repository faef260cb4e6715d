"""torchkeras 4.0.5 (torchkeras/vision/ssd.py:411, :412, :420, `PostProcess.scale_back_batch`): the three proven
findings of `inplacefix check` on main 97a004a (stop 52, fresh52), each "bboxes_in was saved for backward by `*` at
line 411 (for the gradient of `self.dboxes_xywh[:, :, 2:]`, which requires grad)". But `PostProcess.__init__`
builds `self.dboxes_xywh = nn.Parameter(..., requires_grad=False)` (lines 380-381): the default boxes require no
grad, so `bboxes_in[:, :, :2] * self.dboxes_xywh[:, :, 2:]` saves only the boxes (for the predictions' gradient),
and none of lines 409-423 saves `bboxes_in` or a view of it. False (all three).
`DefaultBoxes` and `PostProcess` are compiled alone from the shipped file (torchkeras' package imports its
training stack); the predictions are a product requiring grad, as the SSD head's output is."""

import _shim  # noqa: F401
import itertools
import linecache
from math import sqrt

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn, Tensor
from typing import List, Tuple
from _check import attempt
from _fresh52 import compile_alone, src

SRC = src("torchkeras/vision/ssd.py")
assert linecache.getline(SRC, 380).strip() == "self.dboxes_xywh = nn.Parameter(dboxes(order='xywh').unsqueeze(dim=0),"
assert linecache.getline(SRC, 381).strip() == "requires_grad=False)"
assert linecache.getline(SRC, 411).strip().startswith("bboxes_in[:, :, :2] = bboxes_in[:, :, :2] * self.dboxes_xywh[:, :, 2:]")
assert linecache.getline(SRC, 412).strip().startswith("bboxes_in[:, :, 2:] = bboxes_in[:, :, 2:].exp() * self.dboxes_xywh[:, :, 2:]")
assert linecache.getline(SRC, 420).strip().startswith("bboxes_in[:, :, 0] = l")


def run(replace):
    def go():
        ns = compile_alone(SRC, {"DefaultBoxes", "PostProcess"},
                           {"torch": torch, "F": F, "nn": nn, "Tensor": Tensor, "np": np, "sqrt": sqrt,
                            "itertools": itertools, "Tuple": Tuple, "List": List}, replace=replace)
        dboxes = ns["DefaultBoxes"](64, [4, 2], [16, 32], [21, 45, 99], [[2], [2]])
        pp = ns["PostProcess"](dboxes)
        n_anchors = pp.dboxes_xywh.shape[1]
        torch.manual_seed(0)
        w = torch.randn(4, 4, requires_grad=True)
        bboxes_in = torch.einsum("ij,bja->bia", w, torch.randn(2, 4, n_anchors))  # [N, 4, anchors], a non-leaf
        scores_in = torch.randn(2, 3, n_anchors, requires_grad=True)
        boxes, scores = pp.scale_back_batch(bboxes_in, scores_in)
        (boxes.sum() + scores[..., 1:].sum()).backward()
    return go


for n in (411, 412, 420):
    f = f"torchkeras/vision/ssd.py:{n}:IPF104"
    attempt(f, "path", "PostProcess(DefaultBoxes) as built (boxes frozen), scale_back_batch on predictions requiring "
            "grad, backward", run({}))
    attempt(f, "context", "the default boxes built with requires_grad=True (never so in torchkeras): raises",
            run({380: "self.dboxes_xywh = nn.Parameter(dboxes(order='xywh').unsqueeze(dim=0), requires_grad=True)"}))
