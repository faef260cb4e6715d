# reference fix for 1103: PR #62293 in the library module (1103helpers_torch_parametrizations_fixed.py): clone u and v before the in-place power iteration.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
parametrizations = importlib.import_module("1103helpers_torch_parametrizations_fixed")


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = parametrizations.spectral_norm(nn.Conv2d(3, 3, 3, padding=1))
        self.conv2 = parametrizations.spectral_norm(nn.Conv2d(3, 1, 3, padding=1))

    def forward(self, x):
        return self.conv2(nn.functional.leaky_relu(self.conv1(x), 0.2))


def compute():
    torch.manual_seed(0)
    D = Critic()
    D.train()
    real = torch.randn(2, 3, 8, 8)
    fake = torch.randn(2, 3, 8, 8)
    loss = D(fake).mean() - D(real).mean()
    loss.backward()
    out = {n: p.grad for n, p in D.named_parameters()}
    out.update({n: b.clone() for n, b in D.named_buffers()})
    return out


if __name__ == "__main__":
    compute()
