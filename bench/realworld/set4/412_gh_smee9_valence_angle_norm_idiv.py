# source: https://github.com/openforcefield/smee/pull/9
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# smirnoffee (now smee), differentiable SMIRNOFF force-field energies: potentials/valence.py (412helpers_valence.py)
# normalises bond vectors in place, `vector_ab /= torch.norm(vector_ab, dim=1).unsqueeze(1)`, after torch.norm saved
# vector_ab for its backward; the torsion term does the same to the cross products and `phi *= torch.where(...)`.
# Energies could not be backpropagated (forces / parameter gradients). Merged PR "Remove the use of inplace
# operations": `vector_ab = vector_ab / torch.norm(...)` etc. The bug is in the package module; the caller
# evaluates a butane-like conformer's angle and torsion energies and their gradients.
import os
import sys
from importlib import import_module

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
valence = import_module("412helpers_valence")


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
