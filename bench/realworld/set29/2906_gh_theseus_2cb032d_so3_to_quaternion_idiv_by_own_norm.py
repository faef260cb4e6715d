# source: https://github.com/facebookresearch/theseus/commit/2cb032db17f29c37b9fde4c10fc3708b9e198c7b
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Theseus (differentiable nonlinear least squares for robotics and vision), SO3.to_quaternion as of early March 2022:
# the quaternion is assembled in `ret` by indexed writes and finally renormalised with
# `ret /= ret.norm(dim=1, keepdim=True)`; the norm saves `ret` (and its result), and the in-place division then
# overwrites it, so differentiating anything through to_quaternion fails at backward with "one of the variables needed
# for gradient computation has been modified by an inplace operation" (LinalgVectorNormBackward0's input). Commit
# 2cb032d / PR #116 ("Refactor `SO3.to_quaternion` to fix backward bugs and improve the accuracy around `pi`") rewrites
# the function: the vector part from `0.5 * sine_axis / w` written once, the near-pi rows from a separate `sel_rows`,
# and no final renormalisation. For the exact rotation matrices exp_map builds, the quaternion has unit norm as a
# function of the tangent vector, so dropping the renormalisation changes neither the values nor the gradient with
# respect to the tangent vector (up to rounding): `ref_semantics: same` for this program.
# The library module is 2906helpers_theseus_so3_quaternion.py (ref: ..._fixed.py); its header names its stand-ins.
# (A different commit and function from case 2901, which is the same library's log map.)
# Stand-ins here: a batch of four random tangent vectors (angles well away from pi) that require grad, mapped to
# rotations with SO3.exp_map, converted with to_quaternion, and a squared-distance loss to fixed target quaternions.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
so3 = importlib.import_module("2906helpers_theseus_so3_quaternion")


def compute():
    torch.manual_seed(0)
    tangent = (0.8 * torch.randn(4, 3)).requires_grad_()
    target = torch.nn.functional.normalize(torch.randn(4, 4), dim=1)

    rotation = so3.SO3.exp_map(tangent)
    quaternion = rotation.to_quaternion()
    loss = ((quaternion - target) ** 2).sum()
    loss.backward()
    return {"tangent.grad": tangent.grad, "quaternion": quaternion.detach(), "loss": loss.detach()}


if __name__ == "__main__":
    compute()
