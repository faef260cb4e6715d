# source: https://github.com/huggingface/transformers/pull/24529 (fixes huggingface/transformers#24525)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# OwlViTClassPredictionHead.forward normalises with `image_class_embeds /= torch.linalg.norm(...) + 1e-6` (and the same
# for query_embeds); linalg.norm saved its input for backward. Note the precedence trap: the correct out-of-place
# rewrite is a = a / (norm + 1e-6), as pointed out in the PR review, not a / norm + 1e-6.
from types import SimpleNamespace
from typing import Tuple

import torch
from torch import nn


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, config):
        super().__init__()

        out_dim = config.text_config.hidden_size
        query_dim = config.vision_config.hidden_size

        self.dense0 = nn.Linear(query_dim, out_dim)
        self.logit_shift = nn.Linear(query_dim, 1)
        self.logit_scale = nn.Linear(query_dim, 1)
        self.elu = nn.ELU()

    def forward(
        self,
        image_embeds: torch.FloatTensor,
        query_embeds: torch.FloatTensor,
        query_mask: torch.Tensor,
    ) -> Tuple[torch.FloatTensor]:

        image_class_embeds = self.dense0(image_embeds)

        # Normalize image and text features
        image_class_embeds /= torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6
        query_embeds /= torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6

        # Get class predictions
        pred_logits = torch.einsum('...pd,...qd->...pq', image_class_embeds, query_embeds)

        # Apply a learnable shift and scale to logits
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.logit_scale(image_embeds)
        logit_scale = self.elu(logit_scale) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale

        if query_mask is not None:
            if query_mask.ndim > 1:
                query_mask = torch.unsqueeze(query_mask, dim=-2)

            pred_logits = pred_logits.to(torch.float64)
            pred_logits = torch.where(query_mask==0, -1e6, pred_logits)

        return (pred_logits, image_class_embeds)


def compute():
    torch.manual_seed(0)
    config = SimpleNamespace(text_config=SimpleNamespace(hidden_size=8),
                             vision_config=SimpleNamespace(hidden_size=12))
    class_head = OwlViTClassPredictionHead(config)
    text_projection = nn.Linear(10, 8, bias=False)
    image_embeds = torch.randn(2, 6, 12, requires_grad=True)      # (batch, patches, vision hidden)
    query_embeds = text_projection(torch.randn(2, 3, 10))          # (batch, queries, text hidden)
    query_mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    pred_logits, image_class_embeds = class_head(image_embeds, query_embeds, query_mask)
    loss = pred_logits.float().clamp(min=-50).sum() + image_class_embeds.pow(2).sum()
    loss.backward()
    grads = {"image_embeds": image_embeds.grad, "text_projection.weight": text_projection.weight.grad}
    grads.update({"class_head." + n: p.grad for n, p in class_head.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
