"""Look-alike of p1: the builder adds its layers only in a loop (spinning-up's `mlp(sizes)`),
which a one-entry size list leaves empty: the trunk is an empty Sequential, its output the
observation itself, which requires no grad; clamping its chunk in place is allowed."""
import torch
import torch.nn as nn


def mlp(sizes, act=nn.ReLU):
    layers = []
    for j in range(len(sizes) - 1):
        layers += [nn.Linear(sizes[j], sizes[j + 1]), act()]
    return nn.Sequential(*layers)


class Actor(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        self.trunk = mlp(sizes)
        self.log_alpha = nn.Parameter(torch.zeros(()))

    def sample(self, obs):
        mu, log_std = self.trunk(obs).chunk(2, dim=-1)
        log_std.clamp_(-5.0, 2.0)
        return torch.tanh(mu + log_std.exp()) * self.log_alpha.exp()


def compute():
    torch.manual_seed(0)
    actor = Actor([6])
    a = actor.sample(torch.randn(5, 6))
    a.sum().backward()
    return [p.grad.flatten().tolist() for p in actor.parameters()]
