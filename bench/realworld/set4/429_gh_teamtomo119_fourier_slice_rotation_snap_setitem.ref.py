# reference fix for 429: the library snaps near-zero rotation elements out of place (429helpers_torch_fourier_slice_fixed.py: `rotation_matrices = torch.where(near_zero_elements, torch.zeros_like(rotation_matrices), rotation_matrices)`), so the caller's leaf rotation matrices are not written.
import os
import sys
from importlib import import_module

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
tfs = import_module("429helpers_torch_fourier_slice_fixed")


def compute():
    torch.manual_seed(0)
    volume = torch.randn(8, 8, 8)
    targets = torch.randn(4, 8, 8)
    # the PR's identity matrices (exact zeros, snapped) plus two small random rotations (nothing to snap)
    w = torch.zeros(4, 3)
    w[2:] = 0.3 * torch.randn(2, 3)
    skew = torch.zeros(4, 3, 3)
    skew[:, 0, 1], skew[:, 0, 2], skew[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    skew = skew - skew.transpose(1, 2)
    R = torch.linalg.matrix_exp(skew).contiguous().clone().requires_grad_(True)
    projections = tfs.project_3d_to_2d(volume, R)
    loss = F.mse_loss(projections, targets)
    loss.backward()
    return {"R": R.grad}


if __name__ == "__main__":
    compute()
