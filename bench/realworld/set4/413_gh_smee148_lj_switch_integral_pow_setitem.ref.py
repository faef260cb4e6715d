# reference fix for 413: the merged PR #150 in potentials/nonbonded.py (413helpers_nonbonded_fixed.py):
# `r_pow = torch.where(powers == 0, torch.log(r), r_pow)`; the caller is unchanged.
import os
import sys
from importlib import import_module

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
nonbonded = import_module("413helpers_nonbonded_fixed")


def compute():
    torch.manual_seed(0)
    parameters = torch.tensor([[0.15, 3.2], [0.05, 2.6]], dtype=torch.float64, requires_grad=True)  # eps, sigma
    rc = torch.tensor(9.0, dtype=torch.float64, requires_grad=True)  # cutoff attribute
    rs = torch.tensor(8.0, dtype=torch.float64, requires_grad=True)  # switch distance attribute
    idxs_i, idxs_j = torch.tensor([0, 0, 1]), torch.tensor([0, 1, 1])
    n_ij_interactions = torch.tensor([10.0, 20.0, 10.0], dtype=torch.float64)
    volume = torch.tensor(3000.0, dtype=torch.float64)
    energy = nonbonded._compute_lj_lrc(parameters, idxs_i, idxs_j, n_ij_interactions, 9, rs, rc, volume)
    energy.backward()
    return {"parameters": parameters.grad, "rc": rc.grad, "rs": rs.grad}


if __name__ == "__main__":
    compute()
