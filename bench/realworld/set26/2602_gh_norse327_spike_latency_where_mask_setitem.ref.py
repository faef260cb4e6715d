# reference fix for 2602: PR #327 (commit 6f7f6229) in the library module (2602helpers_norse_encode_fixed.py):
# a float mask, `torch.where(mask > 0, zeros_mask, z)`, `mask += z`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
enc = importlib.import_module("2602helpers_norse_encode_fixed")


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
