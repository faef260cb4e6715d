# reference fix for 2901: commit b9c19f6 in the library module (2901helpers_theseus_so3_fixed.py): the skew part
# kept in `sine_axis`, `ret` a fresh tensor written once per branch.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
so3 = importlib.import_module("2901helpers_theseus_so3_fixed")


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
