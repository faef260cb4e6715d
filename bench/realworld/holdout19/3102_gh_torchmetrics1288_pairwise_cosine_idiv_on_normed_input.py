# source: https://github.com/Lightning-AI/torchmetrics/pull/1288 (commit 169ec1e4e1773f4c993ef27356bbf06d4cab08da; issue #1278)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# torchmetrics (metrics for PyTorch), functional/pairwise/cosine.py: _pairwise_cosine_similarity_update normalises
# its inputs with `norm = torch.norm(x, p=2, dim=1); x /= norm.unsqueeze(1)` (and the same for y, which is
# `x.clone()` when only x is given). Issue #1278 reported that the function silently rewrites the caller's tensors;
# PR #1288 ("Fix inplace operation in `pairwise_cosine_similarity`") makes both divisions out of place
# (`x = x / norm.unsqueeze(1)`). With inputs that carry a graph, the same statements are an autograd failure:
# torch.norm saved x (and y) for its backward, the in-place division bumps their versions, and a loss that
# differentiates through the metric raises "one of the variables needed for gradient computation has been modified
# by an inplace operation" at backward. The issue's report is the silent mutation (plain tensors); the fix is the same
# two lines, and the failing configuration here, the functional metric used as a differentiable term of a training
# loss (the functional API is documented as differentiable), is the reducer's stand-in.
# The library module is 3102helpers_torchmetrics_pairwise.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a two-layer encoder of width 12 producing 6 embeddings, a 3-class cross-entropy head, and a
# decorrelation term 0.1 * mean pairwise cosine similarity of the embeddings (only x given: zero diagonal, y = clone),
# one backward pass.
import importlib
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pairwise = importlib.import_module("3102helpers_torchmetrics_pairwise")


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
