"""A Gaussian actor (SAC style) whose trunk a module-level builder makes; its sampling method,
not its forward, clamps the log-std half of the trunk's output in place: a chunk() view
("... is a view and is being modified inplace")."""
import torch
import torch.nn as nn


def mlp(in_dim, out_dim, hidden=32, depth=2, act=nn.ReLU):
    layers = [nn.Linear(in_dim, hidden), act()]
    for _ in range(depth - 1):
        layers += [nn.Linear(hidden, hidden), act()]
    layers.append(nn.Linear(hidden, out_dim))
    return nn.Sequential(*layers)


class GaussianActor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.trunk = mlp(obs_dim, 2 * act_dim)

    def forward(self, obs):
        mu, _ = self.trunk(obs).chunk(2, dim=-1)
        return torch.tanh(mu)

    def sample(self, obs):
        mu, log_std = self.trunk(obs).chunk(2, dim=-1)
        log_std.clamp_(-5.0, 2.0)
        std = log_std.exp()
        eps = torch.randn_like(mu)
        u = mu + eps * std
        logp = (-0.5 * eps.pow(2) - log_std).sum(-1)
        return torch.tanh(u), logp


def compute():
    torch.manual_seed(0)
    actor = GaussianActor(6, 2)
    obs = torch.randn(5, 6)
    a, logp = actor.sample(obs)
    loss = (a.pow(2).sum(-1) + 0.1 * logp).mean()
    loss.backward()
    return [p.grad.flatten().tolist() for p in actor.parameters()]
