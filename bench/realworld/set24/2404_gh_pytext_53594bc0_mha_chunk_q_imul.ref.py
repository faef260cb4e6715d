# source: https://github.com/facebookresearch/pytext/commit/53594bc0a9b15638a8daddbed06d46978a527b95
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# PyText's TorchScriptable RoBERTa encoder, pytext/models/representations/transformer/multihead_attention.py at the
# fix's parent. MultiheadSelfAttention.forward projects the input once and splits it:
# `q, k, v = projection.chunk(3, dim=-1)`, then scales the queries in place, `q *= self.scaling`. chunk returns
# several views of one tensor, and such views may not be modified in place: the forward raises "Output 0 of Split is
# a view and is being modified inplace. This view is the output of a function that returns multiple views." (torch
# 2.13's wording; "SplitBackward" in older releases). Commit 53594bc0 "fix modify in-place error" ("Fluent2 tests
# started failing ... error message points to tensor being modified in-place"): `q = self.scaling * q`.
# Reduced (written anew, not copied): Transformer (token and learned positional embeddings, embedding layer norm,
# padding mask) with two TransformerLayer (attention, dropout, residual, layer norm, ResidualMLP with GeLU, final
# layer norm); stand-ins: small sizes (vocab 20, embedding 16, 2 heads, scaling head_dim ** -0.5, max length 12)
# instead of RoBERTa's, log_class_usage left out. Harness: two padded token sequences, a mean-squared error of the
# last state against a fixed random target, backward. compute() returns the last state and some parameters' gradients.
from typing import List, Optional

import torch
from torch import nn
from torch.nn import functional as F


class MultiheadSelfAttention(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int, scaling: float = 0.125, dropout: float = 0.1):
        super().__init__()
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = scaling
        self.dropout = nn.Dropout(dropout)
        self.input_projection = nn.Linear(embed_dim, 3 * embed_dim)
        self.output_projection = nn.Linear(embed_dim, embed_dim)

    def forward(self, query, key_padding_mask):
        target_length, batch_size, embed_dim = query.size()
        mask_batch_size, source_length = key_padding_mask.size()
        assert embed_dim == self.embed_dim
        assert batch_size == mask_batch_size

        # input projection
        projection = self.input_projection(query)
        q, k, v = projection.chunk(3, dim=-1)
        q = self.scaling * q

        batch_heads = batch_size * self.num_heads

        q = q.contiguous().view(-1, batch_heads, self.head_dim).transpose(0, 1)
        k = k.contiguous().view(-1, batch_heads, self.head_dim).transpose(0, 1)
        v = v.contiguous().view(-1, batch_heads, self.head_dim).transpose(0, 1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        attn_weights = attn_weights.view(batch_size, self.num_heads, target_length, source_length)
        attn_weights = attn_weights.masked_fill(key_padding_mask.unsqueeze(1).unsqueeze(2), float("-inf"))
        attn_weights = attn_weights.view(batch_heads, target_length, source_length)
        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(attn_weights)
        attn_weights = self.dropout(attn_weights)

        attn = torch.bmm(attn_weights, v)
        attn = attn.transpose(0, 1).contiguous().view(target_length, batch_size, embed_dim)
        return self.output_projection(attn)


class GeLU(nn.Module):
    def forward(self, input):
        return F.gelu(input.float()).type_as(input)


class ResidualMLP(nn.Module):
    def __init__(self, input_dim: int, hidden_dims: List[int], dropout: float = 0.1, activation=GeLU):
        super().__init__()
        modules = []
        for last_dim, dim in zip([input_dim] + hidden_dims, hidden_dims):
            modules.extend([nn.Linear(last_dim, dim), activation(), nn.Dropout(dropout)])
        last_dim = hidden_dims[-1] if hidden_dims else input_dim
        modules.extend([nn.Linear(last_dim, input_dim), nn.Dropout(dropout)])
        self.mlp = nn.Sequential(*modules)

    def forward(self, input):
        bias = self.mlp(input)
        return input + bias


class TransformerLayer(nn.Module):
    def __init__(self, embedding_dim: int, num_heads: int, dropout: float = 0.1):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.attention = MultiheadSelfAttention(embedding_dim, num_heads,
                                                scaling=(embedding_dim // num_heads) ** -0.5)
        self.residual_mlp = ResidualMLP(embedding_dim, hidden_dims=[embedding_dim * 4])
        self.attention_layer_norm = nn.LayerNorm(embedding_dim)
        self.final_layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, input, key_padding_mask):
        attention = self.attention(input, key_padding_mask)
        attention = self.dropout(attention)
        biased_input = input + attention
        biased_input = self.attention_layer_norm(biased_input)
        biased = self.residual_mlp(biased_input)
        return self.final_layer_norm(biased)


def make_positions(tensor, pad_index: int):
    masked = tensor.ne(pad_index).long()
    return torch.cumsum(masked, dim=1) * masked + pad_index


class PositionalEmbedding(nn.Module):
    def __init__(self, num_embeddings: int, embedding_dim: int, pad_index: Optional[int] = None):
        super().__init__()
        self.embedding = nn.Embedding(num_embeddings, embedding_dim, pad_index)
        self.pad_index = pad_index

    def forward(self, input):
        positions = make_positions(input, self.pad_index)
        return self.embedding(positions)


class Transformer(nn.Module):
    def __init__(self, vocab_size=20, embedding_dim=16, padding_idx=1, max_seq_len=12, num_layers=2,
                 num_heads=2, dropout=0.1):
        super().__init__()
        self.padding_idx = padding_idx
        self.token_embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx)
        self.layers = nn.ModuleList([TransformerLayer(embedding_dim, num_heads) for _ in range(num_layers)])
        self.positional_embedding = PositionalEmbedding(max_seq_len, embedding_dim, padding_idx)
        self.embedding_layer_norm = nn.LayerNorm(embedding_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, tokens: torch.Tensor) -> List[torch.Tensor]:
        padding_mask = tokens.eq(self.padding_idx)
        embedded = self.token_embedding(tokens)
        embedded_positions = self.positional_embedding(tokens)
        normed = self.embedding_layer_norm(embedded + embedded_positions)
        normed = self.dropout(normed)
        padded_normed = normed * (1 - padding_mask.unsqueeze(-1).type_as(normed))
        encoded = padded_normed.transpose(0, 1)
        states = [encoded]
        for layer in self.layers:
            encoded = layer(encoded, padding_mask)
            states.append(encoded)
        return states


def compute():
    torch.manual_seed(0)
    model = Transformer()
    model.train()
    tokens = torch.tensor([[0, 5, 7, 9, 3, 2, 11, 4], [0, 8, 6, 12, 2, 1, 1, 1]])
    states = model(tokens)
    last = states[-1]
    target = torch.randn(last.shape)
    loss = ((last - target) ** 2).mean()
    loss.backward()
    attn0 = model.layers[0].attention
    return {
        "last_state": last.detach(),
        "input_projection.weight.grad": attn0.input_projection.weight.grad,
        "output_projection.weight.grad": attn0.output_projection.weight.grad,
        "token_embedding.weight.grad": model.token_embedding.weight.grad,
    }
