# source: https://github.com/facebookresearch/pytorch3d/commit/3b5ab51de55aa47f6ca691dda19cf5907f168a4c
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch3D, pytorch3d/ops/laplacian_matrices.py, cot_laplacian: the cotangent Laplacian is built with in-place
# operations on intermediates that take part in autograd, `area = (...).clamp_(min=eps).sqrt()`, `cot /= 4.0` and,
# on the sparse matrix itself, `L += L.t()`. Once the sparse Laplacian is used in a backward pass (gradients to the
# vertices), backward fails ("[torch.sparse.FloatTensor [4, 4]], which is output 0 of
# SparseCooTensorWithDimsAndTensors, is at version 1; expected version 0 instead"). Commit 3b5ab51d "Fix backprop
# through cot_laplacian": `clamp_` -> `clamp`, `cot = cot / 4.0`, `L = L + L.t()`.
# The library module is 1101helpers_pytorch3d_laplacian_matrices.py (ref: ..._fixed.py).
# Stand-ins: a tetrahedron mesh (4 vertices, 4 faces) whose vertex positions are optimised; loss: the cotangent
# Dirichlet energy trace(X^T L X) of the vertex positions (L depends on the vertices, so the gradient flows through
# the Laplacian), weighted by the inverse areas.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
laplacian_matrices = importlib.import_module("1101helpers_pytorch3d_laplacian_matrices")


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
