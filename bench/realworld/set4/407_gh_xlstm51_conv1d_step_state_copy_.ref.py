# reference fix for 407: the approach of NX-AI/xlstm#82: conv1d_step rebuilds conv_state out of place
# (407helpers_xlstm_conv_fixed.py); the caller is unchanged.
import os
import sys
from importlib import import_module

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
conv = import_module("407helpers_xlstm_conv_fixed")


class StepBlock(nn.Module):
    def __init__(self, dim, kernel_size=4):
        super().__init__()
        self.proj_up = nn.Linear(dim, dim)
        self.conv1d = conv.CausalConv1d(conv.CausalConv1dConfig(feature_dim=dim, kernel_size=kernel_size))
        self.proj_down = nn.Linear(dim, dim)

    def step(self, x, conv_state=None):
        x_inner = self.proj_up(x)
        x_conv, conv_state = self.conv1d.step(x_inner, conv_state=conv_state)
        x_conv_act = F.silu(x_conv)
        return x + self.proj_down(x_conv_act), conv_state


def compute():
    torch.manual_seed(0)
    block = StepBlock(6)
    seq = torch.randn(2, 5, 6)
    conv_state = None
    outs = []
    for t in range(seq.shape[1]):
        y, conv_state = block.step(seq[:, t:t + 1, :], conv_state)
        outs.append(y)
    loss = torch.cat(outs, dim=1).pow(2).mean()
    loss.backward()
    return {n: p.grad for n, p in block.named_parameters()}


if __name__ == "__main__":
    compute()
