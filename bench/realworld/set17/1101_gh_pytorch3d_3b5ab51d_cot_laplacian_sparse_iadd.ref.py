# reference fix for 1101: commit 3b5ab51d in the library module (1101helpers_pytorch3d_laplacian_matrices_fixed.py): out-of-place clamp, division and symmetrisation.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
laplacian_matrices = importlib.import_module("1101helpers_pytorch3d_laplacian_matrices_fixed")


def compute():
    torch.manual_seed(0)
    verts = (torch.tensor([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
             + 0.05 * torch.randn(4, 3)).requires_grad_()
    faces = torch.tensor([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    L, inv_areas = laplacian_matrices.cot_laplacian(verts, faces)
    LX = torch.sparse.mm(L, verts)
    energy = (verts * LX).sum() + inv_areas.sum()
    energy.backward()
    return {"verts.grad": verts.grad, "energy": energy.detach()}


if __name__ == "__main__":
    compute()
