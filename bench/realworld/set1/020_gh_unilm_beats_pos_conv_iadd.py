# source: https://github.com/microsoft/unilm/pull/999 (BEATs backbone.py; same code in fairseq wav2vec2 / ESPnet patch)
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# TransformerEncoder.extract_features: pos_conv (a Conv1d) saves x.transpose(1, 2) -- a view of x -- and then
# `x += x_conv` bumps the shared version counter. (`x[padding_mask] = 0` above it is harmless.)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SamePad(nn.Module):
    def __init__(self, kernel_size, causal=False):
        super().__init__()
        if causal:
            self.remove = kernel_size - 1
        else:
            self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class TransformerSentenceEncoderLayer(nn.Module):
    def __init__(self, embedding_dim, ffn_embedding_dim, num_attention_heads):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(embedding_dim, num_attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(embedding_dim)
        self.fc1 = nn.Linear(embedding_dim, ffn_embedding_dim)
        self.fc2 = nn.Linear(ffn_embedding_dim, embedding_dim)
        self.final_layer_norm = nn.LayerNorm(embedding_dim)

    def forward(self, x, self_attn_padding_mask=None, need_weights=False):
        residual = x
        x, attn = self.self_attn(x, x, x, key_padding_mask=self_attn_padding_mask, need_weights=need_weights)
        x = residual + x
        x = self.self_attn_layer_norm(x)
        residual = x
        x = self.fc2(F.gelu(self.fc1(x)))
        x = residual + x
        x = self.final_layer_norm(x)
        return x, attn


class TransformerEncoder(nn.Module):
    def __init__(self, embed_dim=16, conv_pos=4, conv_pos_groups=4, layers=1, layer_norm_first=False):
        super().__init__()
        self.dropout = 0.0
        self.embedding_dim = embed_dim

        self.pos_conv = nn.Conv1d(
            self.embedding_dim,
            self.embedding_dim,
            kernel_size=conv_pos,
            padding=conv_pos // 2,
            groups=conv_pos_groups,
        )
        dropout = 0
        std = math.sqrt((4 * (1.0 - dropout)) / (conv_pos * self.embedding_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)

        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())

        self.layers = nn.ModuleList([TransformerSentenceEncoderLayer(self.embedding_dim, 32, 2)
                                     for _ in range(layers)])
        self.layer_norm_first = layer_norm_first
        self.layer_norm = nn.LayerNorm(self.embedding_dim)

    def forward(self, x, padding_mask=None, layer=None):
        x, layer_results = self.extract_features(x, padding_mask, layer)

        if self.layer_norm_first and layer is None:
            x = self.layer_norm(x)

        return x, layer_results

    def extract_features(self, x, padding_mask=None, tgt_layer=None):

        if padding_mask is not None:
            x[padding_mask] = 0

        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x += x_conv

        if not self.layer_norm_first:
            x = self.layer_norm(x)

        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)

        layer_results = []
        for i, layer in enumerate(self.layers):
            x, z = layer(x, self_attn_padding_mask=padding_mask, need_weights=False)
            layer_results.append((x, z))

        # T x B x C -> B x T x C
        x = x.transpose(0, 1)

        return x, layer_results


def compute():
    torch.manual_seed(0)
    post_extract_proj = nn.Linear(12, 16)
    encoder = TransformerEncoder()
    features = torch.randn(2, 9, 12)
    padding_mask = torch.zeros(2, 9, dtype=torch.bool)
    padding_mask[1, 7:] = True
    x = post_extract_proj(features)
    x, _ = encoder(x, padding_mask=padding_mask)
    x.pow(2).mean().backward()
    grads = {"post_extract_proj." + n: p.grad for n, p in post_extract_proj.named_parameters()}
    grads.update({"encoder." + n: p.grad for n, p in encoder.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
