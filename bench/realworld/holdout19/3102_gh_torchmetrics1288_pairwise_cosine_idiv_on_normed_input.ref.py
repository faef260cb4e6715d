# reference fix for 3102: PR #1288 (commit 169ec1e) in the library module (3102helpers_torchmetrics_pairwise_fixed.py):
# `x = x / norm.unsqueeze(1)` and `y = y / norm.unsqueeze(1)` in _pairwise_cosine_similarity_update.
import importlib
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pairwise = importlib.import_module("3102helpers_torchmetrics_pairwise_fixed")


def compute():
    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(7, 12), nn.ReLU(), nn.Linear(12, 12))
    head = nn.Linear(12, 3)
    inputs = torch.randn(6, 7)
    labels = torch.tensor([0, 1, 2, 0, 1, 2])

    emb = encoder(inputs)
    logits = head(emb)
    sim = pairwise.pairwise_cosine_similarity(emb, reduction="mean")
    loss = F.cross_entropy(logits, labels) + 0.1 * sim.mean()
    loss.backward()
    return {
        "loss": loss.detach(),
        "sim": sim.detach(),
        "encoder.0.weight.grad": encoder[0].weight.grad,
        "encoder.2.weight.grad": encoder[2].weight.grad,
        "encoder.2.bias.grad": encoder[2].bias.grad,
        "head.weight.grad": head.weight.grad,
    }


if __name__ == "__main__":
    compute()
