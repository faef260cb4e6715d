# source: https://github.com/geomstats/geomstats/commit/315c530357ed8efecbe19ef725e2749ee08e198e
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Geomstats (Riemannian geometry, NumPy / autograd / PyTorch / TensorFlow backends): the PyTorch backend's
# `set_diag(x, new_diag)` wrote the diagonal in place, `x[..., range(n), range(n)] = new_diag`, and
# _SpecialOrthogonal3Vectors.rotation_vector_from_matrix calls it on `vector_outer = 0.5 * (I + R)` with
# `gs.maximum(0., gs.diagonal(vector_outer, axis1=1, axis2=2))`: torch.max of two tensors saved the diagonal view,
# which the write changes, so the gradient of the rotation vector with respect to the matrix fails with "one of the
# variables needed for gradient computation has been modified by an inplace operation". Commit 315c5303 "remove
# inplace operation in pytorch/set_diag" makes set_diag return `diag + off_diag` (built with eye / einsum) and the
# caller assigns it, `vector_outer = gs.set_diag(...)` (the NumPy backend's set_diag now returns x as well).
# The library module is 2608helpers_geomstats_so3.py (ref: ..._fixed.py); its header names the stand-ins.
# The program (stand-in for a user's rotation regression): a linear layer maps 4 features to axis-angle vectors for
# a batch of 3, turned into rotation matrices by torch.linalg.matrix_exp of their skew matrices; the rotation
# vectors recovered by rotation_vector_from_matrix are compared with targets (squared error). compute() returns the
# layer's gradients and the recovered vectors.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
so3 = importlib.import_module("2608helpers_geomstats_so3")


def skew(v):
    zero = torch.zeros_like(v[:, 0])
    return torch.stack([torch.stack([zero, -v[:, 2], v[:, 1]], -1),
                        torch.stack([v[:, 2], zero, -v[:, 0]], -1),
                        torch.stack([-v[:, 1], v[:, 0], zero], -1)], -2)


def compute():
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 3)
    x = torch.randn(3, 4)
    rot_vec_in = 0.8 * torch.tanh(layer(x))
    rot_mat = torch.linalg.matrix_exp(skew(rot_vec_in))
    group = so3._SpecialOrthogonal3Vectors()
    rot_vec = group.rotation_vector_from_matrix(rot_mat)
    target = 0.3 * torch.randn(3, 3)
    loss = ((rot_vec - target) ** 2).sum()
    loss.backward()
    return {"layer.weight.grad": layer.weight.grad, "layer.bias.grad": layer.bias.grad,
            "rot_vec": rot_vec.detach()}


if __name__ == "__main__":
    compute()
