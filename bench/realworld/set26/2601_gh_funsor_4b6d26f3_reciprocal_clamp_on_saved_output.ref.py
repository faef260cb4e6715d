# reference fix for 2601: commit 4b6d26f3 in the library module (2601helpers_funsor_torch_fixed.py):
# `result = x.reciprocal().clamp(max=torch.finfo(x.dtype).max)`, out of place.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ft = importlib.import_module("2601helpers_funsor_torch_fixed")


def compute():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    x = torch.randn(8, 3)
    y = torch.randn(8)
    out = net(x)
    loc, log_scale = out[:, 0], out[:, 1]
    scale = log_scale.exp()
    diff = ft.Tensor(y - loc)
    var = ft.Tensor(scale * scale)
    z = (diff * diff) / var
    nll = 0.5 * z.data + log_scale
    loss = nll.mean()
    loss.backward()
    return {"net.weight.grad": net.weight.grad, "net.bias.grad": net.bias.grad, "loss": loss.detach()}


if __name__ == "__main__":
    compute()
