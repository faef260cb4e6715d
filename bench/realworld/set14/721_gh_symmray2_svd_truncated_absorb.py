# source: https://github.com/jcmgray/symmray/pull/2
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# symmray PR #2 "change in-place operation x*=y to x = x*y in truncated-SVD" (merged, commit e99f677): with the
# torch backend, backpropagating through symmray.linalg.svd_truncated fails because the singular values are
# absorbed block by block with `U.blocks[(c0, c1)] *= s_sqrt.reshape((1, -1))` (and the same on VH): the blocks
# are (slices of) the U / Vh outputs of torch.linalg.svd, which LinalgSvdBackward saved.
# Fix (PR, merged by the maintainer): `U.blocks[(c0, c1)] = U.blocks[(c0, c1)] * s_sqrt.reshape((1, -1))` etc.
# The culprit lives in the library module 721helpers_symmray_linalg.py (ref: 721helpers_symmray_linalg_fixed.py).
# Stand-ins (in the helper): autoray and symmray's AbelianArray/BlockIndex/BlockVector reduced to what
# linalg.py touches, Z2 symmetry, DEBUG checks dropped. Harness: a differentiable Z2 block matrix built from a
# parameter (the PR author's use: gradient-based tensor-network optimisation), a truncated SVD with max_bond,
# absorb=0, and a loss on the re-contracted blocks; float64.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
linalg = importlib.import_module("721helpers_symmray_linalg")


def compute():
    torch.manual_seed(0)
    w00 = torch.randn(4, 4, dtype=torch.float64, requires_grad=True)
    w11 = torch.randn(3, 3, dtype=torch.float64, requires_grad=True)
    target = {(0, 0): torch.randn(4, 4, dtype=torch.float64), (1, 1): torch.randn(3, 3, dtype=torch.float64)}

    x = linalg.AbelianArray(
        indices=(linalg.BlockIndex({0: 4, 1: 3}, dual=False), linalg.BlockIndex({0: 4, 1: 3}, dual=True)),
        blocks={(0, 0): torch.tanh(w00), (1, 1): torch.tanh(w11)},
    )
    U, _, VH = linalg.svd_truncated(x, max_bond=5, absorb=0)

    loss = 0.0
    for c0, c1 in U.sectors:
        approx = U.blocks[(c0, c1)] @ VH.blocks[(c1, c1)]
        loss = loss + ((approx - target[(c0, c1)]) ** 2).sum()
    loss.backward()
    return {
        "loss": loss.detach(),
        "grad_w00": w00.grad.detach().clone(),
        "grad_w11": w11.grad.detach().clone(),
        "U00": U.blocks[(0, 0)].detach().clone(),
        "VH11": VH.blocks[(1, 1)].detach().clone(),
    }
