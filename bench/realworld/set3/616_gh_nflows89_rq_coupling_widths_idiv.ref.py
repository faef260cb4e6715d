# reference fix for 616 (the reporter's fix): out-of-place scaling in 616helpers_nflows_coupling_fixed.py
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
coupling = import_module("616helpers_nflows_coupling_fixed")


class Conditioner(nn.Module):
    def __init__(self, in_features, out_features, hidden_features=16):
        super().__init__()
        self.hidden_features = hidden_features
        self.net = nn.Sequential(nn.Linear(in_features, hidden_features), nn.ReLU(),
                                 nn.Linear(hidden_features, out_features), nn.ReLU())

    def forward(self, inputs, context=None):
        return self.net(inputs)


def compute():
    torch.manual_seed(0)
    layers = nn.ModuleList([
        coupling.PiecewiseRationalQuadraticCouplingTransform(
            mask=torch.tensor([1, 0]), transform_net_create_fn=lambda i, o: Conditioner(i, o),
            num_bins=8, tails="linear", tail_bound=3.0),
        coupling.PiecewiseRationalQuadraticCouplingTransform(
            mask=torch.tensor([0, 1]), transform_net_create_fn=lambda i, o: Conditioner(i, o),
            num_bins=8, tails="linear", tail_bound=3.0),
    ])
    x = torch.randn(32, 2) * torch.tensor([1.0, 0.5]) + torch.tensor([0.3, -0.2])
    z, total_logabsdet = x, torch.zeros(32)
    for layer in layers:
        z, logabsdet = layer(z)
        total_logabsdet = total_logabsdet + logabsdet
    log_prob = -0.5 * (z ** 2).sum(1) - z.shape[1] * 0.5 * torch.log(torch.tensor(2 * torch.pi)) + total_logabsdet
    loss = -log_prob.mean()
    loss.backward()
    return {n: p.grad for n, p in layers.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
