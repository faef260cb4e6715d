# source: https://github.com/microsoft/nni/commit/e0a64f954a301c075043f6e97eca7e4c9c68b8e7
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NNI (neural architecture search), the one-shot ENAS macro search space (examples/nas/oneshot/enas/macro.py): each
# ENASLayer runs the candidate op the trainer sampled (`out = self.mutable(prev_layers[-1])`) and, when the sampled
# skip connections are not empty, adds them with `out += connection`. A convolution branch ends in BatchNorm + ReLU,
# so `out` is ReLU's output, which ReluBackward saved: a training step with such an architecture fails at backward with
# "one of the variables needed for gradient computation has been modified by an inplace operation" (output 0 of
# ReluBackward0). (With a pooling branch, which ends in BatchNorm, the update passes.) Commit e0a64f9 / PR #4371 ("Fix
# Retiarii version issues on full test") writes `out = out + connection` (and raises the pytorch-lightning pin).
# The library module is 2904helpers_nni_enas_macro.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a six-layer network with 8 filters on a random 2 x 3 x 8 x 8 batch in training mode, one sampled
# architecture set on the choice modules (op per layer; skip connections per layer), and a cross-entropy loss.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
macro = importlib.import_module("2904helpers_nni_enas_macro")

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
