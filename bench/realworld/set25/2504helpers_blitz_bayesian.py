# Library module for case 2504: a small re-implementation of BLiTZ (Bayesian Layers in Torch Zoo) as it stood
# at the parent of commit 6d64b1e (PR #21, May 2020): blitz.modules.weight_sampler (GaussianVariational,
# ScaleMixturePrior), blitz.modules.linear_bayesian_layer.BayesianLinear and the KL term the
# variational_estimator decorator adds. Written anew; kept from the source: the reparameterisation noise lives in a
# registered buffer (`register_buffer('eps_w', ...)`, PR #19) and GaussianVariational.sample() refills it in place
# with `self.eps_w.normal_()` before `self.w = self.mu + self.sigma * self.eps_w` (MulBackward0 saves eps_w).
# Stand-ins: no frozen mode, no docstrings; the buffer starts as torch.empty (torch.Tensor(shape) in the source).
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GaussianVariational(nn.Module):
    """Variational posterior N(mu, log1p(exp(rho))^2) sampled by reparameterisation."""

    def __init__(self, mu, rho):
        super().__init__()
        self.mu = nn.Parameter(mu)
        self.rho = nn.Parameter(rho)
        self.register_buffer('eps_w', torch.empty(self.mu.shape))
        self.sigma = None
        self.w = None

    def sample(self):
        self.eps_w.normal_()
        self.sigma = torch.log1p(torch.exp(self.rho))
        self.w = self.mu + self.sigma * self.eps_w
        return self.w

    def log_posterior(self):
        assert self.w is not None, "sample() first"
        log_sqrt2pi = math.log(math.sqrt(2 * math.pi))
        lp = -log_sqrt2pi - torch.log(self.sigma) - ((self.w - self.mu) ** 2) / (2 * self.sigma ** 2)
        return lp.mean()


class ScaleMixturePrior(nn.Module):
    """Mixture of two zero-mean Gaussians, the Bayes-by-Backprop prior."""

    def __init__(self, pi, sigma1, sigma2):
        super().__init__()
        self.pi = pi
        self.normal1 = torch.distributions.Normal(0, sigma1)
        self.normal2 = torch.distributions.Normal(0, sigma2)

    def log_prior(self, w):
        pdf = self.pi * torch.exp(self.normal1.log_prob(w)) + (1 - self.pi) * torch.exp(self.normal2.log_prob(w))
        return torch.log(pdf).mean()


class BayesianModule(nn.Module):
    pass


class BayesianLinear(BayesianModule):
    def __init__(self, in_features, out_features, prior_sigma_1=1.0, prior_sigma_2=0.002, prior_pi=0.5):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features).uniform_(-0.2, 0.2))
        self.weight_rho = nn.Parameter(torch.empty(out_features, in_features).uniform_(-5, -4))
        self.weight_sampler = GaussianVariational(self.weight_mu, self.weight_rho)
        self.bias_mu = nn.Parameter(torch.empty(out_features).uniform_(-0.2, 0.2))
        self.bias_rho = nn.Parameter(torch.empty(out_features).uniform_(-5, -4))
        self.bias_sampler = GaussianVariational(self.bias_mu, self.bias_rho)
        self.weight_prior_dist = ScaleMixturePrior(prior_pi, prior_sigma_1, prior_sigma_2)
        self.bias_prior_dist = ScaleMixturePrior(prior_pi, prior_sigma_1, prior_sigma_2)
        self.log_prior = 0
        self.log_variational_posterior = 0

    def forward(self, x):
        w = self.weight_sampler.sample()
        b = self.bias_sampler.sample()
        self.log_variational_posterior = self.weight_sampler.log_posterior() + self.bias_sampler.log_posterior()
        self.log_prior = self.weight_prior_dist.log_prior(w) + self.bias_prior_dist.log_prior(b)
        return F.linear(x, w, b)


def kl_divergence_from_nn(model):
    kl = 0
    for module in model.modules():
        if isinstance(module, BayesianModule):
            kl = kl + module.log_variational_posterior - module.log_prior
    return kl
