# smirnoffee/potentials/valence.py after PR #9 (commit 177b9db, `x = x / norm`, `phi = phi * where(...)`), reduced to the angle
# and torsion energies; the `potential_energy_function` registry decorator is a minimal stand-in.
import torch

_POTENTIAL_ENERGY_FUNCTIONS = {}


def potential_energy_function(handler_type, energy_expression):
    def _decorator(func):
        _POTENTIAL_ENERGY_FUNCTIONS[(handler_type, energy_expression)] = func
        return func
    return _decorator


@potential_energy_function("Bonds", "k/2*(r-length)**2")
def evaluate_harmonic_bond_energy(conformer, atom_indices, parameters):
    if len(atom_indices) == 0:
        return torch.zeros(1)

    distances = torch.norm(conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 0]], dim=1)

    return (0.5 * parameters[:, 0] * (distances - parameters[:, 1]) ** 2).sum()


@potential_energy_function("Angles", "k/2*(theta-angle)**2")
def evaluate_harmonic_angle_energy(conformer, atom_indices, parameters):
    if len(atom_indices) == 0:
        return torch.zeros(1)

    vector_ab = conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 0]]
    vector_ab = vector_ab / torch.norm(vector_ab, dim=1).unsqueeze(1)

    vector_ac = conformer[atom_indices[:, 1]] - conformer[atom_indices[:, 2]]
    vector_ac = vector_ac / torch.norm(vector_ac, dim=1).unsqueeze(1)

    # TODO: handle the ACOS singularity.
    angles = torch.rad2deg(torch.acos((vector_ab * vector_ac).sum(dim=1)))

    return (0.5 * parameters[:, 0] * (angles - parameters[:, 1]) ** 2).sum()


def _evaluate_cosine_torsion_energy(conformer, atom_indices, parameters):
    if len(atom_indices) == 0:
        return torch.zeros(1)

    # Based on the OpenMM formalism.
    vector_ab = conformer[atom_indices[:, 0]] - conformer[atom_indices[:, 1]]
    vector_cb = conformer[atom_indices[:, 2]] - conformer[atom_indices[:, 1]]
    vector_cd = conformer[atom_indices[:, 2]] - conformer[atom_indices[:, 3]]

    vector_ab_cross_cb = torch.cross(vector_ab, vector_cb, dim=1)
    vector_cb_cross_cd = torch.cross(vector_cb, vector_cd, dim=1)

    vector_ab_cross_cb = vector_ab_cross_cb / torch.norm(vector_ab_cross_cb, dim=1).unsqueeze(1)
    vector_cb_cross_cd = vector_cb_cross_cd / torch.norm(vector_cb_cross_cd, dim=1).unsqueeze(1)

    cos_phi = (vector_ab_cross_cb * vector_cb_cross_cd).sum(dim=1)

    # TODO: handle the ACOS singularity.
    phi = torch.acos(cos_phi)
    phi = phi * torch.where((vector_ab * vector_cb_cross_cd).sum(dim=1) < 0, -1.0, 1.0)

    return (
        parameters[:, 0]
        / parameters[:, 3]
        * (1.0 + torch.cos(parameters[:, 1] * phi - torch.deg2rad(parameters[:, 2])))
    ).sum()


@potential_energy_function("ProperTorsions", "k*(1+cos(periodicity*theta-phase))")
def evaluate_cosine_proper_torsion_energy(conformer, atom_indices, parameters):
    return _evaluate_cosine_torsion_energy(conformer, atom_indices, parameters)
