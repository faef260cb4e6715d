# source: https://github.com/EleutherAI/mp_nerf/pull/6
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# mp_nerf (massively parallel NeRF -- natural extension of reference frame -- for protein backbones),
# mp_nerf/massive_pnerf.py, mp_nerf_torch: the rotation matrix is built with `rotate = torch.stack([cb, n_plane_,
# n_plane], dim=-1)` and normalised in place, `rotate /= torch.norm(rotate, dim=-2, keepdim=True)`; torch.norm saved
# `rotate` (and its result) for backward, so backpropagating through the placed atoms fails. PR #6 ("Replace
# inplace division": "Inplace division causes an error during gradient computation"): `rotate = rotate /
# torch.norm(rotate, dim=-2, keepdim=True)`.
# The library module is 809helpers_massive_pnerf.py (ref: 809helpers_massive_pnerf_fixed.py).
# Stand-ins: instead of proteins.py's full backbone/sidechain builder, a loop places a chain of 6 atoms from three
# seed atoms, learnable dihedrals (as when fitting torsions to target coordinates) and fixed bond angles/lengths,
# batch of 2 chains; loss: squared distance to random target coordinates.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pnerf = importlib.import_module("809helpers_massive_pnerf")


def build_chain(seed_coords, thetas, chis, lengths):
    coords = [seed_coords[:, 0], seed_coords[:, 1], seed_coords[:, 2]]
    for i in range(chis.shape[1]):
        d = pnerf.mp_nerf_torch(coords[-3], coords[-2], coords[-1], lengths[:, i], thetas[:, i], chis[:, i])
        coords.append(d)
    return torch.stack(coords, dim=1)


def compute():
    torch.manual_seed(0)
    seed_coords = torch.tensor([[0.0, 0.0, 0.0], [1.46, 0.0, 0.0], [2.0, 1.4, 0.0]]).repeat(2, 1, 1)
    chis = (torch.rand(2, 6) * 2 - 1).mul(3.0).requires_grad_()
    thetas = torch.full((2, 6), 1.94)
    lengths = torch.full((2, 6), 1.5)
    target = torch.randn(2, 9, 3) * 2
    coords = build_chain(seed_coords, thetas, chis, lengths)
    loss = ((coords - target) ** 2).sum(-1).mean()
    loss.backward()
    return {"chis.grad": chis.grad, "coords": coords.detach()}


if __name__ == "__main__":
    compute()
