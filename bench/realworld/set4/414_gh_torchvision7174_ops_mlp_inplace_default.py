# source: https://github.com/pytorch/vision/issues/7174
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# torchvision.ops.MLP (torchvision/ops/misc.py, here 414helpers_torchvision_ops_misc.py) passed `inplace=True` by
# default to both the activation and the Dropout layers; with dropout > 0 the in-place Dropout overwrites the
# ReLU output that ReluBackward saved ("[3]], which is output 0 of ReluBackward0, is at version 4; expected
# version 3"). Merged fix, PR #7209: default `inplace=None`, so each layer keeps its own default. The caller is
# the reproduction (the inplace=False line works, the default one fails); dropout runs in training mode
# under a fixed seed so both programs draw the same masks.
import os
import sys
from importlib import import_module

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
MLP = import_module("414helpers_torchvision_ops_misc").MLP


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
