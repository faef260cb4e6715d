# reference fix for 905: commit 5d12685 (PR #33), rand_offset rolls unbound images and stacks them (helper _fixed).
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
diff_augment = importlib.import_module("905helpers_diff_augment_fixed")
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
