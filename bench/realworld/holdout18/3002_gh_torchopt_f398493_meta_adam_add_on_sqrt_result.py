# source: https://github.com/metaopt/torchopt/commit/f39849353e459172d90673868bb7d7d78bc3eb68
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# TorchOpt (differentiable optimizers for meta-learning): MetaAdam.step differentiates through the Adam update
# (grads taken with create_graph=True, the transformations run out of place), but the out-of-place branch of
# _scale_by_adam still divides by `v.add(eps_root).sqrt_().add_(eps)`: sqrt's backward saved its result, which `add_`
# then overwrites, so the outer (meta) backward raises "one of the variables needed for gradient computation has been
# modified by an inplace operation ... output 0 of SqrtBackward0". Commit f398493 ("fix(transform): fix inplace sqrt_
# with add_") writes `.add(eps)` (in both branches; it also fixes RMSProp's `n.sqrt().add_(eps)`).
# The library module is 3002helpers_torchopt_meta_adam.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: a MAML-style inner loop of two MetaAdam steps (lr 0.1) on a small Tanh MLP (3 -> 8 -> 1) over a
# random regression support set, then the query loss differentiated back to the initial parameters.
import importlib
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
torchopt = importlib.import_module("3002helpers_torchopt_meta_adam")


def compute():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    meta_params = list(net.parameters())
    x_support, y_support = torch.randn(10, 3), torch.randn(10, 1)
    x_query, y_query = torch.randn(10, 3), torch.randn(10, 1)

    inner_opt = torchopt.MetaAdam(net, lr=0.1)
    for _ in range(2):
        inner_loss = ((net(x_support) - y_support) ** 2).mean()
        inner_opt.step(inner_loss)

    outer_loss = ((net(x_query) - y_query) ** 2).mean()
    outer_loss.backward()
    return {
        "outer_loss": outer_loss.detach(),
        "0.weight.grad": meta_params[0].grad,
        "0.bias.grad": meta_params[1].grad,
        "2.weight.grad": meta_params[2].grad,
        "2.bias.grad": meta_params[3].grad,
        "adapted.2.weight": net[2].weight.detach(),
    }


if __name__ == "__main__":
    compute()
