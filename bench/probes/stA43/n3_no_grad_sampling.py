"""Look-alike of p1: the sampling method runs with grad off (`@torch.no_grad()`), so the chunk
it clamps in place requires no grad: allowed."""
import torch
import torch.nn as nn


def mlp(in_dim, out_dim, hidden=32):
    layers = [nn.Linear(in_dim, hidden), nn.ReLU()]
    layers.append(nn.Linear(hidden, out_dim))
    return nn.Sequential(*layers)


class GaussianActor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.trunk = mlp(obs_dim, 2 * act_dim)

    @torch.no_grad()
    def explore(self, obs):
        mu, log_std = self.trunk(obs).chunk(2, dim=-1)
        log_std.clamp_(-5.0, 2.0)
        return torch.tanh(mu + torch.randn_like(mu) * log_std.exp())


def compute():
    torch.manual_seed(0)
    actor = GaussianActor(6, 2)
    return actor.explore(torch.randn(5, 6)).flatten().tolist()
