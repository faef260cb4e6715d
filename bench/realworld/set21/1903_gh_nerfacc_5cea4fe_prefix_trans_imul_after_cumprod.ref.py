# reference fix for 1903: commit 5cea4fe in the library module (1903helpers_nerfacc_volrend_fixed.py):
# `trans = trans * prefix_trans` out of place.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
volrend = importlib.import_module("1903helpers_nerfacc_volrend_fixed")


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
