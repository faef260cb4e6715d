# source: https://github.com/open-mmlab/mmaction2/commit/bc90644705513813b322643b5dc8fb58d22174f1
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# mmaction2 MS-G3D (skeleton-based action recognition), ST_MSGCN.forward: the multi-scale graph aggregation goes
# through an MLP (1x1 conv, BatchNorm, ReLU) and the residual is added in place, `out += res`, before the final
# activation; ReluBackward saved the MLP's output, so training fails with "modified by an inplace operation ...
# output 0 of ReluBackward0". With the default `residual=False` the residual is the integer 0, and the in-place add
# of 0 is enough. Commit bc906447 "fix autograd bug" returns `self.act(out)` when `res == 0`, else
# `self.act(out + res)`.
# The library module is 1905helpers_mmaction2_msg3d.py (ref: ..._fixed.py); its header names its stand-ins.
# Harness (stand-in): a 5-joint chain skeleton, window_size 3 (so 15 nodes per unfolded window), num_scales 2,
# 3 input channels (joint coordinates) and 8 output channels as in the first MSG3DBlock; a batch of 2 sequences of
# 4 temporal windows in place of UnfoldTemporalWindows' output; the mean of the block's output times a random
# projection as the loss.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
msg3d = importlib.import_module("1905helpers_mmaction2_msg3d")


def compute():
    torch.manual_seed(0)
    V = 5
    A = torch.zeros(V, V)
    for i in range(V - 1):
        A[i + 1, i] = 1
        A[i, i + 1] = 1
    window_size = 3
    gcn = msg3d.ST_MSGCN(in_channels=3, out_channels=8, A=A, num_scales=2, window_size=window_size)
    x = torch.randn(2, 3, 4, V * window_size)
    out = gcn(x)
    proj = torch.randn(8, 1, 1)
    loss = (out * proj).mean()
    loss.backward()
    return {
        "PA.grad": gcn.PA.grad,
        "mlp.conv.weight.grad": gcn.mlp.layers[0].weight.grad,
        "mlp.bn.weight.grad": gcn.mlp.layers[1].weight.grad,
        "out": out.detach(),
    }


if __name__ == "__main__":
    compute()
