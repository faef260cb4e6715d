# Library module for case 2503: a small re-implementation of torchscale's transformer components
# (torchscale/component/multihead_attention.py, feedforward_network.py and the encoder layer of
# torchscale/architecture/encoder.py) as they stood at the parent of commit 0cb9695 (January 2023), written anew.
# What is kept from the source: every dropout is built as `torch.nn.Dropout(p, inplace=True)`; the attention
# computes `F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(attn_weights)` and feeds that straight to
# the in-place dropout (for float32 weights `type_as` returns the softmax output itself).
# Stand-ins: MultiwayWrapper, xPos, incremental state, relative positions and sub-LN are left out (the defaults the
# program uses switch them off); LayerNorm is torch.nn.LayerNorm; the activation is GELU; drop path is off.
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiheadAttention(nn.Module):
    def __init__(self, args, embed_dim, num_heads, dropout=0.0, self_attention=False,
                 encoder_decoder_attention=False):
        super().__init__()
        self.args = args
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim ** -0.5
        self.self_attention = self_attention
        self.encoder_decoder_attention = encoder_decoder_attention
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=True)
        self.dropout_module = torch.nn.Dropout(dropout, inplace=True)

    def forward(self, query, key, value, key_padding_mask=None, attn_mask=None):
        bsz, tgt_len, embed_dim = query.size()
        src_len = key.size(1)
        q = self.q_proj(query)
        k = self.k_proj(key)
        v = self.v_proj(value)
        q *= self.scaling

        def heads(t, n):
            return t.view(bsz, n, self.num_heads, self.head_dim).transpose(1, 2).reshape(
                bsz * self.num_heads, n, self.head_dim)

        q, k, v = heads(q, tgt_len), heads(k, src_len), heads(v, src_len)
        attn_weights = torch.bmm(q, k.transpose(1, 2))
        if attn_mask is not None:
            attn_weights = torch.nan_to_num(attn_weights)
            attn_weights += attn_mask.unsqueeze(0)
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(
                key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)

        attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(attn_weights)
        attn_probs = self.dropout_module(attn_weights)

        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).reshape(tgt_len, bsz, embed_dim).transpose(0, 1)
        attn = self.out_proj(attn)
        attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len).transpose(1, 0)
        return attn, attn_weights


class FeedForwardNetwork(nn.Module):
    def __init__(self, embed_dim, ffn_dim, dropout, activation_dropout):
        super().__init__()
        self.embed_dim = embed_dim
        self.activation_fn = F.gelu
        self.activation_dropout_module = torch.nn.Dropout(activation_dropout, inplace=True)
        self.dropout_module = torch.nn.Dropout(dropout, inplace=True)
        self.fc1 = nn.Linear(embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, embed_dim)

    def forward(self, x):
        x_shape = x.shape
        x = x.reshape(-1, x.size(-1))
        x = self.fc1(x)
        x = self.activation_fn(x.float()).type_as(x)
        x = self.activation_dropout_module(x)
        x = self.fc2(x)
        x = x.view(x_shape)
        x = self.dropout_module(x)
        return x


class EncoderLayer(nn.Module):
    """Pre-LayerNorm encoder layer (encoder_normalize_before=True, the torchscale default)."""

    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embed_dim = args.encoder_embed_dim
        self.self_attn = MultiheadAttention(args, self.embed_dim, args.encoder_attention_heads,
                                            dropout=args.attention_dropout, self_attention=True)
        self.self_attn_layer_norm = nn.LayerNorm(self.embed_dim, eps=args.layernorm_eps)
        self.dropout_module = torch.nn.Dropout(args.dropout, inplace=True)
        self.ffn = FeedForwardNetwork(self.embed_dim, args.encoder_ffn_embed_dim, args.dropout,
                                      args.activation_dropout)
        self.final_layer_norm = nn.LayerNorm(self.embed_dim, eps=args.layernorm_eps)

    def forward(self, x, encoder_padding_mask=None):
        residual = x
        x = self.self_attn_layer_norm(x)
        x, _ = self.self_attn(query=x, key=x, value=x, key_padding_mask=encoder_padding_mask)
        x = self.dropout_module(x)
        x = residual + x
        residual = x
        x = self.final_layer_norm(x)
        x = self.ffn(x)
        x = residual + x
        return x
