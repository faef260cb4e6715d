# fairseq/modules/transformer_sentence_encoder.py after commit f2d5864b "Remove in-place operations in
# TransformerSentenceEncoder for captum insights": the four updates of the token embeddings written out of place.
# Stand-ins: PositionalEmbedding is a LearnedPositionalEmbedding written out (nn.Embedding with fairseq's
# make_positions); FairseqDropout with p=0 is nn.Dropout(0.0); each TransformerSentenceEncoderLayer is a residual
# feed-forward block (Linear-ReLU-Linear and LayerNorm; no self-attention); no layerdrop, quant noise, BERT init or
# frozen layers; the tpu / traceable flags are kept.
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


class TransformerSentenceEncoderLayer(nn.Module):
    def __init__(self, embedding_dim, ffn_embedding_dim):
        super().__init__()
        self.fc1 = nn.Linear(embedding_dim, ffn_embedding_dim)
        self.fc2 = nn.Linear(ffn_embedding_dim, embedding_dim)
        self.final_layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, self_attn_padding_mask=None):
        residual = x
        x = self.fc2(torch.relu(self.fc1(x)))
        x = self.final_layer_norm(residual + x)
        return x, None


class TransformerSentenceEncoder(nn.Module):
    def __init__(
        self,
        padding_idx: int,
        vocab_size: int,
        num_encoder_layers: int = 2,
        embedding_dim: int = 8,
        ffn_embedding_dim: int = 16,
        max_seq_len: int = 16,
        num_segments: int = 2,
        use_position_embeddings: bool = True,
        encoder_normalize_before: bool = True,
        embed_scale: float = None,
        traceable: bool = False,
    ) -> None:
        super().__init__()
        self.padding_idx = padding_idx
        self.vocab_size = vocab_size
        self.dropout_module = nn.Dropout(0.0)
        self.max_seq_len = max_seq_len
        self.embedding_dim = embedding_dim
        self.num_segments = num_segments
        self.use_position_embeddings = use_position_embeddings
        self.traceable = traceable
        self.tpu = False  # whether we're on TPU

        self.embed_tokens = self.build_embedding(
            self.vocab_size, self.embedding_dim, self.padding_idx
        )
        self.embed_scale = embed_scale
        self.quant_noise = None

        self.segment_embeddings = (
            nn.Embedding(self.num_segments, self.embedding_dim, padding_idx=None)
            if self.num_segments > 0
            else None
        )

        self.embed_positions = (
            LearnedPositionalEmbedding(
                self.max_seq_len + self.padding_idx + 1,
                self.embedding_dim,
                padding_idx=self.padding_idx,
            )
            if self.use_position_embeddings
            else None
        )

        self.layers = nn.ModuleList([
            TransformerSentenceEncoderLayer(embedding_dim, ffn_embedding_dim)
            for _ in range(num_encoder_layers)
        ])

        if encoder_normalize_before:
            self.emb_layer_norm = nn.LayerNorm(self.embedding_dim)
        else:
            self.emb_layer_norm = None

    def build_embedding(self, vocab_size, embedding_dim, padding_idx):
        return nn.Embedding(vocab_size, embedding_dim, padding_idx)

    def forward(
        self,
        tokens: torch.Tensor,
        segment_labels: torch.Tensor = None,
        last_state_only: bool = False,
        positions: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, torch.Tensor]:

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
