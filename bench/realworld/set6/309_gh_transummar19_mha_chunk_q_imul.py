# source: https://github.com/lipiji/TranSummar/issues/19
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# TranSummar (transformer abstractive summarization), transformer.py, MultiheadAttention.forward: for self-attention
# `q, k, v = self.in_proj_qkv(query)` (which is `self._in_proj(query).chunk(3, dim=-1)`) and then `q *= self.scaling`
# on the first chunk; training (`python -u main.py`) fails in Model.encode -> TransformerLayer -> self_attn with
# "RuntimeError: Output 0 of SplitBackward0 is a view and is being modified inplace. This view is the output of a
# function that returns multiple views..." (issue #19, closed). The author's commit f85b475 ("fix", the next day):
# `q = q*self.scaling`.
# Stand-ins: Model.encode is reduced to token + learned position embeddings, a 2-layer encoder stack with the padding
# mask, and a linear word-probability layer trained with NLL against the input tokens (the copy/pointer decoder and
# label smoothing are dropped); embed 16, ff 32, 4 heads, dropout 0; 2 sequences of 7 tokens (one padded).
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
transformer = importlib.import_module("309helpers_transummar_transformer")


class Model(nn.Module):
    def __init__(self, vocab_size, embed_dim, ff_embed_dim, num_heads, num_layers, dropout, padding_idx=0):
        super().__init__()
        self.padding_idx = padding_idx
        self.tok_embed = nn.Embedding(vocab_size, embed_dim, padding_idx)
        self.pos_embed = nn.Embedding(64, embed_dim)
        self.enc_layers = nn.ModuleList()
        for _ in range(num_layers):
            self.enc_layers.append(transformer.TransformerLayer(embed_dim, ff_embed_dim, num_heads, dropout))
        self.word_prob = nn.Linear(embed_dim, vocab_size)
        self.dropout = dropout

    def encode(self, inp):
        seq_len, bsz = inp.size()
        pos = torch.arange(seq_len).unsqueeze(1).expand(seq_len, bsz)
        x = self.tok_embed(inp) + self.pos_embed(pos)
        x = F.dropout(x, p=self.dropout, training=self.training)
        padding_mask = torch.eq(inp, self.padding_idx)
        if not padding_mask.any():
            padding_mask = None
        for layer in self.enc_layers:
            x, _, _ = layer(x, self_padding_mask=padding_mask)
        return x, padding_mask

    def forward(self, x, y):
        hs, src_padding_mask = self.encode(x)
        log_probs = F.log_softmax(self.word_prob(hs), dim=-1)
        loss = F.nll_loss(log_probs.view(-1, log_probs.size(-1)), y.view(-1), ignore_index=self.padding_idx)
        return loss


def compute():
    torch.manual_seed(0)
    model = Model(vocab_size=30, embed_dim=16, ff_embed_dim=32, num_heads=4, num_layers=2, dropout=0.0)
    model.train()
    x = torch.tensor([[5, 7], [12, 3], [9, 21], [4, 8], [17, 2], [6, 0], [2, 0]])  # seq_len x bsz
    loss = model(x, x)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
