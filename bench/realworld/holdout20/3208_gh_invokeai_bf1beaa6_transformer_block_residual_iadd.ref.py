# reference fix for 3208: InvokeAI commit bf1beaa6 in the library module (3208helpers_invoke_attention_fixed.py):
# BasicTransformerBlock's residuals out of place again, `x = self.attn1(self.norm1(x)) + x` etc.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
attention = importlib.import_module("3208helpers_invoke_attention_fixed")


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
