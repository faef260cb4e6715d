# reference fix for 3401: icefall commit 1f7741d in the library module (3401helpers_icefall_zipformer_fixed.py):
# `attn_output_weights = attn_output_weights.masked_fill(attn_mask, float("-inf"))` and
# `attn_output_weights = attn_output_weights + attn_mask`, out of place.
import importlib
import os
import random
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
zipformer = importlib.import_module("3401helpers_icefall_zipformer_fixed")


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
