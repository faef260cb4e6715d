"""Look-alike of p5: a subclass of the file overrides the builder method with one returning a
module without parameters, and the subclass is what runs: given an input that requires no grad,
the chunk written in place requires none; allowed."""
import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.net = self._head(in_dim)
        self.scale = nn.Parameter(torch.ones(3))

    def _head(self, in_dim):
        return nn.Sequential(nn.Linear(in_dim, 6))

    def quantiles(self, x):
        low, high = self.net(x).chunk(2, dim=-1)
        high += 1.0
        return torch.cat([low, high], dim=-1)[..., :3] * self.scale


class FixedCritic(Critic):
    def _head(self, in_dim):
        return nn.Sequential(nn.Identity())


def compute():
    torch.manual_seed(0)
    critic = FixedCritic(6)
    critic.quantiles(torch.randn(4, 6)).sum().backward()
    return [p.grad.flatten().tolist() for p in critic.parameters()]
