# reference fix for 1007: PR #1203 in the library module (1007helpers_gpytorch_kronecker_fixed.py): `evals_ = evals_.clamp_min(0.0)`.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
kron = importlib.import_module("1007helpers_gpytorch_kronecker_fixed")


class MultitaskKroneckerGP(nn.Module):
    def __init__(self, num_tasks=2, rank=1):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.task_covar_factor = nn.Parameter(torch.randn(num_tasks, rank))
        self.raw_var = nn.Parameter(torch.zeros(num_tasks))
        self.raw_noise = nn.Parameter(torch.tensor(-1.0))

    def forward(self, x):
        lengthscale = nn.functional.softplus(self.raw_lengthscale)
        data_covar = torch.exp(-0.5 * (x[:, None] - x[None, :]) ** 2 / lengthscale ** 2)
        task_covar = self.task_covar_factor @ self.task_covar_factor.t() + torch.diag(torch.exp(self.raw_var))
        noise = nn.functional.softplus(self.raw_noise)
        return kron.KroneckerProductAddedDiagLazyTensor(kron.KroneckerProductLazyTensor(data_covar, task_covar), noise)


def compute():
    torch.manual_seed(0)
    model = MultitaskKroneckerGP()
    train_x = torch.linspace(0, 1, 5)
    train_y = torch.stack([torch.sin(6 * train_x), torch.cos(6 * train_x)], -1).reshape(-1, 1)
    loss = -kron.exact_marginal_log_likelihood(model(train_x), train_y)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
