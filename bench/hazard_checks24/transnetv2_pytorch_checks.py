"""transnetv2-pytorch 1.0.5 (transnetv2_pytorch/transnetv2_pytorch.py:594 `StackedDDCNNV2.forward`): the proven
finding of `inplacefix check` (stop 56, fresh56, end of stop). With the default stochastic-depth probability 0
(as TransNetV2 builds every stack), `x += shortcut` writes the output of `functional.relu(x)` (:582), which relu
saves for backward. Training a stack (weights that require grad, train mode) and calling backward raises: own use
(training TransNetV2). `StackedDDCNNV2`, `DilatedDCNNV2` and `Conv3DConfigurable` are compiled alone from the
shipped file."""

import _shim  # noqa: F401
import linecache
import random

import torch
import torch.nn as nn
import torch.nn.functional as functional
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("transnetv2_pytorch/transnetv2_pytorch.py")
assert linecache.getline(PATH, 594).strip() == "x += shortcut"


def run(control=False):
    ns = compile_alone(PATH, {"StackedDDCNNV2", "DilatedDCNNV2", "Conv3DConfigurable"},
                       {"torch": torch, "nn": nn, "functional": functional, "random": random},
                       replace={594: "x = x + shortcut"} if control else {})

    def go():
        torch.manual_seed(0)
        stack = ns["StackedDDCNNV2"](in_filters=3, n_blocks=2, filters=4).train()
        frames = torch.randn(1, 3, 4, 8, 8)
        stack(frames).sum().backward()
        assert stack.DDCNN[0].Conv3D_1.layers[0].weight.grad is not None
    return go


FID = "transnetv2_pytorch/transnetv2_pytorch.py:594:IPF101"
attempt(FID, "path", "a StackedDDCNNV2 (2 blocks, drop probability 0) in train mode, backward of its output: raises",
        run())
attempt(FID, "control", "the same with :594 out of place: runs", run(control=True))
