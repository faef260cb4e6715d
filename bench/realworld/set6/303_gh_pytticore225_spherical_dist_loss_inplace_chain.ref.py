# reference fix for 303: PR #225 in the library module (303helpers_pytti_prompt_fixed.py): the distance chain out of place.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
prompt_mod = importlib.import_module("303helpers_pytti_prompt_fixed")


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
