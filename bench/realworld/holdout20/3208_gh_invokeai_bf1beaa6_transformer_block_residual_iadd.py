# source: https://github.com/invoke-ai/InvokeAI/commit/bf1beaa607984e34f3bfab8b264444318b6f47b0 (reverts 49a96b90, PR #482)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# InvokeAI (then lstein/stable-diffusion), the latent-diffusion UNet's SpatialTransformer: PR #482 (commit 49a96b90,
# "~7% speedup ... from switch to += in ldm.modules.attention") made BasicTransformerBlock._forward add its residuals
# in place, `x += self.attn1(self.norm1(x))`, `x += self.attn2(self.norm2(x), context=context)`,
# `x += self.ff(self.norm3(x))`. Each LayerNorm saved the x it normalised, so a training step through the block (the
# fork's textual-inversion fine-tuning: frozen model, a learnable token embedding in the cross-attention context)
# raises "one of the variables needed for gradient computation has been modified by an inplace operation" at
# backward; gradient checkpointing, which would hide the graph, is switched off in this fork (`if (False)` in
# util.checkpoint). Two days later the maintainer reverted it (bf1beaa6, "revert 49a96b90 due to conflicts during
# training"): `x = self.attn1(self.norm1(x)) + x` etc.
# The library modules are 3208helpers_invoke_attention.py (ref: ..._fixed.py) and 3208helpers_invoke_util.py; their
# headers name the stand-ins.
# Stand-ins here: one SpatialTransformer (2 heads of 4 channels, 8 input channels, a 4x4 latent) instead of the UNet;
# its zero-initialised proj_out gets small random weights, as after loading a checkpoint (else nothing reaches the
# embedding); the text encoder's output is a fixed random context of 5 tokens of width 6 whose second token is the
# learnable placeholder embedding (textual inversion's EmbeddingManager), trained with an MSE loss and one AdamW step.
# Returned: the loss, the block's output, the embedding's gradient and the embedding after the step.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
attention = importlib.import_module("3208helpers_invoke_attention")


def compute():
    torch.manual_seed(0)
    model = attention.SpatialTransformer(in_channels=8, n_heads=2, d_head=4, depth=1, context_dim=6)
    with torch.no_grad():
        torch.nn.init.normal_(model.proj_out.weight, std=0.2)
    model.train()
    for p in model.parameters():
        p.requires_grad_(False)

    placeholder = torch.nn.Parameter(torch.randn(1, 6) * 0.1)
    frozen_tokens = torch.randn(4, 6)
    optimizer = torch.optim.AdamW([placeholder], lr=5e-3)

    latent = torch.randn(2, 8, 4, 4)
    target = torch.randn(2, 8, 4, 4)
    context = torch.cat([frozen_tokens[:1], placeholder, frozen_tokens[1:]], dim=0).unsqueeze(0).expand(2, -1, -1)
    optimizer.zero_grad()
    out = model(latent, context=context)
    loss = F.mse_loss(out, target)
    loss.backward()
    grad = placeholder.grad.clone()
    optimizer.step()
    return {
        "loss": loss.detach(),
        "out": out.detach(),
        "placeholder.grad": grad,
        "placeholder.after_step": placeholder.detach().clone(),
    }


if __name__ == "__main__":
    compute()
