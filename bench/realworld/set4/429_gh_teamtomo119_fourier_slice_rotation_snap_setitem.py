# source: https://github.com/teamtomo/teamtomo/pull/119
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# torch-fourier-slice (teamtomo, cryo-EM projection by central-slice extraction), culprit in the library module
# (429helpers_torch_fourier_slice.py): extract_central_slices_rfft_3d snaps near-zero rotation-matrix elements to
# zero in place, `rotation_matrices = rotation_matrices.to(torch.float32)` followed by
# `rotation_matrices[near_zero_elements] = 0.0`. For float32 input `.to` returns the caller's tensor, so the write
# lands on the rotation matrices the user optimises: the PR's reproduction, `R = torch.eye(3).expand(4, 3,
# 3).contiguous().clone().requires_grad_(True); project_3d_to_2d(volume, R)`, raises "a leaf Variable that requires
# grad is being used in an in-place operation". The PR ("stop writing into the caller's rotation matrices") makes
# the snap out of place; the fixed helper uses torch.where (the PR's exact diff was not in the stored snapshot).
# Pose refinement as in the PR's motivation: project a reference volume with learnable rotations and compare to
# target projections (two of the PR's identity matrices, two small random rotations, one leaf tensor). The helper keeps the package's code path with its einops / torch_grid_utils /
# torch_image_interpolation dependencies replaced by small torch stand-ins (see its docstring).
import os
import sys
from importlib import import_module

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
tfs = import_module("429helpers_torch_fourier_slice")


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
