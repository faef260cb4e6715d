# source: https://github.com/NX-AI/xlstm/issues/51
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# xLSTM recurrent (step) mode: CausalConv1d.step -> conv1d_step() (407helpers_xlstm_conv.py, the package's
# xlstm/components/conv.py) shifts the convolution state in place, `conv_state.copy_(torch.roll(...))` and
# `conv_state[:, -1:, :] = x`, after the previous step's `conv_state * conv1d_weight` saved it. Training through
# several steps fails ("output 0 of CopySlices, is at version 38; expected version 36"). The issue and PRs #81/#82
# (open at the time of writing) rebuild conv_state out of place each step; the ref uses that helper version.
# The model around the step function is a minimal mLSTM-style step loop (projection -> causal conv -> swish).
import os
import sys
from importlib import import_module

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
conv = import_module("407helpers_xlstm_conv")


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
