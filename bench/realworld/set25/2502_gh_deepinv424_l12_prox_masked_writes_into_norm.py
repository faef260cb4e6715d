# source: https://github.com/deepinv/deepinv/pull/424 (commit 4bf6ae3937618c990d496bc76da37c56f60e01f5)
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# DeepInverse (imaging inverse problems), deepinv.optim.prior.L12Prior.prox, the group soft-thresholding of the
# mixed l1/l2 prior: `z = torch.norm(x, p=2, dim=l2_axis, keepdim=True)`, then `z[mask_z] = torch.max(z[mask_z],
# tau_gamma)` and `z[mask_z] = 1 - tau_gamma / z[mask_z]` write into the norm's output, which
# LinalgVectorNormBackward0 saved. Used inside a trained unrolled algorithm the backward fails with "modified by an
# inplace operation ... output 0 of LinalgVectorNorm". PR #424 ("Making prox of Prior L12 safe with
# backpropagation") computes `z2 = max(z, gamma)`, writes the factors into a fresh `z3 = ones_like(z)` and returns
# `x * z3`.
# The library module is 2502helpers_deepinv_prior.py (ref: ..._fixed.py).
# Stand-ins: a 3-iteration unrolled proximal gradient descent (deepinv's unfolded PGD reduced to its update) for
# group-sparse recovery through a random 12x16 linear operator, signals of 2 samples x 4 groups x 4 entries with
# the l2 norm over the last axis; the trainable parameters are the per-iteration step sizes and a linear
# post-processing layer; the prox threshold gamma is a fixed float (regulariser weight 0.3).
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dp = importlib.import_module("2502helpers_deepinv_prior")


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
