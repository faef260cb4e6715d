# x_transformers/x_transformers.py (lucidrains/x-transformers) before PR #55, reduced to what
# ContinuousTransformerWrapper needs. AbsolutePositionalEmbedding and ContinuousTransformerWrapper are the
# package's; AttentionLayers/Encoder is a minimal stand-in (pre-norm self-attention + feed-forward blocks)
# with the same constructor/forward signature, since the real one is ~400 lines not involved in the bug.
from collections import namedtuple

import torch
from torch import nn

LayerIntermediates = namedtuple('Intermediates', ['hiddens', 'attn_intermediates'])


def exists(val):
    return val is not None


class always():
    def __init__(self, val):
        self.val = val

    def __call__(self, *args, **kwargs):
        return self.val


class AbsolutePositionalEmbedding(nn.Module):
    def __init__(self, dim, max_seq_len):
        super().__init__()
        self.emb = nn.Embedding(max_seq_len, dim)
        self.init_()

    def init_(self):
        nn.init.normal_(self.emb.weight, std = 0.02)

    def forward(self, x):
        n = torch.arange(x.shape[1], device = x.device)
        return self.emb(n)[None, :, :]


class AttentionLayers(nn.Module):
    def __init__(self, dim, depth, heads = 8, causal = False, **kwargs):
        super().__init__()
        self.dim = dim
        self.depth = depth
        self.has_pos_emb = False
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                nn.LayerNorm(dim), nn.MultiheadAttention(dim, heads, batch_first = True),
                nn.LayerNorm(dim), nn.Sequential(nn.Linear(dim, dim * 4), nn.GELU(), nn.Linear(dim * 4, dim)),
            ]))

    def forward(self, x, mask = None, mems = None, return_hiddens = False, **kwargs):
        hiddens = []
        for norm1, attn, norm2, ff in self.layers:
            hiddens.append(x)
            h = norm1(x)
            x = attn(h, h, h, need_weights = False)[0] + x
            x = ff(norm2(x)) + x
        if return_hiddens:
            return x, LayerIntermediates(hiddens = hiddens, attn_intermediates = [])
        return x


class Encoder(AttentionLayers):
    def __init__(self, **kwargs):
        assert 'causal' not in kwargs, 'cannot set causality on encoder'
        super().__init__(causal = False, **kwargs)


class ContinuousTransformerWrapper(nn.Module):
    def __init__(
        self,
        *,
        max_seq_len,
        attn_layers,
        dim_in = None,
        dim_out = None,
        emb_dim = None,
        emb_dropout = 0.,
        use_pos_emb = True
    ):
        super().__init__()
        assert isinstance(attn_layers, AttentionLayers), 'attention layers must be one of Encoder or Decoder'

        dim = attn_layers.dim

        self.max_seq_len = max_seq_len

        self.pos_emb = AbsolutePositionalEmbedding(dim, max_seq_len) if (use_pos_emb and not attn_layers.has_pos_emb) else always(0)
        self.emb_dropout = nn.Dropout(emb_dropout)

        self.project_in = nn.Linear(dim_in, dim) if exists(dim_in) else nn.Identity()

        self.attn_layers = attn_layers
        self.norm = nn.LayerNorm(dim)

        self.project_out = nn.Linear(dim, dim_out) if exists(dim_out) else nn.Identity()

    def forward(
        self,
        x,
        return_embeddings = False,
        mask = None,
        return_attn = False,
        mems = None,
        **kwargs
    ):
        b, n, _, device = *x.shape, x.device

        x = self.project_in(x)
        x += self.pos_emb(x)
        x = self.emb_dropout(x)

        x, intermediates = self.attn_layers(x, mask = mask, mems = mems, return_hiddens = True, **kwargs)
        x = self.norm(x)

        out = self.project_out(x) if not return_embeddings else x

        return out
