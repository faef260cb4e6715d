# Library module for case 2705 (original).
# CederGroupHub/chgnet, chgnet/model/encoders.py (BondEncoder, AngleEncoder) and the bases they use from
# chgnet/model/basis.py (RadialBessel with CutoffPolynomial, Fourier), read at the parent of commit 4ae27da ("fix
# torch non-differentiable in-place op errors", 2023-12-11). Written anew at small size (not copied): the class names,
# constructor arguments, the bond encoder's statements (periodic shift of the neighbour, bond vector, its norm, the
# in-place normalisation, the undirected-bond selection, the two radial expansions) and the angle encoder's cosine
# -> acos -> Fourier expansion follow the source; the bases are compact equivalents (sin(n pi d / cutoff) / d
# times sqrt(2 / cutoff) and the polynomial envelope; 1 / sqrt(2), sin(n theta), cos(n theta) over sqrt(pi)) with
# `math` in place of numpy (not installed).
import math

import torch
from torch import nn


class CutoffPolynomial(nn.Module):
    def __init__(self, cutoff=5, cutoff_coeff=5):
        super().__init__()
        self.cutoff = cutoff
        self.p = cutoff_coeff
        self.a = -(self.p + 1) * (self.p + 2) / 2
        self.b = self.p * (self.p + 2)
        self.c = -self.p * (self.p + 1) / 2

    def forward(self, r):
        x = r / self.cutoff
        env = 1 + self.a * x ** self.p + self.b * x ** (self.p + 1) + self.c * x ** (self.p + 2)
        return torch.where(x < 1, env, torch.zeros_like(x))


class RadialBessel(nn.Module):
    def __init__(self, num_radial=9, cutoff=5, learnable=False, smooth_cutoff=5):
        super().__init__()
        self.inv_cutoff = 1 / cutoff
        self.norm_const = (2 * self.inv_cutoff) ** 0.5
        freq = math.pi * torch.arange(1, num_radial + 1, dtype=torch.float)
        if learnable:
            self.frequencies = nn.Parameter(freq)
        else:
            self.register_buffer("frequencies", freq)
        self.smooth_cutoff = CutoffPolynomial(cutoff, smooth_cutoff) if smooth_cutoff is not None else None

    def forward(self, dist):
        dist = dist[:, None]
        out = self.norm_const * torch.sin(self.frequencies * dist * self.inv_cutoff) / dist
        if self.smooth_cutoff is not None:
            out = self.smooth_cutoff(dist) * out
        return out


class Fourier(nn.Module):
    def __init__(self, order=5, learnable=False):
        super().__init__()
        self.order = order
        freq = torch.arange(1, order + 1, dtype=torch.float)
        if learnable:
            self.frequencies = nn.Parameter(freq)
        else:
            self.register_buffer("frequencies", freq)

    def forward(self, x):
        tmp = torch.outer(x, self.frequencies)
        const = x.new_full((x.shape[0], 1), 1 / math.sqrt(2))
        return torch.cat([const, torch.sin(tmp), torch.cos(tmp)], dim=1) / math.sqrt(math.pi)


class BondEncoder(nn.Module):
    def __init__(self, atom_graph_cutoff=5, bond_graph_cutoff=3, num_radial=9, cutoff_coeff=5, learnable=False):
        super().__init__()
        self.rbf_expansion_ag = RadialBessel(num_radial, atom_graph_cutoff, learnable, cutoff_coeff)
        self.rbf_expansion_bg = RadialBessel(num_radial, bond_graph_cutoff, learnable, cutoff_coeff)

    def forward(self, center, neighbor, undirected2directed, image, lattice):
        neighbor += image @ lattice
        bond_vectors = center - neighbor
        bond_lengths = torch.norm(bond_vectors, dim=1)
        # normalise the bond vectors
        bond_vectors /= bond_lengths[:, None]

        undirected_bond_lengths = torch.index_select(bond_lengths, 0, undirected2directed)
        bond_basis_ag = self.rbf_expansion_ag(undirected_bond_lengths)
        bond_basis_bg = self.rbf_expansion_bg(undirected_bond_lengths)
        return bond_basis_ag, bond_basis_bg, bond_vectors


class AngleEncoder(nn.Module):
    def __init__(self, num_angular=9, learnable=True):
        super().__init__()
        if num_angular % 2 != 1:
            raise ValueError("num_angular must be odd")
        self.fourier_expansion = Fourier(order=(num_angular - 1) // 2, learnable=learnable)

    def forward(self, bond_i, bond_j):
        cosine_ij = torch.sum(bond_i * bond_j, dim=1) * (1 - 1e-6)
        return self.fourier_expansion(torch.acos(cosine_ij))
