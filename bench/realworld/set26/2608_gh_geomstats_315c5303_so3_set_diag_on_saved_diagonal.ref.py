# reference fix for 2608: commit 315c5303 in the library module (2608helpers_geomstats_so3_fixed.py):
# set_diag returns `diag + off_diag`, and `vector_outer = gs.set_diag(...)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
so3 = importlib.import_module("2608helpers_geomstats_so3_fixed")


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
