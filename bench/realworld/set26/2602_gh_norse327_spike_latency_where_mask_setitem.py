# source: https://github.com/norse/norse/pull/327 (commit 6f7f6229b907ee5c2f17a711aebbcaf1f4e0c0a6)
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Norse (spiking neural networks in PyTorch), norse/torch/functional/encode.py: spike_latency_lif_encode keeps only
# the first spike of each neuron. Each step it emits `torch.where(mask, torch.zeros_like(z), z)` and then marks the
# neurons that spiked with `mask[z.bool()] = 1`, writing in place into the boolean mask that the step's
# WhereBackward0 saved as its condition. The forward runs; training a model placed before the encoder fails at
# backward ("one of the variables needed for gradient computation has been modified by an inplace operation:
# [CPUBoolType [...]] is at version ..."). PR #327 "changed inplace spike latency encode to non-inplace" ("to allow
# backpropagation to models before encoding"): a float mask tested with `mask > 0` (a fresh tensor each step) and
# accumulated with `mask += z`.
# The library module is 2602helpers_norse_encode.py (ref: ..._fixed.py); its header names the stand-ins.
# The program (stand-in for a user's model): a linear layer with softplus maps 4 features to positive input
# currents for 6 neurons (batch 3), scaled so that most neurons fire within 12 steps; the encoded spike train is
# read out with a time-decaying weight (earlier spikes count more) and a squared error to a target. compute()
# returns the layer's gradients and the spike train.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
enc = importlib.import_module("2602helpers_norse_encode")


def compute():
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 6)
    x = torch.randn(3, 4)
    current = 2.0 + 6.0 * torch.nn.functional.softplus(layer(x))
    spikes = enc.spike_latency_lif_encode(current, seq_length=12)
    weights = torch.linspace(1.0, 0.1, 12)[:, None, None]
    score = (spikes * weights).sum(0)
    target = torch.rand(3, 6)
    loss = ((score - target) ** 2).mean()
    loss.backward()
    return {"layer.weight.grad": layer.weight.grad, "layer.bias.grad": layer.bias.grad,
            "spikes": spikes.detach()}


if __name__ == "__main__":
    compute()
