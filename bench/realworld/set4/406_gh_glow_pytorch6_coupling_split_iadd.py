# source: https://github.com/chaiyujin/glow-pytorch/pull/6
# pattern: setitem_on_view
# codemod_fixable: yes
# error: A
# ref_semantics: same
# Glow FlowStep.normal_flow (glow/models.py): `z1, z2 = thops.split_feature(z, "split")` returns two slices of
# z (406helpers_glow_modules.py holds thops/modules); the coupling then writes the second half in place:
# `z2 += self.f(z1)` (additive) or `z2 += shift; z2 *= scale` (affine). z1, a view of the same z, was saved
# by the first conv of self.f, so the write through z2 bumps the version that conv's backward checks.
# Merged PR "Fixed un-computable gradients" (commit 3aa18c3): `z2 = z2 + self.f(z1)`, `z2 = z2 + shift`,
# `z2 = z2 * scale` (and likewise in reverse_flow).
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
thops = modules = import_module("406helpers_glow_modules")


def f(in_channels, out_channels, hidden_channels):
    return nn.Sequential(
        modules.Conv2d(in_channels, hidden_channels), nn.ReLU(inplace=False),
        modules.Conv2d(hidden_channels, hidden_channels, kernel_size=[1, 1]), nn.ReLU(inplace=False),
        modules.Conv2dZeros(hidden_channels, out_channels))


class FlowStep(nn.Module):
    FlowCoupling = ["additive", "affine"]
    FlowPermutation = {
        "reverse": lambda obj, z, logdet, rev: (obj.reverse(z, rev), logdet),
    }

    def __init__(self, in_channels, hidden_channels, actnorm_scale=1.0, flow_permutation="reverse",
                 flow_coupling="additive"):
        super().__init__()
        self.flow_permutation = flow_permutation
        self.flow_coupling = flow_coupling
        # 1. actnorm
        self.actnorm = modules.ActNorm2d(in_channels, actnorm_scale)
        # 2. permute
        self.reverse = modules.Permute2d(in_channels, shuffle=False)
        # 3. coupling
        if flow_coupling == "additive":
            self.f = f(in_channels // 2, in_channels // 2, hidden_channels)
        elif flow_coupling == "affine":
            self.f = f(in_channels // 2, in_channels, hidden_channels)

    def forward(self, input, logdet=None, reverse=False):
        if not reverse:
            return self.normal_flow(input, logdet)
        else:
            return self.reverse_flow(input, logdet)

    def normal_flow(self, input, logdet):
        assert input.size(1) % 2 == 0
        # 1. actnorm
        z, logdet = self.actnorm(input, logdet=logdet, reverse=False)
        # 2. permute
        z, logdet = FlowStep.FlowPermutation[self.flow_permutation](self, z, logdet, False)
        # 3. coupling
        z1, z2 = thops.split_feature(z, "split")
        if self.flow_coupling == "additive":
            z2 += self.f(z1)
        elif self.flow_coupling == "affine":
            h = self.f(z1)
            shift, scale = thops.split_feature(h, "cross")
            scale = torch.sigmoid(scale + 2.)
            z2 += shift
            z2 *= scale
            logdet = thops.sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        z = thops.cat_feature(z1, z2)
        return z, logdet

    def reverse_flow(self, input, logdet):
        assert input.size(1) % 2 == 0
        # 1.coupling
        z1, z2 = thops.split_feature(input, "split")
        if self.flow_coupling == "additive":
            z2 -= self.f(z1)
        elif self.flow_coupling == "affine":
            h = self.f(z1)
            shift, scale = thops.split_feature(h, "cross")
            scale = torch.sigmoid(scale + 2.)
            z2 /= scale
            z2 -= shift
            logdet = -thops.sum(torch.log(scale), dim=[1, 2, 3]) + logdet
        z = thops.cat_feature(z1, z2)
        # 2. permute
        z, logdet = FlowStep.FlowPermutation[self.flow_permutation](self, z, logdet, True)
        # 3. actnorm
        z, logdet = self.actnorm(z, logdet=logdet, reverse=True)
        return z, logdet


def compute():
    torch.manual_seed(0)
    steps = nn.ModuleList([FlowStep(4, 8, flow_coupling="additive"), FlowStep(4, 8, flow_coupling="affine")])
    with torch.no_grad():  # harness: Conv2dZeros starts at zero; give it some weight so every path has gradient
        for m in steps.modules():
            if isinstance(m, modules.Conv2dZeros):
                m.weight.normal_(0.0, 0.05)
    x = torch.randn(2, 4, 4, 4)
    z, logdet = x, torch.zeros(2)
    for step in steps:
        z, logdet = step(z, logdet)
    nll = 0.5 * z.pow(2).sum(dim=[1, 2, 3]) - logdet
    nll.mean().backward()
    return {n: p.grad for n, p in steps.named_parameters()}


if __name__ == "__main__":
    compute()
