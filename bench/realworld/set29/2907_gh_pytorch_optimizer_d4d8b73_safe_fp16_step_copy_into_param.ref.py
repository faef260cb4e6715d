# reference fix for 2907: commit d4d8b73 in the library module (2907helpers_pytorch_optimizer_fp16_fixed.py):
# `p.data.copy_(p32)` in SafeFP16Optimizer.step.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fp16 = importlib.import_module("2907helpers_pytorch_optimizer_fp16_fixed")


def compute():
    torch.manual_seed(0)
    model = nn.Linear(4, 3).half()
    optimizer = fp16.SafeFP16Optimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    x = torch.randn(8, 4).half()
    y = torch.randn(8, 3)

    losses = []
    for _ in range(2):
        optimizer.zero_grad()
        loss = ((model(x).float() - y) ** 2).mean()
        optimizer.backward(loss)
        optimizer.step()
        losses.append(loss.detach())
    return {
        "weight": model.weight.detach().float(),
        "bias": model.bias.detach().float(),
        "fp32_weight": optimizer.fp32_params[0].detach(),
        "fp32_weight.grad": optimizer.fp32_params[0].grad,
        "losses": torch.stack(losses),
    }


if __name__ == "__main__":
    compute()
