# reference fix for 2708: commit 670f5706 in the library module (2708helpers_fla_delta_net_fixed.py):
# `beta = (torch.mul if self.training else torch.mul_)(beta, attention_mask[...])` (out of place in training).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dn = importlib.import_module("2708helpers_fla_delta_net_fixed")


def compute():
    torch.manual_seed(0)
    layer = dn.DeltaNet(hidden_size=16, num_heads=2, use_short_conv=False, use_gate=False)
    layer.train()
    hidden_states = torch.randn(2, 6, 16)
    attention_mask = torch.ones(2, 6)
    attention_mask[1, :2] = 0
    o, _, _ = layer(hidden_states, attention_mask=attention_mask)
    loss = (o ** 2).mean()
    loss.backward()
    return {
        "q_proj.weight.grad": layer.q_proj.weight.grad,
        "k_proj.weight.grad": layer.k_proj.weight.grad,
        "b_proj.weight.grad": layer.b_proj.weight.grad,
        "o_proj.weight.grad": layer.o_proj.weight.grad,
        "o": o.detach(),
    }


if __name__ == "__main__":
    compute()
