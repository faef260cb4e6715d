# reference fix for 414: the merged PR #7209 in torchvision/ops/misc.py (414helpers_torchvision_ops_misc_fixed.py):
# `inplace=None` by default; the caller is unchanged.
import os
import sys
from importlib import import_module

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
MLP = import_module("414helpers_torchvision_ops_misc_fixed").MLP


def compute():
    torch.manual_seed(0)
    x = torch.rand(3)
    ok = MLP(3, [3, 3], dropout=0.5, inplace=False)
    ok(x).sum().backward()  # no error
    torch.manual_seed(1)
    mlp = MLP(3, [3, 3], dropout=0.5)
    mlp(x).sum().backward()  # causes an error
    grads = {"ok." + n: p.grad for n, p in ok.named_parameters()}
    grads.update({"mlp." + n: p.grad for n, p in mlp.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
