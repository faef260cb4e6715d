# source: https://github.com/e3nn/e3nn/commit/bab7886d7374a775802bee7d76254d74401aa177
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# se3cnn (now e3nn), se3cnn/point_kernel.py on the "point" branch: the SE(3)-equivariant point convolution kernel
# builds its radial part in `gaussian_radial_function` as one Gaussian shell per radius,
# `window = torch.exp(-.5 * ((r_field - r) / sigma)**2)`, then normalises it in place,
# `window /= (math.sqrt(2 * math.pi) * sigma)`. ExpBackward saved its output, so once the kernel is differentiated
# with respect to the geometry (the `sh_backwardable=True` option for spherical harmonics that can be backpropagated,
# added on the same branch the same days, with a difference matrix built from positions that require grad) the
# backward fails with "one of the variables needed for gradient computation has been modified by an inplace operation"
# (ExpBackward0's output, version 1). Commit bab7886 ("replace window in place operation", 2019-04-17, two minutes
# after "simplify replace condition for norm < eps") writes `window = window / (...)`.
# The library module is 2802helpers_se3cnn_point_kernel.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a scalar-and-vector kernel (Rs_in [(2, 0)], Rs_out [(2, 0), (1, 1)], three radii on [0, 2]) between
# 4 output points and 5 input points whose positions require grad (forces-style), one point convolution of random
# input features with the kernel, and a squared-sum loss.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pk = importlib.import_module("2802helpers_se3cnn_point_kernel")


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
