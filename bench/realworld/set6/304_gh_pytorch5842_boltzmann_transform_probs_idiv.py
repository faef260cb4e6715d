# source: https://github.com/pytorch/pytorch/pull/5842
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch, torch/distributions/transforms.py, BoltzmannTransform._call (the transform `transform_to(constraints.simplex)`
# returned, mapping unconstrained logits to probabilities): `probs = (logprobs - logprobs.max(-1, True)[0]).exp()` then
# `probs /= probs.sum(-1, True)`; exp saved its output for backward, which the in-place division overwrites, so a loss
# through the transformed probabilities fails in `.backward()` ("one of the variables needed for gradient computation
# has been modified by an inplace operation"). PR #5842 ("[distributions] Avoid in-place ops in BoltzmannTransform",
# merged): `return probs / probs.sum(-1, True)`.
# The library module is 304helpers_boltzmann_transform.py (ref: 304helpers_boltzmann_transform_fixed.py).
# Stand-ins: the use is a one-dimensional Gaussian mixture (3 components) fitted by maximum likelihood on 40 seeded
# samples, its weights parameterised as `transform_to(constraints.simplex)(unconstrained)`, as a Pyro-style
# constrained parameter; one negative log-likelihood evaluation and backward, no optimizer step.
import importlib
import os
import sys

import torch
import torch.nn as nn
from torch.distributions import Categorical, MixtureSameFamily, Normal, constraints

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
transforms = importlib.import_module("304helpers_boltzmann_transform")


class GaussianMixture(nn.Module):
    def __init__(self, n_components):
        super(GaussianMixture, self).__init__()
        self.unconstrained_weights = nn.Parameter(torch.randn(n_components))
        self.locs = nn.Parameter(torch.linspace(-2.0, 2.0, n_components))
        self.log_scales = nn.Parameter(torch.zeros(n_components))

    def weights(self):
        return transforms.transform_to_simplex(constraints.simplex)(self.unconstrained_weights)

    def forward(self, data):
        mix = Categorical(probs=self.weights())
        comp = Normal(self.locs, self.log_scales.exp())
        return MixtureSameFamily(mix, comp).log_prob(data)


def compute():
    torch.manual_seed(0)
    data = torch.cat([torch.randn(20) * 0.5 - 1.5, torch.randn(20) * 0.7 + 1.0])
    model = GaussianMixture(3)
    loss = -model(data).sum()
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
