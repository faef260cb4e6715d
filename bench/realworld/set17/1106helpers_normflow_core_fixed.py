# Reduced copy of normflow/core.py and normflow/distributions/base.py (normalizing-flows, April 2022) with commit
# 45e0d38 applied for case 1106: NormalizingFlow.reverse_kld and the GaussianMixture base distribution. Stand-ins: numpy is
# replaced by torch in GaussianMixture.__init__ (numpy is not installed); GaussianMixture.forward is the version of
# commit 45e0d38 itself (that commit also fixed the mode sampling shapes, which the original cannot run with), so only
# the in-place statement of core.py differs between this module and ..._fixed.py; the score_fn=False branch of
# reverse_kld is left out.
import math

import torch
import torch.nn as nn


class NormalizingFlow(nn.Module):
    """
    Normalizing Flow model to approximate target distribution
    """
    def __init__(self, q0, flows, p=None):
        super().__init__()
        self.q0 = q0
        self.flows = nn.ModuleList(flows)
        self.p = p

    def reverse_kld(self, num_samples=1, beta=1., score_fn=True):
        """
        Estimates reverse KL divergence, see arXiv 1912.02762
        """
        z, log_q_ = self.q0(num_samples)
        log_q = torch.zeros_like(log_q_)
        log_q += log_q_
        for flow in self.flows:
            z, log_det = flow(z)
            log_q -= log_det
        log_p = self.p.log_prob(z)
        return torch.mean(log_q) - beta * torch.mean(log_p)


class GaussianMixture(nn.Module):
    """
    Mixture of Gaussians with diagonal covariance matrix
    """
    def __init__(self, n_modes, dim, loc=None, scale=None, weights=None, trainable=True):
        super().__init__()
        self.n_modes = n_modes
        self.dim = dim
        if loc is None:
            loc = torch.randn(self.n_modes, self.dim, dtype=torch.float64)
        loc = torch.as_tensor(loc, dtype=torch.float64)[None, ...]
        if scale is None:
            scale = torch.ones(self.n_modes, self.dim, dtype=torch.float64)
        scale = torch.as_tensor(scale, dtype=torch.float64)[None, ...]
        if weights is None:
            weights = torch.ones(self.n_modes, dtype=torch.float64)
        weights = torch.as_tensor(weights, dtype=torch.float64)[None, ...]
        weights = weights / weights.sum(1)
        if trainable:
            self.loc = nn.Parameter(1. * loc)
            self.log_scale = nn.Parameter(torch.log(1. * scale))
            self.weight_scores = nn.Parameter(torch.log(1. * weights))
        else:
            self.register_buffer("loc", 1. * loc)
            self.register_buffer("log_scale", torch.log(1. * scale))
            self.register_buffer("weight_scores", torch.log(1. * weights))

    def forward(self, num_samples=1):
        # Get weights
        weights = torch.softmax(self.weight_scores, 1)

        # Sample mode indices
        mode = torch.multinomial(weights[0, :], num_samples, replacement=True)
        mode_1h = nn.functional.one_hot(mode, self.n_modes)
        mode_1h = mode_1h[..., None]

        # Get samples
        eps_ = torch.randn(num_samples, self.dim, dtype=self.loc.dtype, device=self.loc.device)
        scale_sample = torch.sum(torch.exp(self.log_scale) * mode_1h, 1)
        loc_sample = torch.sum(self.loc * mode_1h, 1)
        z = eps_ * scale_sample + loc_sample

        # Compute log probability
        eps = (z[:, None, :] - self.loc) / torch.exp(self.log_scale)
        log_p = - 0.5 * self.dim * math.log(2 * math.pi) + torch.log(weights) \
            - 0.5 * torch.sum(torch.pow(eps, 2), 2) \
            - torch.sum(self.log_scale, 2)
        log_p = torch.logsumexp(log_p, 1)

        return z, log_p
