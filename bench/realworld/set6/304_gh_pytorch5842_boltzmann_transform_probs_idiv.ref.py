# reference fix for 304: PR #5842 in the library module (304helpers_boltzmann_transform_fixed.py): `return probs / probs.sum(-1, True)`.
import importlib
import os
import sys

import torch
import torch.nn as nn
from torch.distributions import Categorical, MixtureSameFamily, Normal, constraints

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
transforms = importlib.import_module("304helpers_boltzmann_transform_fixed")


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
