# source: https://github.com/buggyyang/CDC_compression/issues/1
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Diffusion denoiser ResnetBlock: the time embedding is injected with `h += self.mlp(time_emb)[...]`, where h is the
# output of block1 (conv -> LayerNorm -> ReLU). ReLU saved that output for backward, so the in-place add breaks
# the backward pass (the reporter fixed it with `h = h + ...`).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def exists(x):
    return x is not None


class SinusoidalPosEmb(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        device = x.device
        half_dim = self.dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, device=device) * -emb)
        emb = x[:, None] * emb[None, :]
        emb = torch.cat((emb.sin(), emb.cos()), dim=-1)
        return emb


class LayerNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.g = nn.Parameter(torch.ones(1, dim, 1, 1))
        self.b = nn.Parameter(torch.zeros(1, dim, 1, 1))

    def forward(self, x):
        var = torch.var(x, dim=1, unbiased=False, keepdim=True)
        mean = torch.mean(x, dim=1, keepdim=True)
        return (x - mean) / (var + self.eps).sqrt() * self.g + self.b


class Block(nn.Module):
    def __init__(self, dim, dim_out, large=False):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim_out, 7 if large else 3, padding=3 if large else 1), LayerNorm(dim_out), nn.ReLU()
        )

    def forward(self, x):
        return self.block(x)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_emb_dim=None, large=False):
        super().__init__()
        self.mlp = (
            nn.Sequential(nn.LeakyReLU(0.2), nn.Linear(time_emb_dim, dim_out))
            if exists(time_emb_dim)
            else None
        )

        self.block1 = Block(dim, dim_out, large)
        self.block2 = Block(dim_out, dim_out)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb=None):
        h = self.block1(x)

        if exists(time_emb):
            h += self.mlp(time_emb)[:, :, None, None]

        h = self.block2(h)
        return h + self.res_conv(x)


class TinyDenoiser(nn.Module):
    def __init__(self, channels=3, dim=8, time_dim=16):
        super().__init__()
        self.time_mlp = nn.Sequential(SinusoidalPosEmb(dim), nn.Linear(dim, time_dim), nn.GELU())
        self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)
        self.res = ResnetBlock(dim, dim * 2, time_emb_dim=time_dim)
        self.final_conv = nn.Conv2d(dim * 2, channels, 1)

    def forward(self, x, t):
        t_emb = self.time_mlp(t)
        return self.final_conv(self.res(self.init_conv(x), t_emb))


def compute():
    torch.manual_seed(0)
    model = TinyDenoiser()
    x0 = torch.randn(2, 3, 8, 8)
    t = torch.randint(0, 100, (2,)).float()
    alpha_bar = torch.cos(t / 100 * math.pi / 2) ** 2
    noise = torch.randn_like(x0)
    x_t = alpha_bar.sqrt()[:, None, None, None] * x0 + (1 - alpha_bar).sqrt()[:, None, None, None] * noise
    loss = F.mse_loss(model(x_t, t), noise)
    loss.backward()
    return {name: p.grad for name, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
