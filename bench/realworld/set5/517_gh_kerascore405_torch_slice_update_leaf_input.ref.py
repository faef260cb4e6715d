# reference fix for 517 (the merged PR #405): slice_update clones its input before writing; see
# 517helpers_torch_core_fixed.py.
import importlib.util
import os

import torch
import torch.nn as nn


def _load(name):
    spec = importlib.util.spec_from_file_location(
        "core", os.path.join(os.path.dirname(os.path.abspath(__file__)), name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ops = _load("517helpers_torch_core_fixed.py")


def compute():
    torch.manual_seed(0)
    x = torch.randn(2, 6, 4, requires_grad=True)
    prefix = nn.Parameter(torch.randn(2, 2, 4))
    head = nn.Linear(4, 1)
    y = ops.slice_update(x, [0, 0, 0], prefix)
    loss = head(torch.tanh(y)).pow(2).mean()
    loss.backward()
    return {"x.grad": x.grad.clone(), "prefix.grad": prefix.grad.clone(),
            "head.weight.grad": head.weight.grad.clone(), "head.bias.grad": head.bias.grad.clone()}


if __name__ == "__main__":
    compute()
