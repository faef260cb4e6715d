# reference fix for 412: the merged PR (commit 177b9db) in potentials/valence.py (412helpers_valence_fixed.py):
# out-of-place divisions and `phi = phi * torch.where(...)`; the caller is unchanged.
import os
import sys
from importlib import import_module

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
valence = import_module("412helpers_valence_fixed")


def compute():
    torch.manual_seed(0)
    conformer = (torch.tensor([[0.0, 0.0, 0.0], [1.5, 0.0, 0.0], [2.0, 1.4, 0.0], [3.5, 1.5, 0.6],
                               [4.0, 2.9, 0.9]]) + 0.05 * torch.randn(5, 3)).requires_grad_(True)
    angle_indices = torch.tensor([[0, 1, 2], [1, 2, 3], [2, 3, 4]])
    angle_parameters = torch.tensor([[100.0, 109.5], [110.0, 112.0], [90.0, 108.0]], requires_grad=True)
    torsion_indices = torch.tensor([[0, 1, 2, 3], [1, 2, 3, 4]])
    torsion_parameters = torch.tensor([[1.2, 3.0, 0.0, 1.0], [0.8, 1.0, 180.0, 1.0]], requires_grad=True)

    energy = valence.evaluate_harmonic_angle_energy(conformer, angle_indices, angle_parameters) \
        + valence.evaluate_cosine_proper_torsion_energy(conformer, torsion_indices, torsion_parameters)
    energy.backward()
    return {"conformer": conformer.grad, "angle_parameters": angle_parameters.grad,
            "torsion_parameters": torsion_parameters.grad}


if __name__ == "__main__":
    compute()
