# Library module for case 3003 (reference: the fix of commit 8fd2147 / PR #88, the values divided out of place inside the
# matmul).
# ai-forever/ru-dalle (ruDALL-E, text-to-image transformer), rudalle/dalle/transformer.py (DalleSelfAttention) and
# rudalle/dalle/utils.py (divide, split_tensor_along_last_dim), read at the parent of commit 8fd2147 (PR #88, "fix
# inplace modification of value_layer during forward wti custom_relax flag", 2021-12-15). Written anew at small size
# (not copied): the fused query/key/value projection split with torch.split into three views, the per-head
# view + permute, the CogView "PB-relax" attention scores with the `custom_relax` tweak added the day before (PR #87,
# "Tweaks for stable training of larger models in fp16"), the key/value cache, and the `custom_relax` rescaling of
# the values with `value_layer /= scale` (the statement at fault: value_layer is a permuted view of one of the
# outputs of split) and of the context with `context_layer /= scale` (a view of a fresh contiguous copy, left as is by
# the fix), follow the source.
# Stand-ins: none inside the attention; the transformer layer around it (layer norms, MLP, the image-attention masks
# of DalleTransformer) is not part of this module.
import math

import torch


def ensure_divisibility(numerator, denominator):
    assert numerator % denominator == 0, '{} is not divisible by {}'.format(numerator, denominator)


def divide(numerator, denominator):
    ensure_divisibility(numerator, denominator)
    return numerator // denominator


def split_tensor_along_last_dim(tensor, num_partitions, contiguous_split_chunks=False):
    last_dim = tensor.dim() - 1
    last_dim_size = divide(tensor.size()[last_dim], num_partitions)
    tensor_list = torch.split(tensor, last_dim_size, dim=last_dim)
    # torch.split does not create contiguous tensors by default
    if contiguous_split_chunks:
        return tuple(chunk.contiguous() for chunk in tensor_list)
    return tensor_list


class DalleSelfAttention(torch.nn.Module):
    def __init__(self, hidden_size, num_attention_heads, attention_dropout_prob, output_dropout_prob,
                 cogview_pb_relax=False, custom_relax=False):
        super().__init__()
        # CogView stabilization of training features (PB-relax)
        self.cogview_pb_relax = cogview_pb_relax
        # additional stabilization tweak for large models
        self.custom_relax = custom_relax

        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.hidden_size_per_attention_head = divide(hidden_size, num_attention_heads)

        self.query_key_value = torch.nn.Linear(hidden_size, 3 * hidden_size)
        self.attention_dropout = torch.nn.Dropout(attention_dropout_prob)
        self.dense = torch.nn.Linear(hidden_size, hidden_size)
        self.output_dropout = torch.nn.Dropout(output_dropout_prob)

        self.past_key = None
        self.past_value = None
        self.past_output = None

    def _transpose_for_scores(self, tensor):
        """Transpose a 3D tensor [b, s, np*hn] into a 4D tensor with size [b, np, s, hn]."""
        new_tensor_shape = tensor.size()[:-1] + (self.num_attention_heads, self.hidden_size_per_attention_head)
        tensor = tensor.view(*new_tensor_shape)
        return tensor.permute(0, 2, 1, 3)

    def _calculate_attention_scores(self, query_layer, key_layer, ltor_mask):
        key_t = key_layer.transpose(-1, -2)
        mask_value = 10000.0
        if self.cogview_pb_relax:
            if self.custom_relax:
                sigma = key_t.std()
                attention_scores = torch.matmul(
                    query_layer / math.sqrt(self.hidden_size_per_attention_head), key_t / sigma)
                attention_scores_maxes = attention_scores.detach().max(dim=-1)[0]
                attention_scores_mins = (attention_scores.detach() + 65504).min(dim=-1)[0]
                shift = torch.min(attention_scores_maxes, attention_scores_mins)
                shift = shift.unsqueeze(-1).expand_as(attention_scores) / 2
                attention_scores = (attention_scores - shift) * sigma
                mask_value = 65504.0
            else:
                attention_scores = torch.matmul(
                    query_layer / math.sqrt(self.hidden_size_per_attention_head), key_t)
        else:
            attention_scores = torch.matmul(query_layer, key_t) / math.sqrt(self.hidden_size_per_attention_head)
        ltor_mask = ltor_mask[:, :, -attention_scores.shape[-2]:]
        attention_scores = torch.mul(attention_scores, ltor_mask) - mask_value * (1.0 - ltor_mask)
        if self.cogview_pb_relax and not self.custom_relax:
            alpha = 32
            attention_scores_scaled = attention_scores / alpha
            attention_scores_scaled_maxes, _ = attention_scores_scaled.detach().view(
                [attention_scores.size(0), attention_scores.size(1), -1]).max(dim=-1)
            attention_scores_scaled_maxes = attention_scores_scaled_maxes.unsqueeze(-1).unsqueeze(-1).expand(
                [-1, -1, attention_scores.size(2), attention_scores.size(3)])
            attention_scores = (attention_scores_scaled - attention_scores_scaled_maxes) * alpha
        return attention_scores

    def forward(self, hidden_states, ltor_mask, has_cache=False, use_cache=False):
        # hidden_states: [b, s, h]; ltor_mask: [1, 1, s, s]
        if has_cache and use_cache:
            mixed_x_layer = self.query_key_value(hidden_states[:, self.past_key.shape[-2]:, :])
        else:
            mixed_x_layer = self.query_key_value(hidden_states)

        (mixed_query_layer, mixed_key_layer, mixed_value_layer) = split_tensor_along_last_dim(mixed_x_layer, 3)

        query_layer = self._transpose_for_scores(mixed_query_layer)
        key_layer = self._transpose_for_scores(mixed_key_layer)
        value_layer = self._transpose_for_scores(mixed_value_layer)

        if use_cache and has_cache:
            key_layer = torch.cat((self.past_key, key_layer), dim=-2)
            value_layer = torch.cat((self.past_value, value_layer), dim=-2)
        attention_scores = self._calculate_attention_scores(
            query_layer=query_layer, key_layer=key_layer, ltor_mask=ltor_mask)

        if use_cache and has_cache:
            extra_cache_size = hidden_states.shape[-2] - self.past_key.shape[-2]
            attention_scores = attention_scores[..., -extra_cache_size:, :]

        if use_cache:
            self.past_key = key_layer
            self.past_value = value_layer
        else:
            self.past_key = None
            self.past_value = None
            self.past_output = None
            has_cache = False

        # attention probabilities [b, np, s, s]
        attention_probs = torch.nn.Softmax(dim=-1)(attention_scores)
        attention_probs = self.attention_dropout(attention_probs)

        if self.custom_relax:
            scale = value_layer.detach().max().item()
            context_layer = torch.matmul(attention_probs, value_layer / scale)
        else:
            # context layer [b, np, s, hn]
            context_layer = torch.matmul(attention_probs, value_layer)

        # [b, s, np, hn]
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.hidden_size,)
        # [b, s, hp]
        context_layer = context_layer.view(*new_context_layer_shape)

        if self.custom_relax:
            scale = context_layer.detach().max().item()
            context_layer /= scale

        # output [b, s, h]
        output = self.dense(context_layer)
        if use_cache:
            if has_cache:
                output = torch.cat((self.past_output, output), dim=-2)
                self.past_output = output
            else:
                self.past_output = output
            has_cache = True
        output = self.output_dropout(output)
        return output, has_cache
