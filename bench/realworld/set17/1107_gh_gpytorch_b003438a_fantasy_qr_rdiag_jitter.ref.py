# reference fix for 1107: commit b003438a in the library module (1107helpers_gpytorch_prediction_strategy_fixed.py): the jitter is added out of place.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
strategy = importlib.import_module("1107helpers_gpytorch_prediction_strategy_fixed")


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.tensor(0.3, dtype=torch.float64))

    def forward(self, x1, x2):
        lengthscale = nn.functional.softplus(self.raw_lengthscale)
        return torch.exp(-0.5 * (x1[:, None] - x2[None, :]) ** 2 / lengthscale ** 2)


def compute():
    torch.manual_seed(0)
    kernel = RBFKernel()
    train_x = torch.tensor([0.0, 0.3, 0.7, 1.0], dtype=torch.float64)
    fant_x = torch.tensor([0.3], dtype=torch.float64)
    test_x = torch.tensor([0.1, 0.5, 0.9], dtype=torch.float64)
    jitter = 1e-13  # noise-free observations (a tiny jitter keeps the Cholesky factors defined)
    K = kernel(train_x, train_x) + jitter * torch.eye(4, dtype=torch.float64)
    L = torch.linalg.cholesky(K)
    L_inverse = torch.linalg.inv(L).transpose(-2, -1)
    fant_train_covar = kernel(fant_x, train_x)
    fant_fant_covar = kernel(fant_x, fant_x) + jitter
    new_root, new_covar_cache = strategy.fantasy_covar_cache(L, L_inverse, fant_train_covar, fant_fant_covar)
    full_x = torch.cat([train_x, fant_x])
    test_full = kernel(test_x, full_x)
    proj = test_full.matmul(new_covar_cache)
    pred_var = 1.0 - (proj ** 2).sum(-1)
    loss = pred_var.sum()
    loss.backward()
    return {"raw_lengthscale": kernel.raw_lengthscale.grad, "pred_var": pred_var.detach()}


if __name__ == "__main__":
    compute()
