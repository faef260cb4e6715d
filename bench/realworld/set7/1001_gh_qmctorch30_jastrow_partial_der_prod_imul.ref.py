# reference fix for 1001: commit 0a62bf5 in the library module (1001helpers_qmctorch_fast_jastrow_fixed.py).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fast_jastrow = importlib.import_module("1001helpers_qmctorch_fast_jastrow_fixed")


def local_energy(jastrow, pos):
    jast = jastrow(pos)                                   # Nbatch x 1
    d2jast = jastrow(pos, derivative=2)                   # Nbatch x Nelec
    kinetic = -0.5 * d2jast.sum(-1, keepdim=True) / jast
    r = jastrow.extract_tri_up(jastrow.edist(pos))
    return kinetic + (1. / r).sum(-1, keepdim=True)


def compute():
    torch.manual_seed(0)
    jastrow = fast_jastrow.TwoBodyJastrowFactor(2, 1, w=0.8)
    pos = torch.randn(4, 9)
    loss = local_energy(jastrow, pos).mean()
    loss.backward()
    return {"weight": jastrow.weight.grad}


if __name__ == "__main__":
    compute()
