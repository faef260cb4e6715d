# source: https://github.com/cornellius-gp/gpytorch/pull/1203
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# gpytorch, gpytorch/lazy/kronecker_product_lazy_tensor.py, KroneckerProductLazyTensor._symeig: for each Kronecker
# factor `evals_, evecs_ = eval_tensor.double().symeig(eigenvectors=eigenvectors)` and then "we chop any negative
# eigenvalues" with `evals_.clamp_min_(0.0)`, an in-place clamp of the eigenvalues that the eigen-decomposition saved
# for its backward. Training a Kronecker-structured (multitask) GP through the exact marginal log likelihood fails
# ("In place backwards fails in the MLL call"). PR #1203 "[Bug] In place _symeig clamping fails to have correct
# backwards" (merged): `evals_ = evals_.clamp_min(0.0)`.
# The library module is 1007helpers_gpytorch_kronecker.py (ref: 1007helpers_gpytorch_kronecker_fixed.py).
# Stand-ins: a two-task GP on 5 inputs; data covariance an RBF kernel with a learnable lengthscale, task covariance
# W W^T + diag(exp(v)) (IndexKernel), learnable noise; loss: negative exact marginal log likelihood.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
kron = importlib.import_module("1007helpers_gpytorch_kronecker")


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
