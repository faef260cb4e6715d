"""muse-maskgit-pytorch 0.3.5: the one proven finding of `inplacefix check` (b47935c, stop 46):
`MaskGit.forward` (muse_maskgit_pytorch.py:684) takes `labels = torch.where(mask, ids, ignore_index)`
(line 680) to save `mask` for the gradient of `ids`, then `mask &= ~no_mask_mask` writes it. `ids`
are token ids: the VAE's codes (computed under `torch.no_grad()`) or the argument itself when it is
not a float tensor, and an integer tensor cannot require grad, so `where` saves nothing. The path
runs the training step on token ids with `no_mask_token_prob=0.2` (so line 684 runs) through a small
stand-in transformer (embedding, linear head, cross-entropy: what the step hands the real one) and
calls backward: it runs. Run from the installed file's source (`functions_from`: the package imports
the T5 encoder, vector_quantize_pytorch and more)."""

import _shim  # noqa: F401

import importlib.util
import types

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn
from _check import attempt, expect_line
from _rewrite import functions_from

FINDING = "muse_maskgit_pytorch/muse_maskgit_pytorch.py:684:IPF101"
PATH = importlib.util.find_spec("muse_maskgit_pytorch").submodule_search_locations[0] + "/muse_maskgit_pytorch.py"
names = functions_from(PATH, ["MaskGit.forward", "exists", "default", "uniform", "get_mask_subset_prob",
                              "cosine_schedule"])
names["rearrange"] = rearrange
names["random"] = lambda: 1.0  # no self-conditioning turn
forward = names["MaskGit.forward"]
expect_line(forward, 680, "labels = torch.where(mask, ids, ignore_index)")
expect_line(forward, 684, "mask &= ~no_mask_mask")


class Transformer(nn.Module):
    mask_id = 16
    self_cond = False

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(17, 8)
        self.head = nn.Linear(8, 16)

    def forward(self, x, labels=None, ignore_index=-1, return_logits=False, **_):
        logits = self.head(self.embed(x))
        loss = F.cross_entropy(rearrange(logits, "b n c -> b c n"), labels, ignore_index=ignore_index)
        return loss, logits


def step():
    torch.manual_seed(0)
    unit = types.SimpleNamespace(resize_image_for_cond_image=False, cond_drop_prob=0.5, vae=None,
                                 noise_schedule=names["cosine_schedule"], mask_id=16,
                                 no_mask_token_prob=0.2, transformer=Transformer(), self_cond_prob=0.9,
                                 token_critic=None)
    ids = torch.randint(0, 16, (2, 4, 4))
    forward(unit, ids).backward()


attempt(FINDING, "path", "MaskGit.forward(token ids, no_mask_token_prob=0.2) with a trainable stand-in transformer, backward", step)
