# Library module for case 2702 (reference: commit 218e87c applied, both transposes out of place).
# allenai/allennlp-models, allennlp_models/rc/modules/seq2seq_encoders/qanet_encoder.py (QaNetEncoder,
# QaNetEncoderBlock) and multi_head_self_attention.py (MultiHeadSelfAttention), read at the parent of commit 218e87c
# ("fix qanet models", 2021-10-23). Written anew at small size (not copied): the class names, attribute names
# (_input_projection_layer, _conv_norm_layers, _conv_layers as pad -> depthwise Conv1d -> pointwise Conv1d -> ReLU,
# attention_layer._combined_projection, residual_with_layer_dropout, dropout) and the order of the block's sublayers
# follow the source, and so does the convolution statement at fault; the attention is a compact equivalent of the
# source's head split / masked softmax / weighted sum.
# Stand-ins for allennlp core (not installed): FeedForward (two linear layers, ReLU then identity, dropout after
# each), ResidualWithLayerDropout (in training, drop the sublayer with probability p * index / total, drawn with
# torch.rand(1); else output + input), add_positional_features (sinusoids, timescales 1 .. 1e4), masked_softmax
# (memory-efficient variant: fill masked scores with the dtype's minimum), check_dimensions_match; the
# Seq2SeqEncoder registry base is torch.nn.Module.
import math

import torch
from torch import nn


def add_positional_features(tensor, min_timescale=1.0, max_timescale=1.0e4):
    _, steps, dim = tensor.shape
    n = dim // 2
    inv = min_timescale * torch.exp(torch.arange(n, dtype=torch.float)
                                    * -(math.log(max_timescale / min_timescale) / (n - 1)))
    t = torch.arange(steps, dtype=torch.float)[:, None] * inv[None, :]
    sin_cos = torch.cat([torch.sin(t), torch.cos(t)], 1)
    if dim % 2:
        sin_cos = torch.cat([sin_cos, sin_cos.new_zeros(steps, 1)], 1)
    return tensor + sin_cos[None]


class ResidualWithLayerDropout(nn.Module):
    def __init__(self, undecayed_dropout_prob=0.5):
        super().__init__()
        self.undecayed_dropout_prob = undecayed_dropout_prob

    def forward(self, layer_input, layer_output, layer_index=None, total_layers=None):
        p = self.undecayed_dropout_prob * layer_index / total_layers
        if self.training:
            return layer_input if torch.rand(1) < p else layer_output + layer_input
        return layer_output * (1 - p) + layer_input


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, dropout):
        super().__init__()
        self._linear_layers = nn.ModuleList([nn.Linear(dim, hidden), nn.Linear(hidden, dim)])
        self._dropout = nn.ModuleList([nn.Dropout(dropout), nn.Dropout(dropout)])

    def forward(self, x):
        x = self._dropout[0](torch.relu(self._linear_layers[0](x)))
        return self._dropout[1](self._linear_layers[1](x))


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, num_heads, input_dim, attention_dim, values_dim, attention_dropout_prob=0.1):
        super().__init__()
        self._num_heads = num_heads
        self._attention_dim = attention_dim
        self._values_dim = values_dim
        self._combined_projection = nn.Linear(input_dim, 2 * attention_dim + values_dim)
        self._scale = (input_dim // num_heads) ** 0.5
        self._output_projection = nn.Linear(values_dim, input_dim)
        self._attention_dropout = nn.Dropout(attention_dropout_prob)

    def forward(self, inputs, mask=None):
        b, t, _ = inputs.shape
        h = self._num_heads
        if mask is None:
            mask = inputs.new_ones(b, t).bool()
        q, k, v = self._combined_projection(inputs).split(
            [self._attention_dim, self._attention_dim, self._values_dim], -1)

        def heads(x):
            return x.reshape(b, t, h, -1).transpose(1, 2).reshape(b * h, t, -1)

        scores = torch.bmm(heads(q) / self._scale, heads(k).transpose(1, 2))
        key_mask = mask.repeat(1, h).view(b * h, 1, t)
        attention = torch.softmax(scores.masked_fill(~key_mask, torch.finfo(scores.dtype).min), -1)
        out = torch.bmm(self._attention_dropout(attention), heads(v))
        out = out.view(b, h, t, -1).transpose(1, 2).reshape(b, t, self._values_dim)
        return self._output_projection(out)


class QaNetEncoderBlock(nn.Module):
    def __init__(self, input_dim, hidden_dim, attention_projection_dim, feedforward_hidden_dim, num_convs,
                 conv_kernel_size, num_attention_heads, use_positional_encoding=True, dropout_prob=0.1,
                 layer_dropout_undecayed_prob=0.1, attention_dropout_prob=0.0):
        super().__init__()
        if input_dim != hidden_dim:
            raise ValueError("input_dim must match hidden_dim")
        self._use_positional_encoding = use_positional_encoding
        self._conv_norm_layers = nn.ModuleList(nn.LayerNorm(hidden_dim) for _ in range(num_convs))
        self._conv_layers = nn.ModuleList(
            nn.Sequential(
                nn.ConstantPad1d((conv_kernel_size // 2, (conv_kernel_size - 1) // 2), 0),
                nn.Conv1d(hidden_dim, hidden_dim, conv_kernel_size, groups=hidden_dim),
                nn.Conv1d(hidden_dim, hidden_dim, 1),
                nn.ReLU(),
            )
            for _ in range(num_convs)
        )
        self.attention_norm_layer = nn.LayerNorm(hidden_dim)
        self.attention_layer = MultiHeadSelfAttention(num_attention_heads, hidden_dim, attention_projection_dim,
                                                      attention_projection_dim, attention_dropout_prob)
        self.feedforward_norm_layer = nn.LayerNorm(hidden_dim)
        self.feedforward = FeedForward(hidden_dim, feedforward_hidden_dim, dropout_prob)
        self.dropout = nn.Dropout(dropout_prob)
        self.residual_with_layer_dropout = ResidualWithLayerDropout(layer_dropout_undecayed_prob)

    def forward(self, inputs, mask=None):
        output = add_positional_features(inputs) if self._use_positional_encoding else inputs
        total_sublayers = len(self._conv_layers) + 2
        sublayer_count = 0
        for conv_norm_layer, conv_layer in zip(self._conv_norm_layers, self._conv_layers):
            conv_norm_out = self.dropout(conv_norm_layer(output))
            conv_out = self.dropout(conv_layer(conv_norm_out.transpose(1, 2)).transpose(1, 2))

            sublayer_count += 1
            output = self.residual_with_layer_dropout(output, conv_out, sublayer_count, total_sublayers)
        attention_out = self.dropout(self.attention_layer(self.dropout(self.attention_norm_layer(output)), mask))
        sublayer_count += 1
        output = self.residual_with_layer_dropout(output, attention_out, sublayer_count, total_sublayers)
        feedforward_out = self.dropout(self.feedforward(self.dropout(self.feedforward_norm_layer(output))))
        sublayer_count += 1
        return self.residual_with_layer_dropout(output, feedforward_out, sublayer_count, total_sublayers)


class QaNetEncoder(nn.Module):
    def __init__(self, input_dim, hidden_dim, attention_projection_dim, feedforward_hidden_dim, num_blocks,
                 num_convs_per_block, conv_kernel_size, num_attention_heads, use_positional_encoding=True,
                 dropout_prob=0.1, layer_dropout_undecayed_prob=0.1, attention_dropout_prob=0.0):
        super().__init__()
        self._input_projection_layer = nn.Linear(input_dim, hidden_dim) if input_dim != hidden_dim else (lambda x: x)
        self._encoder_blocks = nn.ModuleList(
            QaNetEncoderBlock(hidden_dim, hidden_dim, attention_projection_dim, feedforward_hidden_dim,
                              num_convs_per_block, conv_kernel_size, num_attention_heads, use_positional_encoding,
                              dropout_prob, layer_dropout_undecayed_prob, attention_dropout_prob)
            for _ in range(num_blocks)
        )

    def forward(self, inputs, mask=None):
        output = self._input_projection_layer(inputs)
        for block in self._encoder_blocks:
            output = block(output, mask)
        return output
