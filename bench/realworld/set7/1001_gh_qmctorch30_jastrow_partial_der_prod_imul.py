# source: https://github.com/NLESC-JCER/QMCTorch/issues/30
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# QMCTorch (quantum Monte Carlo in PyTorch), qmctorch/wavefunction/fast_jastrow.py, TwoBodyJastrowFactor: the pure
# second derivative used by the kinetic energy calls `_partial_derivative`, which computes `x = x.prod(-1)` and then
# `x *= self.weight_partial_der`, overwriting the product that prod saved for its backward; `hess_jast *= 0.5` and
# `hess_jast += self._partial_derivative(djast, out_mat=hess_jast)` follow. Optimising the energy with
# `solver.run(..., loss='energy', grad='auto')` (autograd through the local energy) fails ("Backpropagation error,
# gradient computation has been modified by inplace operation", issue #30); the maintainer fixed it in PR #33,
# commit 0a62bf5 "fix inplace ops": `x = x * self.weight_partial_der`, `hess_jast = 0.5 * hess_jast`,
# `hess_jast = hess_jast + self._partial_derivative(...)`.
# The library module is 1001helpers_qmctorch_fast_jastrow.py (ref: 1001helpers_qmctorch_fast_jastrow_fixed.py).
# Stand-ins: the wave function is the Jastrow factor alone (no orbitals), 2 up + 1 down electrons, 4 fixed walker
# positions instead of Metropolis sampling; local energy = -0.5 * (sum of pure second derivatives) / J + electron
# repulsion; loss: mean local energy (QMCTorch's 'energy' loss), backpropagated to the Jastrow weight.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
fast_jastrow = importlib.import_module("1001helpers_qmctorch_fast_jastrow")


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
