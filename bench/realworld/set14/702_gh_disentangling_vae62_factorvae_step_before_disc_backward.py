# source: https://github.com/YannDubs/disentangling-vae/issues/62
# pattern: optimizer_step_between
# codemod_fixable: no
# error: A
# ref_semantics: differs
# disentangling-vae, FactorVAE training (`python main.py factor_coloredmnist ...`): FactorKLoss.call_optimize
# (702helpers_losses.py, the repo's disvae/models/losses.py) runs `vae_loss.backward(retain_graph=True)` and then
# `optimizer.step()` on the VAE, and afterwards `d_tc_loss.backward()` through `d_z = self.discriminator(
# latent_sample1)`, whose graph reaches back into the encoder weights the step just changed: "[torch.FloatTensor
# [256, 20]], which is output 0 of TBackward, is at version 3; expected version 2" (since torch 1.5). The
# maintainer's fix (commit f8f64d8, linked from the issue): compute both backwards first and call optimizer.step()
# and optimizer_d.step() at the end (702helpers_losses_fixed.py). That step now also sees the gradient d_tc_loss
# put on the encoder, so the result differs from what the old order computed (ref_semantics: differs).
# Stand-ins: the disvae VAE (conv encoder/decoder) is a small MLP VAE with the same interface (forward returns
# reconstruct, latent_dist, latent_sample; sample_latent; reparameterize), on 1x4x4 images; Discriminator with
# 16 hidden units; random Bernoulli-range data for the dataloader. compute() runs one training step (Trainer._train_
# iteration calls loss_f.call_optimize for FactorVAE).
import os
import sys
from collections import defaultdict
from importlib import import_module

import torch
from torch import nn, optim

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
losses = import_module("702helpers_losses")


class VAE(nn.Module):
    def __init__(self, img_size, latent_dim):
        super(VAE, self).__init__()
        self.latent_dim = latent_dim
        self.img_size = img_size
        n = img_size[0] * img_size[1] * img_size[2]
        self.enc = nn.Sequential(nn.Flatten(), nn.Linear(n, 32), nn.ReLU())
        self.mu_logvar_gen = nn.Linear(32, self.latent_dim * 2)
        self.dec = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, n))

    def encoder(self, x):
        mu_logvar = self.mu_logvar_gen(self.enc(x))
        mu, logvar = mu_logvar.view(-1, self.latent_dim, 2).unbind(-1)
        return mu, logvar

    def decoder(self, z):
        return torch.sigmoid(self.dec(z)).view(-1, *self.img_size)

    def reparameterize(self, mean, logvar):
        if self.training:
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std)
            return mean + std * eps
        else:
            # Reconstruction mode
            return mean

    def forward(self, x):
        latent_dist = self.encoder(x)
        latent_sample = self.reparameterize(*latent_dist)
        reconstruct = self.decoder(latent_sample)
        return reconstruct, latent_dist, latent_sample

    def sample_latent(self, x):
        latent_dist = self.encoder(x)
        latent_sample = self.reparameterize(*latent_dist)
        return latent_sample


def compute():
    torch.manual_seed(0)
    img_size = (1, 4, 4)
    latent_dim = 3
    model = VAE(img_size, latent_dim)
    model.train()
    optimizer = optim.Adam(model.parameters(), lr=5e-4)
    loss_f = losses.FactorKLoss(torch.device("cpu"), gamma=6.4,
                                disc_kwargs=dict(latent_dim=latent_dim, hidden_units=16),
                                optim_kwargs=dict(lr=5e-5, betas=(0.5, 0.9)),
                                rec_dist="bernoulli", steps_anneal=0)
    data = torch.rand(8, *img_size)
    storer = defaultdict(list)
    loss_f.call_optimize(data, model, optimizer, storer)
    out = {"vae." + n: p.detach().clone() for n, p in model.named_parameters()}
    out.update({"disc." + n: p.detach().clone() for n, p in loss_f.discriminator.named_parameters()})
    return out


if __name__ == "__main__":
    compute()
