# source: https://github.com/piEsposito/blitz-bayesian-deep-learning/pull/21 (commit 6d64b1e688b2530bdd7ef7bcd4afb8a6ff2978c3)
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# BLiTZ (Bayesian Layers in Torch Zoo), blitz.modules.weight_sampler.GaussianVariational.sample: PR #19 moved the
# reparameterisation noise into a registered buffer refilled in place on every sample, `self.eps_w.normal_()`,
# and then builds `self.w = self.mu + self.sigma * self.eps_w`, so MulBackward0 saves the buffer. A network that
# runs the same Bayesian layer twice before one backward (PR #21: "siamese architectures ... when we need to
# double feedforward before gathering loss and backpropagating") refills the buffer the first pass saved, and the
# backward fails with "modified by an inplace operation". PR #21 samples through `.data`: `self.eps_w.data.normal_()`.
# That hides the write from autograd, so the first pass's gradient for rho (sigma) is computed with the second
# pass's noise: the reference runs but computes another gradient than the program states (each pass with its own
# noise), hence ref_semantics: differs (its gradients for mu are the same; for rho they differ).
# The library module is 2504helpers_blitz_bayesian.py (ref: ..._fixed.py).
# Stand-ins: a siamese regressor (BayesianLinear(4, 8) -> ReLU -> BayesianLinear(8, 3)) applied to two batches of 5
# random inputs; loss = MSE between the embedding distance and a target distance plus 1e-3 times the KL term the
# variational_estimator decorator adds (nn_kl_divergence).
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
bz = importlib.import_module("2504helpers_blitz_bayesian")


class SiameseBayesianNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.blinear1 = bz.BayesianLinear(4, 8)
        self.blinear2 = bz.BayesianLinear(8, 3)

    def embed(self, x):
        return self.blinear2(F.relu(self.blinear1(x)))

    def nn_kl_divergence(self):
        return bz.kl_divergence_from_nn(self)


def compute():
    torch.manual_seed(0)
    net = SiameseBayesianNet()
    x1, x2 = torch.randn(5, 4), torch.randn(5, 4)
    target_dist = torch.rand(5)
    e1 = net.embed(x1)
    e2 = net.embed(x2)
    dist = (e1 - e2).pow(2).sum(dim=1).sqrt()
    loss = F.mse_loss(dist, target_dist) + 1e-3 * net.nn_kl_divergence()
    loss.backward()
    s1w, s2w, s2b = net.blinear1.weight_sampler, net.blinear2.weight_sampler, net.blinear2.bias_sampler
    # the samplers hold the trained Parameters (GaussianVariational wraps mu / rho in its own nn.Parameter)
    return {"blinear1.weight_sampler.mu.grad": s1w.mu.grad,
            "blinear1.weight_sampler.rho.grad": s1w.rho.grad,
            "blinear2.weight_sampler.rho.grad": s2w.rho.grad,
            "blinear2.bias_sampler.mu.grad": s2b.mu.grad,
            "loss": loss.detach()}


if __name__ == "__main__":
    compute()
