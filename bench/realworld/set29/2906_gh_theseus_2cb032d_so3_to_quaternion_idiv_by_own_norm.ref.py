# reference fix for 2906: commit 2cb032d in the library module (2906helpers_theseus_so3_quaternion_fixed.py):
# to_quaternion rewritten without in-place updates of a saved `ret` (and without the final renormalisation).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
so3 = importlib.import_module("2906helpers_theseus_so3_quaternion_fixed")


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
