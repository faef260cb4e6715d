# source: https://github.com/pytti-tools/pytti-core/pull/225
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# pytti-core (CLIP-guided image generation), src/pytti/Perceptor/Prompt.py, spherical_dist_loss (the loss of every
# text/image Prompt): `x = F.normalize(x, dim=-1); y = F.normalize(y, dim=-1);
# return x.sub_(y).norm(dim=-1).div_(2).arcsin_().pow_(2).mul_(2)`; the norm saved its result for backward and the
# chained in-place ops overwrite it, so optimising an image against a prompt fails in backward on current PyTorch
# ("one of the variables needed for gradient computation has been modified by an inplace operation"; the PR links
# pytorch#39141). PR #225 ("[BUGFIX] remove inplace operations from spherical_dist to resolve new backprop error",
# merged): the same chain written out of place, `(x - y).norm(dim=-1).div(2).arcsin().pow(2).mul(2)` (the diff is not
# shown in the stored thread; the reference writes that chain).
# The library module is 303helpers_pytti_prompt.py (ref: 303helpers_pytti_prompt_fixed.py).
# Stand-ins: CLIP is replaced by a seeded linear "perceptor" on 8 random crops of a learnable 3 x 16 x 16 image
# (embedding size 12); the prompt's embedding is a fixed random vector with weight "1" and stop "-inf"; one
# evaluation of the prompt loss and backward, no optimizer step.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
prompt_mod = importlib.import_module("303helpers_pytti_prompt")


class TinyPerceptor(nn.Module):
    def __init__(self, cut_size=8, embed_dim=12):
        super().__init__()
        self.cut_size = cut_size
        self.proj = nn.Linear(3 * cut_size * cut_size, embed_dim)

    def forward(self, image, cutn=8):
        g = torch.Generator().manual_seed(3)
        side = image.shape[-1]
        cutouts, positions, sizes = [], [], []
        for _ in range(cutn):
            ox, oy = torch.randint(0, side - self.cut_size + 1, (2,), generator=g).tolist()
            cutouts.append(image[:, oy:oy + self.cut_size, ox:ox + self.cut_size].reshape(-1))
            positions.append(torch.tensor([ox / side, oy / side]))
            sizes.append(torch.tensor([self.cut_size / side, self.cut_size / side]))
        embeds = self.proj(torch.stack(cutouts))
        return embeds, torch.stack(positions), torch.stack(sizes)


def compute():
    torch.manual_seed(0)
    image = nn.Parameter(torch.rand(3, 16, 16))
    perceptor = TinyPerceptor()
    for p in perceptor.parameters():
        p.requires_grad_(False)
    prompt = prompt_mod.Prompt(torch.randn(1, 12), "1", "-inf", "a red fox", "a red fox:1")
    embed, position, size = perceptor(image)
    loss, raw = prompt(embed, position, size)
    loss.backward()
    return {"image_grad": image.grad}


if __name__ == "__main__":
    compute()
