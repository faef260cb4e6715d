# source: https://github.com/kozistr/pytorch_optimizer/commit/d4d8b736d88fbc8e73de7f16a9fd0e8c6420696b
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# pytorch_optimizer (a collection of optimizers and training utilities), SafeFP16Optimizer (pytorch_optimizer/fp16.py,
# ported from ParlAI in early 2022): it trains an fp16 model through fp32 master copies of its parameters, and after
# the wrapped optimizer's step copies each master copy back into the model's parameter with `p.copy_(p32)`. The step
# runs with grad mode on and `p` is a Parameter that requires grad, so the first step raises "a leaf Variable that
# requires grad is being used in an in-place operation". Commit d4d8b73 ("fix: step") writes `p.data.copy_(p32)` (as
# ParlAI's original does).
# The library module is 2907helpers_pytorch_optimizer_fp16.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a half-precision nn.Linear(4, 3) on a random half batch, the wrapper around torch.optim.SGD (lr 0.1,
# momentum 0.9), a mean-squared loss computed in float32, and two training steps.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fp16 = importlib.import_module("2907helpers_pytorch_optimizer_fp16")


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
