# reference fix for 809: PR #6 in the library module (809helpers_massive_pnerf_fixed.py): `rotate = rotate / torch.norm(...)`.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
pnerf = importlib.import_module("809helpers_massive_pnerf_fixed")


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
