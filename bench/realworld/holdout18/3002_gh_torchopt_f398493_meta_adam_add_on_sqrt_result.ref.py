# reference fix for 3002: commit f398493 in the library module (3002helpers_torchopt_meta_adam_fixed.py):
# `m.div(v.add(eps_root).sqrt_().add(eps))` in _scale_by_adam.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
torchopt = importlib.import_module("3002helpers_torchopt_meta_adam_fixed")


def compute():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    meta_params = list(net.parameters())
    x_support, y_support = torch.randn(10, 3), torch.randn(10, 1)
    x_query, y_query = torch.randn(10, 3), torch.randn(10, 1)

    inner_opt = torchopt.MetaAdam(net, lr=0.1)
    for _ in range(2):
        inner_loss = ((net(x_support) - y_support) ** 2).mean()
        inner_opt.step(inner_loss)

    outer_loss = ((net(x_query) - y_query) ** 2).mean()
    outer_loss.backward()
    return {
        "outer_loss": outer_loss.detach(),
        "0.weight.grad": meta_params[0].grad,
        "0.bias.grad": meta_params[1].grad,
        "2.weight.grad": meta_params[2].grad,
        "2.bias.grad": meta_params[3].grad,
        "adapted.2.weight": net[2].weight.detach(),
    }


if __name__ == "__main__":
    compute()
