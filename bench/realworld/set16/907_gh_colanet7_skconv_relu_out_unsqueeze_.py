# source: https://github.com/MC-E/COLA-Net-Collaborative-Attention-Network-for-Image-Restoration/pull/7
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# COLA-Net (collaborative attention network for image restoration), DN_Gray/model/SK_model.py, SKConv.forward:
# `fea = conv(x).unsqueeze_(dim=1)` where each branch `conv` ends with `nn.ReLU(inplace=False)`; ReLU saved its output
# for backward and the in-place unsqueeze bumps its version, so training the grey-scale denoiser fails in backward
# (the PR links the forum thread "Struggling with a runtime error related to in-place operations"; merge_unit.py does
# the same on the SK / CA branch outputs and on the attention vectors). PR #7 ("Unsqueeze is now an Inplace,
# Non-Autograd Opt", open, author's commits d4abcad / dacc478 / 9ba5005): `conv(x)[:,None]` and `[..., None, None]`
# indexing in SKConv and merge_block (and in CA_model's size_selector).
# The repository module is 907helpers_cola_merge_unit.py (ref: 907helpers_cola_merge_unit_fixed.py).
# Stand-ins: the network is head conv -> one merge_block -> tail conv with a global residual (the DN_Gray model
# stacks several around its recurrent attention); ContextualAttention_Enhance is a small non-local block (see the
# helper); 32 channels, input 2 x 1 x 8 x 8 noisy patches (sigma 25/255); loss: L1 to the clean patch.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
merge_unit = importlib.import_module("907helpers_cola_merge_unit")


class COLANetStandIn(nn.Module):
    def __init__(self, n_colors=1, n_feats=32):
        super().__init__()
        self.head = nn.Conv2d(n_colors, n_feats, 3, padding=1)
        self.body = merge_unit.merge_block(in_channels=n_feats, out_channels=n_feats, vector_length=16)
        self.tail = nn.Conv2d(n_feats, n_colors, 3, padding=1)

    def forward(self, x):
        res = self.head(x)
        res = self.body(res)
        return x + self.tail(res)


def compute():
    torch.manual_seed(0)
    model = COLANetStandIn()
    model.train()
    clean = torch.rand(2, 1, 8, 8)
    noisy = clean + torch.randn(2, 1, 8, 8) * (25 / 255)
    loss = F.l1_loss(model(noisy), clean)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
