# reference fix for 2609: commit 0d222f4 in the library module (2609helpers_liegroups_se2_fixed.py):
# `rho = rho.unsqueeze(dim=2)`, `rot_jac = rot_jac.unsqueeze(dim=0)`, `.squeeze()`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
lg = importlib.import_module("2609helpers_liegroups_se2_fixed")


def compute():
    torch.manual_seed(0)
    xi = (0.3 * torch.randn(4, 3)).requires_grad_()
    points = torch.randn(4, 5, 2)
    observed = torch.randn(4, 5, 2)
    optimizer = torch.optim.SGD([xi], lr=0.05)
    for _ in range(3):
        optimizer.zero_grad()
        T = lg.SE2Matrix.exp(xi)
        loss = ((T.dot(points) - observed) ** 2).mean()
        loss.backward()
        optimizer.step()
    return {"xi": xi.detach().clone(), "xi.grad": xi.grad.clone(), "loss": loss.detach()}


if __name__ == "__main__":
    compute()
