# source: https://github.com/nerfstudio-project/nerfacc/commit/5cea4feb82058326c70f938069907513b2324821
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# nerfacc (NeRF volume rendering), render_transmittance_from_alpha with `prefix_trans` (the transmittance carried
# in from samples marched before this chunk): `trans = exclusive_prod(1 - alphas)` and then `trans *= prefix_trans`.
# For batched rays exclusive_prod is torch.cumprod, and CumprodBackward saved its result, so the backward of any
# loss on the rendered weights fails with "modified by an inplace operation ... output 0 of CumprodBackward0".
# Commit 5cea4fe "Fix inplace prefix_trans" writes `trans = trans * prefix_trans`.
# The library module is 1903helpers_nerfacc_volrend.py (ref: ..._fixed.py); its header names its stand-ins.
# Harness (stand-in): 4 rays of 8 samples; a small density MLP (Linear-ReLU-Linear-Softplus) on random sample
# points gives sigmas, alphas = 1 - exp(-sigma * delta); the prefix transmittance is the product of (1 - alpha)
# over 3 earlier samples of each ray from the same MLP; colours from a Linear-Sigmoid head, composited with the
# weights; an L2 loss against random target colours.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
volrend = importlib.import_module("1903helpers_nerfacc_volrend")


def compute():
    torch.manual_seed(0)
    density = torch.nn.Sequential(torch.nn.Linear(3, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1), torch.nn.Softplus())
    color = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Sigmoid())
    n_rays, n_samples, n_prev = 4, 8, 3
    points = torch.randn(n_rays, n_samples, 3)
    prev_points = torch.randn(n_rays, n_prev, 3)
    delta = 0.25
    alphas = 1 - torch.exp(-density(points).squeeze(-1) * delta)
    prev_alphas = 1 - torch.exp(-density(prev_points).squeeze(-1) * delta)
    prefix_trans = (1 - prev_alphas).prod(dim=-1, keepdim=True).expand(n_rays, n_samples)
    weights, trans = volrend.render_weight_from_alpha(alphas, prefix_trans=prefix_trans)
    rgb = (weights[..., None] * color(points)).sum(dim=-2)
    target = torch.rand(n_rays, 3)
    loss = ((rgb - target) ** 2).mean()
    loss.backward()
    out = {"density.%s.grad" % k: p.grad for k, p in density.named_parameters()}
    out.update({"color.%s.grad" % k: p.grad for k, p in color.named_parameters()})
    out["weights"] = weights.detach()
    out["loss"] = loss.detach()
    return out


if __name__ == "__main__":
    compute()
