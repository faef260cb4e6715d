# source: https://github.com/VincentStimper/normalizing-flows/commit/45e0d38b45ffd869dfd3c4c28e67e26ff231b934
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# normalizing-flows (normflow), normflow/core.py, NormalizingFlow.reverse_kld: `z, log_q = self.q0(num_samples)` and
# then `log_q -= log_det` for every flow. With the GaussianMixture base distribution, log_q is the output of
# `torch.logsumexp(log_p, 1)`, which logsumexp saved for its backward, so training by the reverse KL fails. Commit
# 45e0d38 "Fix bug with inplace operations when computing log probability for the reverse kld": `z, log_q_ =
# self.q0(num_samples); log_q = torch.zeros_like(log_q_); log_q += log_q_` before the loop.
# The library module is 1106helpers_normflow_core.py (ref: 1106helpers_normflow_core_fixed.py).
# Stand-ins: normflows' Planar flow and TwoModes target are copied below (torch instead of numpy); a 2-mode
# GaussianMixture base in 2-D, 4 planar flows, 16 samples, float64; one reverse-KL evaluation and backward.
import importlib
import math
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
nf = importlib.import_module("1106helpers_normflow_core")


class Planar(nn.Module):
    def __init__(self, shape):
        super().__init__()
        lim_w = math.sqrt(2. / math.prod(shape))
        lim_u = math.sqrt(2)
        self.u = nn.Parameter(torch.empty(shape, dtype=torch.float64)[None])
        nn.init.uniform_(self.u, -lim_u, lim_u)
        self.w = nn.Parameter(torch.empty(shape, dtype=torch.float64)[None])
        nn.init.uniform_(self.w, -lim_w, lim_w)
        self.b = nn.Parameter(torch.zeros(1, dtype=torch.float64))
        self.h = torch.tanh

    def forward(self, z):
        lin = torch.sum(self.w * z, list(range(1, self.w.dim()))) + self.b
        inner = torch.sum(self.w * self.u)
        u = self.u + (torch.log(1 + torch.exp(inner)) - 1 - inner) * self.w / torch.sum(self.w ** 2)
        h_ = lambda x: 1 / torch.cosh(x) ** 2
        z_ = z + u * self.h(lin.unsqueeze(1))
        log_det = torch.log(torch.abs(1 + torch.sum(self.w * u) * h_(lin)))
        return z_, log_det


class TwoModes:
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    def log_prob(self, z):
        a = torch.abs(z[:, 0])
        eps = abs(self.loc)
        return - 0.5 * ((torch.norm(z, dim=1) - self.loc) / (2 * self.scale)) ** 2 \
            - 0.5 * ((a - eps) / (3 * self.scale)) ** 2 \
            + torch.log(1 + torch.exp(-2 * (a * eps) / (3 * self.scale) ** 2))


def compute():
    torch.manual_seed(0)
    q0 = nf.GaussianMixture(2, 2)
    flows = [Planar((2,)) for _ in range(4)]
    model = nf.NormalizingFlow(q0, flows, TwoModes(2.0, 0.1))
    loss = model.reverse_kld(num_samples=16)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
