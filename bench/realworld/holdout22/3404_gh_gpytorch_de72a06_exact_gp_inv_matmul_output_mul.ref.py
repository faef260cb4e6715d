# reference fix for 3404: gpytorch commit de72a06 (Fixes #67) in the library module
# (3404helpers_gpytorch_exact_gp_fixed.py): `inv_matmul(train_train_covar, train_test_covar).mul(-1)`.
import importlib
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
exact_gp = importlib.import_module("3404helpers_gpytorch_exact_gp_fixed")


def compute():
    torch.manual_seed(0)
    train_x = torch.linspace(0, 1, 12)
    train_y = torch.sin(train_x * (2 * math.pi)) + 0.2 * torch.randn(12)
    model = exact_gp.ExactGP(train_x, train_y)

    test_x = torch.rand(10, requires_grad=True)
    mean, covar = model(test_x)
    sum_of_means = mean.sum()
    sum_of_means.backward(retain_graph=True)
    mean_grad = test_x.grad.clone()
    test_x.grad = None

    sum_of_vars = covar.diagonal().sum()
    sum_of_vars.backward()
    return {
        "mean": mean.detach(),
        "var": covar.diagonal().detach(),
        "test_x.grad(mean)": mean_grad,
        "test_x.grad(var)": test_x.grad.clone(),
    }


if __name__ == "__main__":
    compute()
