# reference fix for 1905: commit bc906447 in the library module (1905helpers_mmaction2_msg3d_fixed.py):
# `self.act(out)` when the residual is 0, `self.act(out + res)` otherwise.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
msg3d = importlib.import_module("1905helpers_mmaction2_msg3d_fixed")


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
