# source: https://github.com/XuezheMax/wolf/pull/1
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# Wolf (generative flows, wolf/flows/couplings/transform.py). The affine coupling computes its scale in place on
# the second chunk of the coupling network's output: `mu, log_scale = params.chunk(2, dim=self.dim); scale =
# log_scale.mul_(0.5).tanh_().mul(self.alpha).add(1.0)`. The PR reports "one of the variables needed for gradient
# computation has been modified by an inplace operation" on PyTorch 1.7 and clones log_scale first; the author
# answered that the in-place ops were only there to save memory and proposed the out-of-place
# `log_scale.mul(0.5).tanh().mul(self.alpha).add(1.0)`, which is the ref. On torch 2.13 the same statement already
# fails in forward: chunk returns multiple views and `mul_` on one of them raises "Output 1 of Split is a
# view and is being modified inplace" (kind C).
# NICE1d (continuous split, affine transform), NICEMLPBlock and LinearWeightNorm are the repository's (the
# data-dependent init() methods and the iterative inverse are left out); Flow is reduced to nn.Module and
# nn.utils.weight_norm is spelled nn.utils.parametrizations.weight_norm (same reparametrisation, not deprecated).
from typing import Tuple

import torch
import torch.nn as nn


class LinearWeightNorm(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super(LinearWeightNorm, self).__init__()
        self.linear = nn.Linear(in_features, out_features, bias=bias)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.normal_(self.linear.weight, mean=0.0, std=0.05)
        if self.linear.bias is not None:
            nn.init.constant_(self.linear.bias, 0)
        self.linear = nn.utils.parametrizations.weight_norm(self.linear)

    def forward(self, input):
        return self.linear(input)


class NICEMLPBlock(nn.Module):
    def __init__(self, in_features, out_features, hidden_features, activation):
        super(NICEMLPBlock, self).__init__()
        assert activation in ['relu', 'elu', 'leaky_relu']
        self.fc1 = nn.Linear(in_features, hidden_features, bias=True)
        self.fc2 = nn.Linear(hidden_features, hidden_features, bias=True)
        self.fc3 = LinearWeightNorm(hidden_features, out_features, bias=True)

        if activation == 'relu':
            self.activation = nn.ReLU(inplace=True)
        elif activation == 'elu':
            self.activation = nn.ELU(inplace=True)
        else:
            self.activation = nn.LeakyReLU(inplace=True, negative_slope=1e-1)
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.constant_(self.fc1.bias, 0.0)
        nn.init.constant_(self.fc2.bias, 0.0)

    def forward(self, x):
        # fc1
        out = self.activation(self.fc1(x))
        # fc2
        out = self.activation(self.fc2(out))
        # fc3
        out = self.fc3(out)
        return out


class Affine():
    def __init__(self, dim, alpha):
        super(Affine, self).__init__()
        self.dim = dim
        self.alpha = alpha

    def calc_params(self, params):
        mu, log_scale = params.chunk(2, dim=self.dim)
        scale = log_scale.mul_(0.5).tanh_().mul(self.alpha).add(1.0)
        return mu, scale

    @staticmethod
    def fwd(z: torch.Tensor, params) -> Tuple[torch.Tensor, torch.Tensor]:
        mu, scale = params
        z = scale * z + mu
        logdet = scale.log().view(z.size(0), -1).sum(dim=1)
        return z, logdet


class NICE1d(nn.Module):
    """
    NICE Flow for 1D data
    """
    def __init__(self, in_features, hidden_features=None, split_type='continuous',
                 order='up', alpha=1.0, activation='elu'):
        super(NICE1d, self).__init__()
        self.in_features = in_features
        self.factor = 2
        assert in_features % self.factor == 0
        self.split_type = split_type
        self.up = order == 'up'

        if hidden_features is None:
            hidden_features = min(8 * in_features, 512)

        out_features = in_features // self.factor
        in_features = in_features - out_features
        self.z1_features = in_features if self.up else out_features

        self.transform = Affine(dim=-1, alpha=alpha)
        out_features = out_features * 2

        self.net = NICEMLPBlock(in_features, out_features, hidden_features, activation)

    def split(self, z):
        split_dim = z.dim() - 1
        dim = z.size(split_dim)
        return z.split([self.z1_features, dim - self.z1_features], dim=split_dim)

    def unsplit(self, z1, z2):
        split_dim = z1.dim() - 1
        return torch.cat([z1, z2], dim=split_dim)

    def calc_params(self, z: torch.Tensor):
        params = self.net(z)
        return params

    def forward(self, input: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        z1, z2 = self.split(input)
        z, zp = (z1, z2) if self.up else (z2, z1)

        params = self.transform.calc_params(self.calc_params(z))
        zp, logdet = self.transform.fwd(zp, params)

        z1, z2 = (z, zp) if self.up else (zp, z)
        return self.unsplit(z1, z2), logdet


def compute():
    torch.manual_seed(0)
    flows = nn.ModuleList([NICE1d(8, hidden_features=16, order='up'), NICE1d(8, hidden_features=16, order='down')])
    x = torch.randn(5, 8)
    out, logdet = x, x.new_zeros(x.size(0))
    for flow in flows:
        out, ld = flow(out)
        logdet = logdet + ld
    nll = (0.5 * out.pow(2).sum(dim=1) - logdet).mean()
    nll.backward()
    for p in flows.parameters():
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    return {n: p.grad for n, p in flows.named_parameters()}


if __name__ == "__main__":
    compute()
