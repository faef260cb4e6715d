"""A VAE whose encoder and decoder are made by module-level builders (a Sequential returned
directly, and one bound to a name first); `encode` splits the encoder's output with
torch.split and clamps the log-variance in place: a split() view."""
import torch
import torch.nn as nn


def make_encoder(in_dim, z_dim):
    return nn.Sequential(nn.Linear(in_dim, 16), nn.ELU(), nn.Linear(16, 2 * z_dim))


def make_decoder(z_dim, out_dim):
    net = nn.Sequential(nn.Linear(z_dim, 16), nn.ELU(), nn.Linear(16, out_dim))
    return net


class VAE(nn.Module):
    def __init__(self, in_dim=8, z_dim=3):
        super().__init__()
        self.z_dim = z_dim
        self.encoder = make_encoder(in_dim, z_dim)
        self.decoder = make_decoder(z_dim, in_dim)

    def encode(self, x):
        mu, logvar = torch.split(self.encoder(x), self.z_dim, dim=-1)
        logvar.clamp_(min=-10.0, max=10.0)
        return mu, logvar

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        recon = self.decoder(z)
        kl = -0.5 * (1 + logvar - mu.pow(2) - logvar.exp()).sum(-1)
        return recon, kl


def compute():
    torch.manual_seed(0)
    vae = VAE()
    x = torch.randn(4, 8)
    recon, kl = vae(x)
    loss = (recon - x).pow(2).sum(-1).mean() + kl.mean()
    loss.backward()
    return [p.grad.flatten().tolist() for p in vae.parameters()]
