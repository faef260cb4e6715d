# reference fix for 1602: commit 8d5e948 in the library module (1602helpers_af2_mds_fixed.py): the cdist output
# cloned, its zeros assigned.
# are drawn inside mds_torch with the seeded generator); the loss is the squared norm of the MDS coordinates' pairwise
# differences to a target structure's.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
af2 = importlib.import_module("1602helpers_af2_mds_fixed")


def compute():
    torch.manual_seed(0)
    n = 6
    logits = torch.randn(n, n, 4, requires_grad=True)
    bins = torch.tensor([2.0, 4.0, 6.0, 8.0])
    probs = torch.softmax((logits + logits.transpose(0, 1)) / 2, dim=-1)
    dist = (probs * bins).sum(-1) * (1 - torch.eye(n))
    coords, stress = af2.mds_torch(dist, iters=3, verbose=0)
    target = torch.randn(1, 3, n) * 3
    d_pred = torch.cdist(coords.transpose(-1, -2), coords.transpose(-1, -2))
    d_true = torch.cdist(target.transpose(-1, -2), target.transpose(-1, -2))
    loss = ((d_pred - d_true) ** 2).mean()
    loss.backward()
    return {"logits.grad": logits.grad, "coords": coords.detach()}


if __name__ == "__main__":
    compute()
