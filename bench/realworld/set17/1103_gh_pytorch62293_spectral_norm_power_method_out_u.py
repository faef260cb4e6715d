# source: https://github.com/pytorch/pytorch/pull/62293
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# PyTorch 1.9, torch/nn/utils/parametrizations.py, _SpectralNorm._power_method: the power iteration writes the
# buffers in place (`self._u = F.normalize(torch.mv(weight_mat, self._v), dim=0, eps=self.eps, out=self._u)`, and
# `_v` likewise) and only then clones them; forward uses the clones in `sigma = torch.vdot(self._u,
# torch.mv(weight_mat, self._v))`, which saves them. Reading the parametrized weight a second time in the same graph
# (the GAN pattern `loss = D(real) - D(fake)`, or a module applied twice, pytorch#66363) runs the power iteration
# again with `out=` into those saved clones, so backward fails ("[torch.FloatTensor [3]] is at version 1; expected
# version 0"). PR #62293 "Do not modify saved variables in-place for spectral norm during power iteration": "we
# should clone it BEFORE the in-place operation" (`self._u = self._u.clone(...)`, `self._v = self._v.clone(...)`
# before the loop).
# The library module is 1103helpers_torch_parametrizations.py (ref: 1103helpers_torch_parametrizations_fixed.py).
# Stand-ins: a two-layer spectral-normalised convolutional critic (3 -> 3 -> 1 channels, 8 x 8 images) applied to a
# real and a fake batch; loss: the WGAN critic loss D(fake).mean() - D(real).mean().
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
parametrizations = importlib.import_module("1103helpers_torch_parametrizations")


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = parametrizations.spectral_norm(nn.Conv2d(3, 3, 3, padding=1))
        self.conv2 = parametrizations.spectral_norm(nn.Conv2d(3, 1, 3, padding=1))

    def forward(self, x):
        return self.conv2(nn.functional.leaky_relu(self.conv1(x), 0.2))


def compute():
    torch.manual_seed(0)
    D = Critic()
    D.train()
    real = torch.randn(2, 3, 8, 8)
    fake = torch.randn(2, 3, 8, 8)
    loss = D(fake).mean() - D(real).mean()
    loss.backward()
    out = {n: p.grad for n, p in D.named_parameters()}
    out.update({n: b.clone() for n, b in D.named_buffers()})
    return out


if __name__ == "__main__":
    compute()
