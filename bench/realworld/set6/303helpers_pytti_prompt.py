# helper for case 303: src/pytti/Perceptor/Prompt.py of pytti-tools/pytti-core before PR #225 (spherical_dist_loss,
# mask_all, Prompt) with the helpers it imports from pytti/__init__.py (replace_grad, parametric_eval) reduced to
# what Prompt.forward uses; CLIP, PIL, masks by image/semantics and the multi-image prompts are dropped.
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F

DEVICE = torch.device("cpu")


class ReplaceGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x_forward, x_backward):
        ctx.shape = x_backward.shape
        return x_forward

    @staticmethod
    def backward(ctx, grad_in):
        return None, grad_in.sum_to_size(ctx.shape)


replace_grad = ReplaceGrad.apply


def parametric_eval(string, **vals):
    # stand-in: pytti evaluates a math expression in the scene's time variables; the prompts here are plain numbers
    if isinstance(string, str):
        return float(string)
    return string


def spherical_dist_loss(x, y):
    x = F.normalize(x, dim=-1)
    y = F.normalize(y, dim=-1)
    return x.sub_(y).norm(dim=-1).div_(2).arcsin_().pow_(2).mul_(2)


@torch.no_grad()
def mask_all(pos, size, emb, thresh=0.5):
    return torch.zeros_like(size[..., 0]).fill_(float("-inf")), 1


class Prompt(nn.Module):
    @torch.no_grad()
    def __init__(
        self,
        embeds: torch.Tensor,
        weight: str,
        stop: str,
        text: str,
        prompt_string: str,
        mask: Callable = mask_all,
    ):
        super().__init__()
        if embeds is not None:
            self.register_buffer("embeds", embeds)
        self.weight = weight
        self.stop = stop
        self.input_axes = ("n", "c", "i")
        self.prompt_string = prompt_string
        self.text = text
        self.mask = mask
        self.enabled = True

    def forward(self, embed, position, size, offset=0.0, device=DEVICE):
        """
        input: (Tensor) input CLIP embedding
        returns the input's loss compared to the saved embedding
        """
        if not self.enabled or self.weight in ["0", 0]:
            return torch.as_tensor(offset, device=device), offset
        dists_raw = spherical_dist_loss(embed, self.embeds) + offset
        weight = torch.as_tensor(parametric_eval(self.weight), device=device)
        stop = torch.as_tensor(parametric_eval(self.stop), device=device)

        mask_stops, mask_weights = self.mask(position, size, embed.detach())
        weight = torch.as_tensor(mask_weights, device=device) * weight
        sign_offset = weight.sign().clamp(max=0)

        dists = dists_raw * weight.sign()
        stops = torch.maximum(mask_stops + sign_offset, stop)
        dists = weight.abs() * replace_grad(dists, torch.maximum(dists, stops))
        return dists.mean(), dists_raw.mean()
