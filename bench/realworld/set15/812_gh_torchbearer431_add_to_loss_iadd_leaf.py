# source: https://github.com/pytorchbearer/torchbearer/issues/431
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# torchbearer issue #431 "Adding to loss from none criterion gives inplace modifying leaf node error" (label bug,
# closed): after #414 the loss used when a Trial has no criterion became `torch.zeros(1, requires_grad=True)` (a
# leaf that requires grad), and the `add_to_loss` callback decorator adds to it in place,
# `state[torchbearer.LOSS] += func(state)`: "a leaf Variable that requires grad is being used in an in-place
# operation". The library's fix (the decorator as torchbearer has it since): `state[torchbearer.LOSS] =
# state[torchbearer.LOSS] + func(state)`.
# The library code is in 812helpers_torchbearer.py (ref: 812helpers_torchbearer_fixed.py).
# Stand-ins: a minimal Trial (state dict, on_criterion callbacks, one optimizer step per batch) instead of
# torchbearer's Trial; the user program is a small VAE trained with criterion=None and its whole loss added by two
# add_to_loss callbacks (reconstruction and KL), the way torchbearer's VAE example adds its KL term.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
torchbearer = importlib.import_module("812helpers_torchbearer")

MU, LOGVAR = 'mu', 'logvar'


class VAE(nn.Module):
    def __init__(self, latent_size=2):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 8), nn.ReLU())
        self.mu = nn.Linear(8, latent_size)
        self.var = nn.Linear(8, latent_size)
        self.decoder = nn.Sequential(nn.Linear(latent_size, 8), nn.ReLU(), nn.Linear(8, 16), nn.Sigmoid())
        self.state = None

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return eps.mul(std).add(mu)

    def forward(self, x):
        h = self.encoder(x)
        mu, logvar = self.mu(h), self.var(h)
        z = self.reparameterize(mu, logvar)
        self.state[MU], self.state[LOGVAR] = mu, logvar
        return self.decoder(z)


@torchbearer.add_to_loss
def reconstruction(state):
    return F.binary_cross_entropy(state[torchbearer.Y_PRED], state[torchbearer.Y_TRUE], reduction='sum')


@torchbearer.add_to_loss
def kld(state):
    mu, logvar = state[MU], state[LOGVAR]
    return -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())


def compute():
    torch.manual_seed(0)
    model = VAE()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    trial = torchbearer.Trial(model, optimizer, criterion=None, callbacks=[reconstruction, kld])
    model.state = trial.state
    data = torch.rand(4, 16)
    batches = [(data[:2], data[:2]), (data[2:], data[2:])]
    state = trial.run_steps(batches)
    out = {n: p.detach().clone() for n, p in model.named_parameters()}
    out["last_loss"] = state[torchbearer.LOSS].detach()
    return out


if __name__ == "__main__":
    compute()
