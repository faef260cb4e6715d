# NVAE (NVlabs, hierarchical VAE) distributions.py as of the parent of commit b576900 ("Fix issue with pytorch"):
# soft_clamp5, sample_normal_jit and the Normal class, copied (license header shortened).
# The culprit: soft_clamp5 clamps in place, `x.div_(5.).tanh_().mul(5.)`; NVAE's model builds every posterior with
# `mu_q, log_sig_q = torch.chunk(param0, 2, dim=1)` and `Normal(mu_q, log_sig_q)`, so `x` is an output of chunk (a
# function returning several views), which autograd forbids to modify in place: "Output 0 of Split is a view and is
# being modified inplace" (the commit message quotes the TorchScript interpreter's failure on torch 1.7).
# Stand-ins: numpy (not installed with the benchmark's torch) replaced by `math` in log_p (np.log(2 * np.pi)); the
# import of utils.one_hot (used only by the discrete distributions, not copied) is cut; the two `@torch.jit.script`
# decorators are commented out: scripted, soft_clamp5 raises the same autograd error wrapped in "The following
# operation failed in the TorchScript interpreter" (checked on torch 2.13), and the benchmark reads the error's first line.
import math

import torch


# @torch.jit.script  (stand-in: decorator off, see the header)
def soft_clamp5(x: torch.Tensor):
    return x.div_(5.).tanh_().mul(5.)    #  5. * torch.tanh(x / 5.) <--> soft differentiable clamp between [-5, 5]


# @torch.jit.script  (stand-in: decorator off, see the header)
def sample_normal_jit(mu, sigma):
    eps = mu.mul(0).normal_()
    z = eps.mul_(sigma).add_(mu)
    return z, eps


class Normal:
    def __init__(self, mu, log_sigma, temp=1.):
        self.mu = soft_clamp5(mu)
        log_sigma = soft_clamp5(log_sigma)
        self.sigma = torch.exp(log_sigma) + 1e-2      # we don't need this after soft clamp
        if temp != 1.:
            self.sigma *= temp

    def sample(self):
        return sample_normal_jit(self.mu, self.sigma)

    def sample_given_eps(self, eps):
        return eps * self.sigma + self.mu

    def log_p(self, samples):
        normalized_samples = (samples - self.mu) / self.sigma
        log_p = - 0.5 * normalized_samples * normalized_samples - 0.5 * math.log(2 * math.pi) - torch.log(self.sigma)
        return log_p

    def kl(self, normal_dist):
        term1 = (self.mu - normal_dist.mu) / normal_dist.sigma
        term2 = self.sigma / normal_dist.sigma

        return 0.5 * (term1 * term1 + term2 * term2) - 0.5 - torch.log(term2)
