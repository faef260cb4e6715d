# Library module for case 2806 (reference: commit 3a979a4 applied, the four updates of the embedding out of place).
# facebookresearch/fairseq, fairseq/modules/transformer_sentence_encoder.py, read at the parent of commit 3a979a4
# ("Remove in-place operations in TransformerSentenceEncoder for captum insights", 2020-09-22). Written anew at small
# size (not copied): TransformerSentenceEncoder's constructor arguments used here, its embeddings (token, learned
# positions offset by the padding index, segments), and forward() with its in-place updates of the token embedding
# (`x *= self.embed_scale`, `x += self.embed_positions(...)`, `x += self.segment_embeddings(...)`,
# `x *= 1 - padding_mask...`), the transpose to T x B x C, the layer loop and the sentence representation follow
# the source. Stand-ins for what it imports from fairseq.modules: FairseqDropout (nn.Dropout), LayerNorm (nn.LayerNorm),
# PositionalEmbedding (a learned embedding over fairseq's make_positions: padding_idx + 1 + the position for
# non-padding tokens), TransformerSentenceEncoderLayer (a post-norm layer over nn.MultiheadAttention and a ReLU
# feed-forward, returning (x, attn)); quant noise, layerdrop, BERT init and freezing are left out.
from typing import Optional, Tuple

import torch
import torch.nn as nn


def make_positions(tensor, padding_idx: int):
    mask = tensor.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


class LearnedPositionalEmbedding(nn.Embedding):
    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int):
        super().__init__(num_embeddings, embedding_dim, padding_idx)

    def forward(self, input, positions: Optional[torch.Tensor] = None):
        if positions is None:
            positions = make_positions(input, self.padding_idx)
        return super().forward(positions)


def PositionalEmbedding(num_embeddings, embedding_dim, padding_idx, learned=True):
    assert learned
    return LearnedPositionalEmbedding(num_embeddings + padding_idx + 1, embedding_dim, padding_idx)


class TransformerSentenceEncoderLayer(nn.Module):
    def __init__(self, embedding_dim=16, ffn_embedding_dim=32, num_attention_heads=2, dropout=0.1,
                 attention_dropout=0.1, activation_dropout=0.1):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(embedding_dim, num_attention_heads, dropout=attention_dropout)
        self.self_attn_layer_norm = nn.LayerNorm(embedding_dim)
        self.fc1 = nn.Linear(embedding_dim, ffn_embedding_dim)
        self.fc2 = nn.Linear(ffn_embedding_dim, embedding_dim)
        self.final_layer_norm = nn.LayerNorm(embedding_dim)
        self.dropout = nn.Dropout(dropout)
        self.activation_dropout = nn.Dropout(activation_dropout)

    def forward(self, x, self_attn_padding_mask=None):
        residual = x
        x, attn = self.self_attn(x, x, x, key_padding_mask=self_attn_padding_mask, need_weights=False)
        x = self.self_attn_layer_norm(residual + self.dropout(x))
        residual = x
        x = self.fc2(self.activation_dropout(torch.relu(self.fc1(x))))
        x = self.final_layer_norm(residual + self.dropout(x))
        return x, attn


class TransformerSentenceEncoder(nn.Module):
    def __init__(self, padding_idx: int, vocab_size: int, num_encoder_layers: int = 6, embedding_dim: int = 768,
                 ffn_embedding_dim: int = 3072, num_attention_heads: int = 8, dropout: float = 0.1,
                 attention_dropout: float = 0.1, activation_dropout: float = 0.1, max_seq_len: int = 256,
                 num_segments: int = 2, use_position_embeddings: bool = True,
                 offset_positions_by_padding: bool = True, encoder_normalize_before: bool = False,
                 embed_scale: float = None, traceable: bool = False) -> None:
        super().__init__()
        self.padding_idx = padding_idx
        self.vocab_size = vocab_size
        self.dropout_module = nn.Dropout(dropout)
        self.max_seq_len = max_seq_len
        self.embedding_dim = embedding_dim
        self.num_segments = num_segments
        self.use_position_embeddings = use_position_embeddings
        self.traceable = traceable
        self.tpu = False  # whether we're on TPU

        self.embed_tokens = nn.Embedding(self.vocab_size, self.embedding_dim, self.padding_idx)
        self.embed_scale = embed_scale
        self.quant_noise = None
        self.segment_embeddings = (
            nn.Embedding(self.num_segments, self.embedding_dim, padding_idx=None) if self.num_segments > 0 else None)
        self.embed_positions = (
            PositionalEmbedding(self.max_seq_len, self.embedding_dim,
                                padding_idx=(self.padding_idx if offset_positions_by_padding else None))
            if self.use_position_embeddings else None)
        self.layers = nn.ModuleList([
            TransformerSentenceEncoderLayer(embedding_dim, ffn_embedding_dim, num_attention_heads, dropout,
                                            attention_dropout, activation_dropout)
            for _ in range(num_encoder_layers)])
        self.emb_layer_norm = nn.LayerNorm(self.embedding_dim) if encoder_normalize_before else None

    def forward(self, tokens: torch.Tensor, segment_labels: torch.Tensor = None, last_state_only: bool = False,
                positions: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
        # compute padding mask. This is needed for multi-head attention
        padding_mask = tokens.eq(self.padding_idx)
        if not self.traceable and not self.tpu and not padding_mask.any():
            padding_mask = None

        x = self.embed_tokens(tokens)

        if self.embed_scale is not None:
            x = x * self.embed_scale

        if self.embed_positions is not None:
            x = x + self.embed_positions(tokens, positions=positions)

        if self.segment_embeddings is not None and segment_labels is not None:
            x = x + self.segment_embeddings(segment_labels)

        if self.quant_noise is not None:
            x = self.quant_noise(x)

        if self.emb_layer_norm is not None:
            x = self.emb_layer_norm(x)

        x = self.dropout_module(x)

        # account for padding while computing the representation
        if padding_mask is not None:
            x = x * (1 - padding_mask.unsqueeze(-1).type_as(x))

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)

        inner_states = []
        if not last_state_only:
            inner_states.append(x)

        for layer in self.layers:
            x, _ = layer(x, self_attn_padding_mask=padding_mask)
            if not last_state_only:
                inner_states.append(x)

        sentence_rep = x[0, :, :]

        if last_state_only:
            inner_states = [x]

        if self.traceable:
            return torch.stack(inner_states), sentence_rep
        else:
            return inner_states, sentence_rep
