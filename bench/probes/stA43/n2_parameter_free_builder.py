"""Look-alike of p1: the builder returns a module without parameters, given an input that
requires no grad: the chunk it clamps in place requires no grad, PyTorch allows the write."""
import torch
import torch.nn as nn


def squash():
    return nn.Sequential(nn.Tanh(), nn.Identity())


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = squash()
        self.scale = nn.Parameter(torch.ones(3))

    def sample(self, obs):
        mu, log_std = self.pre(obs).chunk(2, dim=-1)
        log_std.clamp_(-0.5, 0.5)
        return (mu + log_std.exp()) * self.scale


def compute():
    torch.manual_seed(0)
    m = Scaler()
    out = m.sample(torch.randn(4, 6))
    out.sum().backward()
    return [p.grad.flatten().tolist() for p in m.parameters()]
