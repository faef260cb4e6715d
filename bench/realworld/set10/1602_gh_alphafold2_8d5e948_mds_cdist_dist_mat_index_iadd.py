# source: https://github.com/lucidrains/alphafold2/commit/8d5e94878a0f6b834597aa7ae352096b44b1d7b7
# pattern: subscript_augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# alphafold2 (lucidrains' AlphaFold2 replication), mds_torch: the MDS of a predicted distance matrix into 3D
# coordinates computes `dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2)` and then nudges its zeros in
# place, `dist_mat[ dist_mat == 0 ] += 1e-7`, before dividing by it; CdistBackward saved its result, so
# backpropagating from the coordinates to the predicted distances fails with "modified by an inplace operation".
# Commit 8d5e948 "solve inplace. sorry for masked_fills" clones the cdist output and writes
# `dist_mat[ dist_mat == 0 ] = 1e-7` (the same values: the entries are zero).
# The library module is 1602helpers_af2_mds.py (ref: 1602helpers_af2_mds_fixed.py).
# Stand-ins: the distogram head is a small parameter `logits` over 4 distance bins for 6 residues, turned into a
# symmetric expected-distance matrix with a zero diagonal; 3 MDS iterations, verbose=0 (the random initial coordinates
# are drawn inside mds_torch with the seeded generator); the loss is the squared norm of the MDS coordinates' pairwise
# differences to a target structure's.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
af2 = importlib.import_module("1602helpers_af2_mds")


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
