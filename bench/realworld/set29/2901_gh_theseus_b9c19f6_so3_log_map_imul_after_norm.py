# source: https://github.com/facebookresearch/theseus/commit/b9c19f66132e6609620a0275e973c2130cf7b4e1
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Theseus (differentiable nonlinear least squares for robotics and vision), SO3._log_map_impl as of early March 2022:
# the log map writes the rotation's skew part into `ret`, takes `sine = ret.norm(dim=1)` (NormBackward saves `ret`
# and its result), then rescales the rows away from pi with `ret[not_near_pi] *= scale.view(-1, 1)` (and, for rows near
# pi, overwrites and rescales `ret` again). Differentiating anything through `log_map` then fails at backward with "one
# of the variables needed for gradient computation has been modified by an inplace operation" (LinalgVectorNormBackward0's
# input). Commit b9c19f6 / PR #109 ("Fix backpropagation bugs in SO3 and SE3 log_map") keeps the skew part in
# `sine_axis` and writes the scaled rows into a fresh `ret` (`ret[not_near_pi] = sine_axis[not_near_pi] * scale...`),
# and does the same in SE3.log_map.
# The library module is 2901helpers_theseus_so3.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a batch of four random tangent vectors (angles well away from pi) that require grad, mapped to
# rotations with SO3.exp_map and back with log_map, and a squared-distance loss to fixed target tangent vectors.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
so3 = importlib.import_module("2901helpers_theseus_so3")


def compute():
    torch.manual_seed(0)
    tangent = (0.8 * torch.randn(4, 3)).requires_grad_()
    target = 0.5 * torch.randn(4, 3)

    rotation = so3.SO3.exp_map(tangent)
    log = so3.log_map(rotation)
    loss = ((log - target) ** 2).sum()
    loss.backward()
    return {"tangent.grad": tangent.grad, "log_map": log.detach(), "loss": loss.detach()}


if __name__ == "__main__":
    compute()
