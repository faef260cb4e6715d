# source: https://github.com/pyro-ppl/funsor/commit/4b6d26f349f90374bc56be8446c3cf18e1941552
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Funsor (functional tensors for probabilistic programming, the Pyro team): the torch.Tensor implementation of
# `ops.reciprocal` computed `result = x.reciprocal()` and then clamped it in place,
# `result.clamp_(max=torch.finfo(result.dtype).max)`. ReciprocalBackward0 saves its output, so once a gradient
# flows through a reciprocal the backward fails with "one of the variables needed for gradient computation has been
# modified by an inplace operation: ... output 0 of ReciprocalBackward0 ... is at version 1". Division reaches it
# through the normal-form rule in funsor/cnf.py (`lhs / rhs` -> `lhs * Unary(ops.reciprocal, rhs)`). Commit
# 4b6d26f3 "remove inplace op in reciprocal" (branch cnf-joint, merged to master with fe64b25b / PR #157) writes
# `result = x.reciprocal().clamp(max=torch.finfo(x.dtype).max)`.
# The library module is 2601helpers_funsor_torch.py (ref: ..._fixed.py); its header names the stand-ins.
# The program (stand-in for a user's model): a linear head predicts the location and log-scale of a Gaussian for 8
# observations; the negative log-likelihood's squared error term is written as a funsor division
# `(diff * diff) / var`; loss = mean. compute() returns the head's gradients and the loss.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ft = importlib.import_module("2601helpers_funsor_torch")


def compute():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    x = torch.randn(8, 3)
    y = torch.randn(8)
    out = net(x)
    loc, log_scale = out[:, 0], out[:, 1]
    scale = log_scale.exp()
    diff = ft.Tensor(y - loc)
    var = ft.Tensor(scale * scale)
    z = (diff * diff) / var
    nll = 0.5 * z.data + log_scale
    loss = nll.mean()
    loss.backward()
    return {"net.weight.grad": net.weight.grad, "net.bias.grad": net.bias.grad, "loss": loss.detach()}


if __name__ == "__main__":
    compute()
