# source: https://github.com/CederGroupHub/chgnet/commit/4ae27dad434bff75ec3625e65ffddfe307a11abe
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# CHGNet (pretrained universal interatomic potential), chgnet/model/encoders.py, BondEncoder.forward: the bond
# vectors are normalised in place, `bond_vectors /= bond_lengths[:, None]`, right after
# `bond_lengths = torch.norm(bond_vectors, dim=1)`; NormBackward saved `bond_vectors`, so the forces (CHGNet takes
# them as `-torch.autograd.grad(energy, atom_positions, create_graph=True)`) fail with "modified by an inplace
# operation". Commit 4ae27da ("fix torch non-differentiable in-place op errors") writes
# `bond_vectors = bond_vectors / bond_lengths[:, None]` (it also rewrites integer composition divisions elsewhere,
# which raise a dtype error, not one of these; a later commit ef23049 makes `neighbor += image @ lattice` out of place
# too, which does not raise: `neighbor` is a fresh gather).
# The library module is 2705helpers_chgnet_encoders.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: the single-graph part of BatchedGraph.from_graphs (cartesian coordinates from fractional ones that
# require grad, as CrystalGraph builds them; the bond encoder on gathered centre / neighbour positions; angle bases
# from the directed bond vectors) for a 3-atom cubic cell with all 6 directed bonds (no periodic images) and the 3
# angles; the message-passing layers are replaced by two linear read-outs of the bond and angle bases; the training
# loss is energy plus force squared error against fixed targets (forces with create_graph=True, as in training).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
enc = importlib.import_module("2705helpers_chgnet_encoders")


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
