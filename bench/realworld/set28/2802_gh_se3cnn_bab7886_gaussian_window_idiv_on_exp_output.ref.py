# reference fix for 2802: commit bab7886 in the library module (2802helpers_se3cnn_point_kernel_fixed.py):
# `window = window / (math.sqrt(2 * math.pi) * sigma)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pk = importlib.import_module("2802helpers_se3cnn_point_kernel_fixed")


def compute():
    torch.manual_seed(0)
    kernel = pk.SE3PointKernel([(2, 0)], [(2, 0), (1, 1)], torch.linspace(0, 2, 3), sh_backwardable=True)
    pos_out = torch.randn(4, 3)
    pos_in = torch.randn(5, 3, requires_grad=True)
    features = torch.randn(kernel.n_in, 5)

    difference_mat = pos_in.unsqueeze(0) - pos_out.unsqueeze(1)  # [N, M, 3]
    k = kernel(difference_mat)  # [n_out, n_in, N, M]
    out = torch.einsum('ijnm,jm->in', k, features)  # [n_out, N]
    loss = out.pow(2).sum()
    loss.backward()
    return {
        "pos_in.grad": pos_in.grad,
        "weight.grad": kernel.weight.grad,
        "out": out.detach(),
    }


if __name__ == "__main__":
    compute()
