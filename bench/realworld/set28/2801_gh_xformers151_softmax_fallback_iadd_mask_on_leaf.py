# source: https://github.com/facebookresearch/xformers/pull/151 (commit e75ec39fa73e7cd5568e60809eb38b02586ec20b, fixes #142)
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# xFormers' fused softmax (xformers/triton/softmax.py): `softmax(x, mask, causal)` runs a Triton kernel on CUDA and
# otherwise falls back to PyTorch in `_softmax_dispatch`, which first applies the additive attention mask with
# `x += mask`. The caller's tensor is written in place: when it is a leaf that requires grad (the parity test PR #151
# added: `X_.requires_grad = True; triton_softmax(X_, mask, causal)` on CPU, then a backward through a norm of the
# output) the fallback fails with "a leaf Variable that requires grad is being used in an in-place operation". The
# PR ("check softmax fallback paths", following #141 / issue #142) changes the line to `x = x + mask` and adds the
# test, which compares the fallback with `torch.softmax(X + mask)` forward and backward.
# The library module is 2801helpers_xformers_softmax.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: the test's inputs at small size (a 16 x 16 input made non-contiguous as in its `contiguous=False`
# branch, a causal additive mask of -inf above the diagonal), its loss `torch.norm(y.transpose(-2, -1) @ y)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sm = importlib.import_module("2801helpers_xformers_softmax")


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
