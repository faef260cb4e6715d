# reference fix for 2504: PR #21 / commit 6d64b1e in the library module (2504helpers_blitz_bayesian_fixed.py):
# `self.eps_w.data.normal_()` (the write hidden from autograd; see the case header for what it computes).
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
bz = importlib.import_module("2504helpers_blitz_bayesian_fixed")


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
