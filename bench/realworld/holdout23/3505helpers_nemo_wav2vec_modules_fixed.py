# Library module for case 3505 (reference: the fix of PR #4383 applied): NVIDIA/NeMo nemo/collections/asr/modules/wav2vec_modules.py at 5e7b56ae02^
# (SamePad and Wav2VecTransformerEncoder.__init__ / forward / apply_transformer / create_padding_mask as in the
# source), with nemo/collections/common/parts/transformer_utils.py's form_attention_mask. Stand-ins: NeMo's NLP
# TransformerEncoder base class (the `layers` the encoder runs as `layer(x, encoder_attn_mask, x)`) is a stack of
# small post-norm self-attention blocks taking the same arguments; transformer_weights_init is reduced to a xavier
# init of the Linear layers; DictConfig arguments are plain objects with the same attributes; DEVICE is the CPU.
import math
import random
from types import SimpleNamespace

import torch
from torch import nn

DEVICE = torch.device("cpu")
NEG_INF = -10000.0


def form_attention_mask(input_mask, diagonal=None):
    if input_mask is None:
        return None
    attn_shape = (1, input_mask.shape[1], input_mask.shape[1])
    attn_mask = input_mask.to(dtype=bool).unsqueeze(1)
    if diagonal is not None:
        future_mask = torch.tril(torch.ones(attn_shape, dtype=torch.bool, device=input_mask.device), diagonal)
        attn_mask = attn_mask & future_mask
    attention_mask = (1 - attn_mask.to(torch.float)) * NEG_INF
    return attention_mask.unsqueeze(1)


def transformer_weights_init(module, xavier=True):
    if isinstance(module, nn.Linear):
        nn.init.xavier_uniform_(module.weight)
        if module.bias is not None:
            nn.init.constant_(module.bias, 0.0)


class _EncoderLayer(nn.Module):
    """Stand-in for NeMo's TransformerEncoderBlock: attention over the mask, then a feed-forward, post-norm."""

    def __init__(self, hidden_size, inner_size, num_attention_heads):
        super().__init__()
        self.num_heads = num_attention_heads
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size)
        self.out = nn.Linear(hidden_size, hidden_size)
        self.norm1 = nn.LayerNorm(hidden_size)
        self.ff = nn.Sequential(nn.Linear(hidden_size, inner_size), nn.ReLU(), nn.Linear(inner_size, hidden_size))
        self.norm2 = nn.LayerNorm(hidden_size)

    def forward(self, encoder_query, encoder_mask, encoder_keys):
        b, t, h = encoder_query.shape
        q, k, v = self.qkv(encoder_query).view(b, t, 3, self.num_heads, h // self.num_heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(h // self.num_heads) + encoder_mask
        ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, h)
        x = self.norm1(encoder_query + self.out(ctx))
        return self.norm2(x + self.ff(x))


class TransformerEncoder(nn.Module):
    """Stand-in for nemo.collections.nlp.modules.common.transformer.TransformerEncoder."""

    def __init__(self, num_layers, hidden_size, inner_size, num_attention_heads=1, attn_layer_dropout=0.0, **kwargs):
        super().__init__()
        self.layers = nn.ModuleList([_EncoderLayer(hidden_size, inner_size, num_attention_heads)
                                     for _ in range(num_layers)])


class SamePad(torch.nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = kernel_size % 2 == 0

    def forward(self, x):
        if self.remove:
            x = x[:, :, :-1]
        return x


class Wav2VecTransformerEncoder(TransformerEncoder):
    def __init__(self, pos_embed: SimpleNamespace, transformer: dict, layer_drop: float = 0.0):
        super().__init__(**transformer)  # see nlp.collections

        # positional convolutional embeddings
        emb_dim = pos_embed.embedding_dim
        self.pos_conv = nn.Conv1d(
            emb_dim,
            emb_dim,
            kernel_size=pos_embed.conv_pos,
            padding=pos_embed.conv_pos // 2,  # Padding size preserves time step length
            groups=pos_embed.conv_pos_groups,
        )

        self.layer_drop = layer_drop

        self.dropout = transformer["attn_layer_dropout"]  # He initialization
        std = math.sqrt((4 * (1.0 - self.dropout)) / (pos_embed.conv_pos * pos_embed.embedding_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)

        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(pos_embed.conv_pos), nn.GELU())

        self.layer_norm = nn.LayerNorm(emb_dim)
        self.apply(lambda x: transformer_weights_init(x, xavier=False))

    def forward(self, audio_signal, length):

        # Padding mask needed for transformer
        padding_mask = self.create_padding_mask(length)

        # Applying padding before convolution
        for idx, len in enumerate(length):
            audio_signal[idx, :, len:] = 0.0

        signal_conv = self.pos_conv(audio_signal)  # B, C, T
        audio_signal = audio_signal + signal_conv

        audio_signal = audio_signal.transpose(1, 2)  # B, C, T -> B, T, C
        audio_signal = self.layer_norm(audio_signal)

        context_emb = self.apply_transformer(audio_signal, padding_mask=padding_mask)

        context_emb = context_emb.transpose(1, 2)  # B, T, C -> B, C, T

        return context_emb, length  # Returning length for NeMo compatibility

    def apply_transformer(self, x, padding_mask=None):
        encoder_attn_mask = form_attention_mask(padding_mask)
        if self.layer_drop and self.training:  # Stochastic layer drop as in: Huang et al.
            for _, layer in enumerate(self.layers):
                p = random.random()
                if p > self.layer_drop:
                    x = layer(x, encoder_attn_mask, x)
        else:
            for _, layer in enumerate(self.layers):
                x = layer(x, encoder_attn_mask, x)
        return x

    def create_padding_mask(self, length):
        # Broadcast to vectorize creating the padding mask
        max_len = max(length)
        padding_mask = torch.arange(max_len, device=DEVICE)

        # Switch to binary for transformer, 1 for valid tokens, 0 for padding
        padding_mask = (padding_mask.expand(len(length), max_len) < length.unsqueeze(1)).type(torch.uint8)

        return padding_mask
