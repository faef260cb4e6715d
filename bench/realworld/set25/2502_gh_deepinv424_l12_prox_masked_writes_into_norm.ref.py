# reference fix for 2502: PR #424 / commit 4bf6ae393 in the library module (2502helpers_deepinv_prior_fixed.py):
# the scaling factors go into a fresh `z3 = torch.ones_like(z)`, the norm output is only read.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dp = importlib.import_module("2502helpers_deepinv_prior_fixed")


class UnfoldedPGD(nn.Module):
    def __init__(self, physics, prior, n_iter=3, lam=0.3):
        super().__init__()
        self.physics = physics
        self.prior = prior
        self.lam = lam
        self.stepsize = nn.Parameter(torch.full((n_iter,), 0.05))
        self.post = nn.Linear(4, 4)

    def forward(self, y):
        A = self.physics
        x = torch.einsum("mn,bn->bm", A.t(), y).reshape(y.shape[0], 4, 4)
        for k in range(self.stepsize.shape[0]):
            residual = torch.einsum("mn,bn->bm", A, x.reshape(x.shape[0], -1)) - y
            grad = torch.einsum("mn,bn->bm", A.t(), residual).reshape(x.shape)
            x = self.prior.prox(x - self.stepsize[k] * grad, gamma=self.lam)
        return self.post(x)


def compute():
    torch.manual_seed(0)
    A = torch.randn(12, 16) / 4.0
    x_true = torch.zeros(2, 4, 4)
    x_true[0, 1] = torch.randn(4)
    x_true[1, 3] = torch.randn(4)
    y = torch.einsum("mn,bn->bm", A, x_true.reshape(2, -1)) + 0.01 * torch.randn(2, 12)
    model = UnfoldedPGD(A, dp.L12Prior(l2_axis=-1))
    x_hat = model(y)
    loss = ((x_hat - x_true) ** 2).mean()
    loss.backward()
    return {"stepsize.grad": model.stepsize.grad, "post.weight.grad": model.post.weight.grad,
            "post.bias.grad": model.post.bias.grad, "loss": loss.detach()}


if __name__ == "__main__":
    compute()
