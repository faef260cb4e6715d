# source: https://github.com/NVlabs/NVAE/commit/b57690030e56f31b890263298a7da6622f3b6d37
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# NVAE (hierarchical VAE for images), distributions.py: `soft_clamp5(x)` is `x.div_(5.).tanh_().mul(5.)`, and the
# model builds the first approximate posterior with `mu_q, log_sig_q = torch.chunk(param0, 2, dim=1)` then
# `dist = Normal(mu_q, log_sig_q)`, whose constructor calls `soft_clamp5(mu)` and `soft_clamp5(log_sigma)` on the
# chunk's outputs: "Output 0 of Split is a view and is being modified inplace. This view is the output of a function
# that returns multiple views. Such functions do not allow the output views to be modified inplace" (a warning on
# torch 1.7, an error since 1.8; the commit message quotes the TorchScript interpreter's failure). Commit b576900
# writes `return 5.0*torch.tanh( x / 5.0)`.
# The library module is 2103helpers_nvae_distributions.py (ref: ..._fixed.py); its header names its stand-ins (among
# them: the `@torch.jit.script` decorators are off, so the error is autograd's own, not wrapped by TorchScript).
# Harness (stand-ins): the first latent group of NVAE's AutoEncoder.forward (model.py of that version), with the
# encoder tower, enc0 and enc_sampler replaced by one small Conv2d each on a random 8x8 feature map, no normalizing
# flows, the prior for z0 `Normal(mu=torch.zeros_like(z), log_sigma=torch.zeros_like(z))`, a Conv2d decoder with an
# MSE reconstruction term standing in for the decoder tower and its discretized logistic, and the KL term
# `log_q - log_p` summed as in NVAE's loss; one Adamax step (NVAE's optimizer).
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
distributions = importlib.import_module("2103helpers_nvae_distributions")
Normal = distributions.Normal


class FirstLatentGroup(nn.Module):  # stand-in for the parts of AutoEncoder.forward up to z0's prior
    def __init__(self, channels=8, latent_per_group=4):
        super().__init__()
        self.enc_tower = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ELU())
        self.enc0 = nn.Sequential(nn.ELU(), nn.Conv2d(channels, channels, 1), nn.ELU())
        self.enc_sampler = nn.ModuleList([nn.Conv2d(channels, 2 * latent_per_group, 3, padding=1)])
        self.dec = nn.Conv2d(latent_per_group, 3, 3, padding=1)

    def forward(self, x):
        s = self.enc_tower(2 * x - 1.0)
        idx_dec = 0
        ftr = self.enc0(s)                            # this reduces the channel dimension
        param0 = self.enc_sampler[idx_dec](ftr)
        mu_q, log_sig_q = torch.chunk(param0, 2, dim=1)
        dist = Normal(mu_q, log_sig_q)   # for the first approx. posterior
        z, _ = dist.sample()
        log_q_conv = dist.log_p(z)
        all_q = [dist]
        all_log_q = [log_q_conv]

        # prior for z0
        dist = Normal(mu=torch.zeros_like(z), log_sigma=torch.zeros_like(z))
        log_p_conv = dist.log_p(z)
        all_p = [dist]
        all_log_p = [log_p_conv]
        logits = self.dec(z)
        return logits, all_log_q, all_log_p


def compute():
    torch.manual_seed(0)
    model = FirstLatentGroup()
    optimizer = torch.optim.Adamax(model.parameters(), 1e-2)
    x = torch.rand(4, 3, 8, 8)
    logits, log_q, log_p = model(x)
    recon_loss = ((torch.sigmoid(logits) - x) ** 2).sum(dim=[1, 2, 3])
    kl = sum((q - p).sum(dim=[1, 2, 3]) for q, p in zip(log_q, log_p))
    loss = torch.mean(recon_loss + kl)
    optimizer.zero_grad()
    loss.backward()
    out = {"%s.grad" % k: p.grad.clone() for k, p in model.named_parameters()}
    optimizer.step()
    out.update({k: p.detach().clone() for k, p in model.named_parameters()})
    out["logits"] = logits.detach()
    return out


if __name__ == "__main__":
    compute()
