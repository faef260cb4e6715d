# reference fix for 2705: commit 4ae27da in the library module (2705helpers_chgnet_encoders_fixed.py):
# `bond_vectors = bond_vectors / bond_lengths[:, None]` out of place.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
enc = importlib.import_module("2705helpers_chgnet_encoders_fixed")


def compute():
    torch.manual_seed(0)
    bond_basis_expansion = enc.BondEncoder(atom_graph_cutoff=5, bond_graph_cutoff=3)
    angle_basis_expansion = enc.AngleEncoder(num_angular=9, learnable=True)
    bond_head = torch.nn.Linear(9, 1)
    angle_head = torch.nn.Linear(9, 1)

    lattice = 4.0 * torch.eye(3)
    atom_frac_coord = torch.tensor([[0.0, 0.0, 0.0], [0.3, 0.2, 0.1], [0.1, 0.4, 0.3]], requires_grad=True)
    atom_graph = torch.tensor([[0, 1], [0, 2], [1, 0], [1, 2], [2, 0], [2, 1]])
    undirected2directed = torch.tensor([0, 1, 3])
    neighbor_image = torch.zeros(6, 3)
    bond_graph = torch.tensor([[0, 0, 0, 1, 1], [1, 0, 2, 2, 3], [2, 1, 4, 2, 5]])

    atom_cart_coords = atom_frac_coord @ lattice
    bond_basis_ag, bond_basis_bg, bond_vectors = bond_basis_expansion(
        center=atom_cart_coords[atom_graph[:, 0]],
        neighbor=atom_cart_coords[atom_graph[:, 1]],
        undirected2directed=undirected2directed,
        image=neighbor_image,
        lattice=lattice,
    )
    bond_vecs_i = torch.index_select(bond_vectors, 0, bond_graph[:, 2])
    bond_vecs_j = torch.index_select(bond_vectors, 0, bond_graph[:, 4])
    angle_basis = angle_basis_expansion(bond_vecs_i, bond_vecs_j)

    energy = bond_head(bond_basis_ag * bond_basis_bg).sum() + angle_head(angle_basis).sum()
    force = -torch.autograd.grad(energy, atom_cart_coords, create_graph=True, retain_graph=True)[0]
    loss = (energy - 0.5) ** 2 + ((force - 0.1) ** 2).mean()
    loss.backward()
    return {
        "bond_head.weight.grad": bond_head.weight.grad,
        "angle_head.weight.grad": angle_head.weight.grad,
        "fourier.frequencies.grad": angle_basis_expansion.fourier_expansion.frequencies.grad,
        "atom_frac_coord.grad": atom_frac_coord.grad,
        "force": force.detach(),
    }


if __name__ == "__main__":
    compute()
