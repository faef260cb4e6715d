# reference fix for 2605: commit dd2b3bd in the library module (2605helpers_piq_brisque_fixed.py):
# `x = x / data_range`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pm = importlib.import_module("2605helpers_piq_brisque_fixed")


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
