# source: https://github.com/lucidrains/lightweight-gan/issues/32
# pattern: subscript_assign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# lightweight-gan, lightweight_gan/diff_augment.py, rand_offset (the 'offset' / 'offset_h' / 'offset_v' augmentations):
# `for image_index in range(x.size(0)): ... x[image_index] = torch.roll(x[image_index], value_h, 2)` writes into the
# batch it was given. In Trainer.train the real batch is made a leaf for the gradient penalty
# (`image_batch.requires_grad_()`) and passed through `D_aug(image_batch, ...)` -> AugWrapper -> DiffAugment; when the
# random horizontal flip is skipped, rand_offset writes into a view of that leaf. The reporter (training with
# `--aug-types [offset_h] --aug-prob 1`) got "RuntimeError: leaf variable has been moved into the graph interior"
# (issue #32, PyTorch of 2020; torch 2.13 raises "a view of a leaf Variable that requires grad is being used in an
# in-place operation" at the assignment). The maintainer's fix, commit 5d12685 (PR #33, "fix inplace operation being
# used in rand offset", opened the day of the report, merged the next): roll each image of `x.unbind(dim=0)` and
# `torch.stack` them.
# The library module is 905helpers_diff_augment.py (ref: 905helpers_diff_augment_fixed.py).
# Stand-ins: the discriminator is a small conv net returning (logits, 32x32-branch logits, aux loss) as the real one
# does, without the decoder / SLE parts; no AMP, no DDP, one gradient-accumulation step; images 2 x 3 x 16 x 16;
# the generator is a linear stand-in run under no_grad as in the trainer; python's `random` is seeded (seed 1: the
# real batch is not flipped and is offset).
import importlib
import os
import random
import sys
from contextlib import contextmanager
from random import random as rand01

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import grad as torch_grad

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
diff_augment = importlib.import_module("905helpers_diff_augment")
DiffAugment = diff_augment.DiffAugment


@contextmanager
def null_context():
    yield


def hinge_loss(real, fake):
    return (F.relu(1 + real) + F.relu(1 - fake)).mean()


def random_hflip(tensor, prob):
    if prob > rand01():
        return tensor
    return torch.flip(tensor, dims=(3,))


class AugWrapper(nn.Module):
    def __init__(self, D, image_size):
        super().__init__()
        self.D = D

    def forward(self, images, prob = 0., types = [], detach = False, **kwargs):
        context = torch.no_grad if detach else null_context

        with context():
            if rand01() < prob:
                images = random_hflip(images, prob=0.5)
                images = DiffAugment(images, types=types)

        return self.D(images, **kwargs)


class Discriminator(nn.Module):
    def __init__(self, chan=8):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, chan, 4, stride=2, padding=1), nn.LeakyReLU(0.1),
                                  nn.Conv2d(chan, chan * 2, 4, stride=2, padding=1), nn.LeakyReLU(0.1))
        self.to_logits = nn.Conv2d(chan * 2, 1, 4)
        self.to_shape_disc_out = nn.Sequential(nn.Conv2d(3, chan, 3, padding=1), nn.LeakyReLU(0.1),
                                               nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(chan, 1))

    def forward(self, x, calc_aux_loss = False, **kwargs):
        out = self.body(x)
        logits = self.to_logits(out).flatten(1)
        out_32x32 = self.to_shape_disc_out(F.interpolate(x, size=8))
        aux_loss = (out ** 2).mean() * 0.1 if calc_aux_loss else None
        return logits, out_32x32, aux_loss


def compute():
    torch.manual_seed(0)
    random.seed(1)
    D = Discriminator()
    D_aug = AugWrapper(D, 16)
    G = nn.Sequential(nn.Linear(8, 3 * 16 * 16), nn.Tanh())
    D_opt = torch.optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.9))
    aug_kwargs = {'prob': 1., 'types': ['offset_h']}
    batch_size, gp_weight = 2, 10

    D_opt.zero_grad()
    latents = torch.randn(batch_size, 8)
    image_batch = torch.rand(batch_size, 3, 16, 16) * 2 - 1
    image_batch.requires_grad_()

    with torch.no_grad():
        generated_images = G(latents).view(batch_size, 3, 16, 16)

    fake_output, fake_output_32x32, _ = D_aug(generated_images, detach = True, **aug_kwargs)
    real_output, real_output_32x32, real_aux_loss = D_aug(image_batch, calc_aux_loss = True, **aug_kwargs)

    divergence = hinge_loss(real_output, fake_output)
    divergence_32x32 = hinge_loss(real_output_32x32, fake_output_32x32)
    disc_loss = divergence + divergence_32x32 + real_aux_loss

    outputs = [real_output, real_output_32x32]
    gradients = torch_grad(outputs=outputs, inputs=image_batch,
                           grad_outputs=list(map(lambda t: torch.ones(t.size()), outputs)),
                           create_graph=True, retain_graph=True, only_inputs=True)[0]
    gradients = gradients.reshape(batch_size, -1)
    gp = gp_weight * ((gradients.norm(2, dim=1) - 1) ** 2).mean()
    disc_loss = disc_loss + gp

    disc_loss.backward()
    grads = {n: p.grad.clone() for n, p in D.named_parameters()}
    D_opt.step()
    return grads


if __name__ == "__main__":
    compute()
