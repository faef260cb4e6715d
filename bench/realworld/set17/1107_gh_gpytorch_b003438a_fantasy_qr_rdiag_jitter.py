# source: https://github.com/cornellius-gp/gpytorch/commit/b003438a4755bd2e21e0b67fd0214db16761f769
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# gpytorch, gpytorch/models/exact_prediction_strategies.py, DefaultPredictionStrategy.get_fantasy_strategy (the
# fantasy models BoTorch's knowledge-gradient acquisition backpropagates through): the new inverse root comes from
# `Q, R = torch.qr(new_root)`, and when R is almost singular the code adds jitter in place through a diagonal view,
# `Rdiag = torch.diagonal(R, ...)`; `Rdiag[zeroish] = 1e-6`, overwriting the R that the QR decomposition saved for its
# backward. Commit b003438a "Fix in-place operation in get_fantasy_strategy" ("if one back-propagated through the
# fantasy model after jitter was added to the post-QR solve, this would result in autograd failures because of
# in-place modification of variables"): `jitter_diag = 1e-6 * torch.sign(Rdiag) * zeroish.to(Rdiag)` and
# `R = R + jitter_diag.unsqueeze(-1) * torch.eye(...)`. The fix adds the jitter where the original overwrote the
# entry with it, so the values differ slightly and the jittered entries keep their gradient (`differs`).
# The library module is 1107helpers_gpytorch_prediction_strategy.py (ref: ..._fixed.py).
# Stand-ins: a noise-free exact GP (jitter 1e-13) with an RBF kernel (learnable lengthscale, float64) on 4 training
# inputs; one fantasy point equal to a training input, so the Schur-complement root and hence R's last diagonal
# entry fall below 1e-6; the training root is the Cholesky factor and its inverse root the transposed inverse; loss: the
# fantasy model's predictive variance at 3 test inputs.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
strategy = importlib.import_module("1107helpers_gpytorch_prediction_strategy")


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
