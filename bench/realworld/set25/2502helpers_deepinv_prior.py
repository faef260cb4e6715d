# Library module for case 2502: a small re-implementation of deepinv.optim.prior (Prior base class and L12Prior,
# the mixed l1/l2 group-sparsity prior) as it stood at the parent of commit 4bf6ae393 (DeepInverse PR #424, March
# 2025). Written anew; the prox body keeps the source's statements: the group norm `z`, then two masked writes
# into `z` itself (`z[mask_z] = torch.max(z[mask_z], tau_gamma)` and `z[mask_z] = 1 - tau_gamma / z[mask_z]`),
# then `z * x`.
# Stand-ins: Prior reduced to fn / prox; no explicit-prior machinery, no docstrings.
import torch
import torch.nn as nn


class Prior(nn.Module):
    def __init__(self, g=None):
        super().__init__()
        self._g = g
        self.explicit_prior = g is not None

    def fn(self, x, *args, **kwargs):
        return self._g(x, *args, **kwargs)

    def forward(self, x, *args, **kwargs):
        return self.fn(x, *args, **kwargs)


class L12Prior(Prior):
    """g(x) = sum over groups of the l2 norm along `l2_axis`; prox = group soft-thresholding."""

    def __init__(self, *args, l2_axis=-1, **kwargs):
        super().__init__(*args, **kwargs)
        self.explicit_prior = True
        self.l2_axis = l2_axis

    def fn(self, x, *args, **kwargs):
        group_norms = torch.norm(x, p=2, dim=self.l2_axis)
        return torch.norm(group_norms.reshape(x.shape[0], -1), p=1, dim=-1)

    def prox(self, x, *args, gamma=1.0, **kwargs):
        tau_gamma = torch.tensor(gamma)

        z = torch.norm(x, p=2, dim=self.l2_axis, keepdim=True)
        # groups whose norm is zero stay zero (z * x is zero there), so only the others are rescaled
        mask_z = z > 0
        z[mask_z] = torch.max(z[mask_z], tau_gamma)
        z[mask_z] = torch.tensor(1.0) - tau_gamma / z[mask_z]

        return torch.multiply(z, x)
