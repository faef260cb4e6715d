# source: https://github.com/Lightning-AI/pytorch-lightning/pull/9649
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# PyTorch Lightning, pytorch_lightning/loops/optimization/optimizer_loop.py, ClosureResult.from_training_step_output:
# the loss returned by training_step is normalised for gradient accumulation in place, `closure_loss /= normalize`.
# Under DDP with static_graph, PyTorch 1.10 passed the module's outputs through `_DDPSink`, a custom autograd
# Function that returned its inputs as-is, so the loss is a view created inside a custom Function and the in-place
# division fails ("Output 0 of _DDPSinkBackward is a view and is being modified inplace. This view was created inside
# a custom Function (or because an input was returned as-is)..."). PR #9649 "fix modify _DDPSinkBackward view
# inplace error for pytorch nightly 1.10" (merged, commit 37469cd3e8): `closure_loss = closure_loss / normalize`.
# The library module is 1205helpers_pl_optimizer_loop.py (ref: 1205helpers_pl_optimizer_loop_fixed.py).
# Stand-ins: `_DDPSink` as in torch/nn/parallel/distributed.py of the 1.10 nightlies (forward returns the inputs
# as-is; no reducer, no delayed all-reduce on one process), and `DDPStandIn`, the part of
# DistributedDataParallel.forward that routes the module's output tensors through it; a small regression
# LightningModule-like model; accumulate_grad_batches 2, so the closure runs for two micro-batches and their
# gradients add up.
import importlib
import os
import sys

import torch
import torch.nn as nn
from torch.autograd import Function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
optimizer_loop = importlib.import_module("1205helpers_pl_optimizer_loop")


class _DDPSink(Function):
    @staticmethod
    def forward(ctx, reducer, state_dict, *inputs):
        ctx.reducer = reducer
        ctx.state_dict = state_dict
        ret = inputs
        return ret

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None, None, *grad_outputs)


class DDPStandIn(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module
        self.static_graph = True

    def forward(self, *inputs):
        output = self.module.training_step(*inputs)
        if self.static_graph:
            keys = list(output.keys())
            passthrough = _DDPSink.apply(None, {"static_graph": True}, *[output[k] for k in keys])
            output = dict(zip(keys, passthrough))
        return output


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, x, y):
        pred = self.net(x)
        loss = nn.functional.mse_loss(pred, y)
        return {"loss": loss, "pred_mean": pred.detach().mean()}


def compute():
    torch.manual_seed(0)
    model = Regressor()
    ddp = DDPStandIn(model)
    accumulate_grad_batches = 2
    batches = [(torch.randn(5, 4), torch.randn(5, 1)) for _ in range(accumulate_grad_batches)]
    for x, y in batches:
        training_step_output = ddp(x, y)
        result = optimizer_loop.ClosureResult.from_training_step_output(training_step_output, accumulate_grad_batches)
        result.closure_loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
