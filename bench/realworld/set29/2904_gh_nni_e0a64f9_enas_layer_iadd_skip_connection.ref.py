# reference fix for 2904: commit e0a64f9 in the library module (2904helpers_nni_enas_macro_fixed.py):
# `out = out + connection` in ENASLayer.forward.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
macro = importlib.import_module("2904helpers_nni_enas_macro_fixed")

OPS = [0, 1, 4, 2, 3, 5]
SKIPS = [[], [0], [], [0, 2], [1], [3, 4]]


def compute():
    torch.manual_seed(0)
    model = macro.GeneralNetwork(num_layers=6, out_filters=8, in_channels=3, num_classes=5)
    for layer, op, skip in zip(model.layers, OPS, SKIPS):
        layer.mutable.sampled = op
        if layer.skipconnect is not None:
            layer.skipconnect.sampled = skip
    x = torch.randn(2, 3, 8, 8)
    target = torch.tensor([1, 3])

    logits = model(x)
    loss = F.cross_entropy(logits, target)
    loss.backward()
    return {
        "stem.conv.weight.grad": model.stem[0].weight.grad,
        "layer1.conv_sep.pointwise.weight.grad": model.layers[1].mutable.op_choices[1].conv.pointwise.weight.grad,
        "layer3.conv5.weight.grad": model.layers[3].mutable.op_choices[2].conv.weight.grad,
        "pool_layer0.conv1.weight.grad": model.pool_layers[0].conv1.weight.grad,
        "dense.weight.grad": model.dense.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
