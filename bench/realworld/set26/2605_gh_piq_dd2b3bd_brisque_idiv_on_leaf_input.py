# source: https://github.com/photosynthesis-team/piq/commit/dd2b3bd4c6c2641715d9a42dda934209c143383a
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# PIQ (PyTorch Image Quality, then "photosynthesis.metrics"), photosynthesis_metrics/brisque.py: `brisque` (and
# BRISQUELoss, which calls it) normalises its input in place, `x /= data_range`, right after
# `_adjust_dimensions`, which returns the caller's tensor itself for a 4-D batch. Used as a loss on an image that
# requires grad (the class docstring: `prediction = torch.rand(3, 3, 256, 256, requires_grad=True)`,
# `loss(prediction).backward()`) it raises "a leaf Variable that requires grad is being used in an in-place
# operation". Commit dd2b3bd "fix(brisque): Avoid inplace to use backward." writes `x = x / data_range`.
# The library module is 2605helpers_piq_brisque.py (ref: ..._fixed.py); its header names the stand-ins.
# The program follows the BRISQUELoss docstring at a smaller size: a batch of 2 RGB images 32 x 32 from
# torch.rand with requires_grad, the loss with its defaults (data_range 1.0, mean), backward; the SVR weights are
# a seeded stand-in (20 support vectors of 36 features, coefficients 100 * randn). compute() returns the image's
# gradient and the loss.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pm = importlib.import_module("2605helpers_piq_brisque")


def compute():
    torch.manual_seed(0)
    sv = torch.rand(20, 36) * 2 - 1
    sv_coef = 100.0 * torch.randn(20)
    loss = pm.BRISQUELoss(sv_coef, sv)
    prediction = torch.rand(2, 3, 32, 32, requires_grad=True)
    output = loss(prediction)
    output.backward()
    return {"prediction.grad": prediction.grad, "loss": output.detach()}


if __name__ == "__main__":
    compute()
