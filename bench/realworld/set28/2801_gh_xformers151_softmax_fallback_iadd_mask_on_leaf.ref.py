# reference fix for 2801: PR #151 (commit e75ec39) in the library module (2801helpers_xformers_softmax_fixed.py):
# `x = x + mask` in the PyTorch fallback of `_softmax_dispatch`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sm = importlib.import_module("2801helpers_xformers_softmax_fixed")


def compute():
    torch.manual_seed(0)
    shape = (16, 16)
    X = torch.normal(0, 1, size=shape, device="cpu", requires_grad=False)
    # make sure that the buffer is not contiguous
    X = X.transpose(-2, -1).contiguous().transpose(-2, -1)
    X.requires_grad = True

    seq = shape[1]
    mask = torch.zeros((seq, seq))
    mask[~torch.tril(torch.ones_like(mask)).bool()] = -float("inf")

    y = sm.softmax(X, mask, True)
    loss = torch.norm(y.transpose(-2, -1) @ y)
    loss.backward()
    return {
        "X.grad": X.grad,
        "y": y.detach(),
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
