# reference fix for 1205: PR #9649 in the library module (1205helpers_pl_optimizer_loop_fixed.py): the loss divided
# out of place.
import importlib
import os
import sys

import torch
import torch.nn as nn
from torch.autograd import Function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
optimizer_loop = importlib.import_module("1205helpers_pl_optimizer_loop_fixed")


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
