# source: https://github.com/k2-fsa/icefall/commit/1f7741d2b745b96161aa1df226cb5b23d0e9975e
# pattern: inplace_method
# codemod_fixable: yes
# error: C
# ref_semantics: same
# k2-fsa/icefall, the Zipformer of pruned_transducer_stateless7 (PR #774, "Fix zipformer attn_output_weights", which
# readies the attention for chunk-wise masks; its second commit 1f7741d is "remove in-place op"). In
# RelPositionMultiheadAttention.multi_head_attention_forward, in training and with probability 0.1, the scores pass
# through `penalize_abs_values_gt`, which returns them through the custom autograd Function `WithLoss` (whose forward
# returns its input as-is); the scores are then `.view`ed and, with a boolean attention mask, written in place:
# `attn_output_weights.masked_fill_(attn_mask, float("-inf"))` (a float mask: `attn_output_weights += attn_mask`).
# A view of an input returned as-is by a custom Function may not be modified in place: "Output 0 of View is a view
# and is being modified inplace. This view was created inside a custom Function (or because an input was returned
# as-is) ...". The fix binds the results out of place: `attn_output_weights = attn_output_weights.masked_fill(
# attn_mask, float("-inf"))`, `attn_output_weights = attn_output_weights + attn_mask`.
# Library modules: 3401helpers_icefall_zipformer.py (ref: ..._fixed.py; RelPositionMultiheadAttention) and
# 3401helpers_icefall_scaling.py (shared; penalize_abs_values_gt, WithLoss, softmax, ScaledLinear, Identity; Whiten is
# a stand-in that is a no-op forward and draws no random number). Stand-ins here: one attention layer with a
# residual and a linear output, trained with Adam on random features (the recipe trains the whole transducer on
# LibriSpeech); the chunk-wise mask (chunks of 2 frames, no look-ahead) and the padding mask are what a streaming
# (dynamic-chunk) training passes as `attn_mask` / `key_padding_mask`; the positional embedding is a fixed random
# tensor of the source's shape (1, 2*T-1, E). Python's `random` is seeded so that the penalty branch (p = 0.1) is
# taken at the third training step, as it is at some step of any training run.
import importlib
import os
import random
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
zipformer = importlib.import_module("3401helpers_icefall_zipformer")


class ChunkAttentionLayer(nn.Module):
    """Stand-in around the source's attention: residual attention, then a linear output."""

    def __init__(self, embed_dim=16, attention_dim=16, num_heads=2, pos_dim=4, vocab=10):
        super().__init__()
        self.self_attn = zipformer.RelPositionMultiheadAttention(
            embed_dim, attention_dim, num_heads, pos_dim, dropout=0.0)
        self.output = nn.Linear(embed_dim, vocab)

    def forward(self, src, pos_emb, src_mask, src_key_padding_mask):
        attn_out, _ = self.self_attn(src, pos_emb, key_padding_mask=src_key_padding_mask, attn_mask=src_mask)
        return self.output(src + attn_out)


def chunk_mask(seq_len, chunk_size):
    # True where a frame may not attend: frames of later chunks.
    chunk_idx = torch.arange(seq_len) // chunk_size
    return chunk_idx.unsqueeze(0) > chunk_idx.unsqueeze(1)


def compute():
    torch.manual_seed(0)
    random.seed(2)
    T, N, E = 6, 2, 16
    model = ChunkAttentionLayer(embed_dim=E)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    pos_emb = torch.randn(1, 2 * T - 1, E)
    src_mask = chunk_mask(T, 2)
    key_padding_mask = torch.zeros(N, T, dtype=torch.bool)
    key_padding_mask[1, 4:] = True
    out = {}
    for step in range(3):
        src = torch.randn(T, N, E)
        targets = torch.randint(0, 10, (T, N))
        logits = model(src, pos_emb, src_mask, key_padding_mask)
        valid = ~key_padding_mask.t()
        loss = nn.functional.cross_entropy(logits[valid], targets[valid])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        out["loss%d" % step] = loss.detach()
    out["in_proj.grad"] = model.self_attn.in_proj.weight.grad.clone()
    out["linear_pos.grad"] = model.self_attn.linear_pos.weight.grad.clone()
    out["in_proj.after"] = model.self_attn.in_proj.weight.detach().clone()
    out["output.after"] = model.output.weight.detach().clone()
    return out


if __name__ == "__main__":
    compute()
