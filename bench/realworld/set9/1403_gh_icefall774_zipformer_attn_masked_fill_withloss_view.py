# source: https://github.com/k2-fsa/icefall/pull/774
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# icefall (k2 speech recognition), zipformer's RelPositionMultiheadAttention.multi_head_attention_forward: in training,
# one step in ten, the attention scores go through `penalize_abs_values_gt`, which returns them through the custom
# autograd Function `WithLoss` whose forward returns its input as-is; the scores are then viewed to
# (bsz * num_heads, seq_len, seq_len) and, with a boolean (chunk-wise, streaming) attention mask, filled in place:
# `attn_output_weights.masked_fill_(attn_mask, float("-inf"))` -> "Output 0 of WithLossBackward is a view and is
# being modified inplace. This view was created inside a custom Function (or because an input was returned as-is)
# ...". PR #774 "Fix zipformer attn_output_weights" (merged) fixes the use of the attention mask; its commit
# 1f7741d2b "remove in-place op" writes `attn_output_weights = attn_output_weights.masked_fill(attn_mask,
# float("-inf"))` (and `attn_output_weights + attn_mask` for float masks). The PR text does not quote the error;
# the failure is the one this program shows on the code before the commit.
# The library module is 1403helpers_icefall_zipformer.py (ref: 1403helpers_icefall_zipformer_fixed.py).
# Stand-ins: see the helper's header; a chunk-wise attention mask (chunk 3, each frame sees its own and earlier
# chunks) and a key padding mask as the streaming recipe builds them; `random.seed(31)` so that the
# penalize_abs_values_gt branch (random.random() < 0.1) is taken on this step; one training step.
import importlib
import os
import random
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
zipformer = importlib.import_module("1403helpers_icefall_zipformer")


def compute():
    torch.manual_seed(0)
    random.seed(31)
    seq_len, bsz, embed_dim = 7, 2, 16
    attn = zipformer.RelPositionMultiheadAttention(embed_dim, attention_dim=16, num_heads=4, pos_dim=4)
    attn.train()
    opt = torch.optim.Adam(attn.parameters(), lr=1e-3)
    x = torch.randn(seq_len, bsz, embed_dim)
    pos_emb = torch.randn(1, 2 * seq_len - 1, embed_dim)
    chunk = torch.arange(seq_len) // 3
    attn_mask = chunk.unsqueeze(0) > chunk.unsqueeze(1)  # (seq_len, seq_len), True = may not attend
    key_padding_mask = torch.zeros(bsz, seq_len, dtype=torch.bool)
    key_padding_mask[1, 5:] = True

    out, weights = attn(x, pos_emb, key_padding_mask=key_padding_mask, attn_mask=attn_mask)
    loss = (out ** 2).mean()
    opt.zero_grad()
    loss.backward()
    res = {name: p.grad.clone() for name, p in attn.named_parameters()}
    res["out"] = out.detach()
    opt.step()
    res["in_proj_after"] = attn.in_proj.weight.detach().clone()
    return res


if __name__ == "__main__":
    compute()
