# helper for case 909 (reference, PR #43418 applied: `inputs_embeds = inputs_embeds.clone()` before the write):
# src/transformers/models/kosmos2_5/modeling_kosmos2_5.py reduced: the text transformer's forward (image embeddings
# written into a clone of inputs_embeds at the image_embeds_position_mask == 1 rows, then embed_scale and the
# sinusoidal positions), one decoder layer run through the gradient-checkpointing function, the image-to-text projection (dense + latent-query attention) and the LM head.
# The vision encoder is a patch projection; caching, attention masks other than causal and generation are dropped.
import math
from functools import partial

import torch
import torch.utils.checkpoint
from torch import nn


class Kosmos2_5TextSinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, num_positions, embedding_dim, padding_idx=None):
        super().__init__()
        self.offset = 2
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.register_buffer("weights", self.get_embedding(num_positions + self.offset, embedding_dim, padding_idx),
                             persistent=False)

    @staticmethod
    def get_embedding(num_embeddings, embedding_dim, padding_idx=None):
        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.int64).float() * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.int64).float().unsqueeze(1) * emb.unsqueeze(0)
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
        if padding_idx is not None:
            emb[padding_idx, :] = 0
        return emb

    def forward(self, input_ids=None, inputs_embeds=None, past_key_values_length=0, position_ids=None):
        bsz, seq_len = input_ids.size()
        if position_ids is None:
            mask = input_ids.ne(self.padding_idx).int()
            position_ids = (torch.cumsum(mask, dim=1).type_as(mask) + past_key_values_length) * mask
            position_ids = position_ids.long() + self.padding_idx
        return self.weights.index_select(0, position_ids.view(-1)).view(bsz, seq_len, self.weights.shape[-1])


class Kosmos2_5TextAttention(nn.Module):
    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scaling = self.head_dim**-0.5
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, hidden_states):
        bsz, tgt_len, embed_dim = hidden_states.size()
        shape = (bsz, tgt_len, self.num_heads, self.head_dim)
        q = self.q_proj(hidden_states).view(shape).transpose(1, 2)
        k = self.k_proj(hidden_states).view(shape).transpose(1, 2)
        v = self.v_proj(hidden_states).view(shape).transpose(1, 2)
        attn_weights = torch.matmul(q, k.transpose(2, 3)) * self.scaling
        causal = torch.ones(tgt_len, tgt_len, dtype=torch.bool).tril()
        attn_weights = attn_weights.masked_fill(~causal, torch.finfo(attn_weights.dtype).min)
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_output = torch.matmul(attn_weights, v).transpose(1, 2).reshape(bsz, tgt_len, embed_dim)
        return self.out_proj(attn_output)


class Kosmos2_5TextBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = Kosmos2_5TextAttention(config.embed_dim, config.attention_heads)
        self.self_attn_layer_norm = nn.LayerNorm(config.embed_dim)
        self.fc1 = nn.Linear(config.embed_dim, config.ffn_dim)
        self.fc2 = nn.Linear(config.ffn_dim, config.embed_dim)
        self.final_layer_norm = nn.LayerNorm(config.embed_dim)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.self_attn(self.self_attn_layer_norm(hidden_states))
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.fc2(nn.functional.gelu(self.fc1(self.final_layer_norm(hidden_states))))
        return residual + hidden_states


class Kosmos2_5TextTransformer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_scale = math.sqrt(config.embed_dim) if config.scale_embedding else 1.0
        self.embed_tokens = nn.Embedding(config.vocab_size, config.embed_dim, padding_idx=config.pad_token_id)
        self.embed_positions = Kosmos2_5TextSinusoidalPositionalEmbedding(
            num_positions=config.max_position_embeddings, embedding_dim=config.embed_dim,
            padding_idx=config.pad_token_id)
        self.layers = nn.ModuleList([Kosmos2_5TextBlock(config) for _ in range(config.layers)])
        self.layer_norm = nn.LayerNorm(config.embed_dim)
        self.gradient_checkpointing = False

    def forward(self, input_ids=None, image_embeds=None, image_embeds_position_mask=None, inputs_embeds=None,
                position_ids=None):
        # The argument `inputs_embeds` should be the one without being multiplied by `self.embed_scale`.
        if inputs_embeds is None:
            inputs_embeds = self.embed_tokens(input_ids)

        if image_embeds is not None:
            inputs_embeds = inputs_embeds.clone()
            inputs_embeds[image_embeds_position_mask == 1] = image_embeds.to(inputs_embeds.device).view(
                -1, image_embeds.shape[-1]
            )

        inputs_embeds = inputs_embeds * self.embed_scale

        # embed positions
        positions = self.embed_positions(
            input_ids=input_ids,
            inputs_embeds=inputs_embeds,
            past_key_values_length=0,
            position_ids=position_ids,
        )
        positions = positions.to(inputs_embeds.device)

        hidden_states = inputs_embeds + positions
        for decoder_layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = self._gradient_checkpointing_func(decoder_layer.__call__, hidden_states)
            else:
                hidden_states = decoder_layer(hidden_states)
        return self.layer_norm(hidden_states)


class Kosmos2_5ImageToTextProjection(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.dense = nn.Linear(config.vision_hidden_size, config.embed_dim)
        self.latent_query = nn.Parameter(torch.randn(config.latent_query_num, config.embed_dim))
        self.k_proj = nn.Linear(config.embed_dim, config.embed_dim)
        self.v_proj = nn.Linear(config.embed_dim, config.embed_dim)

    def forward(self, features):
        hidden_states = self.dense(features)
        latent_query = self.latent_query.unsqueeze(0).expand(hidden_states.size(0), -1, -1)
        key_value_states = torch.cat([hidden_states, latent_query], dim=1)
        k = self.k_proj(key_value_states)
        v = self.v_proj(key_value_states)
        attn = torch.softmax(latent_query @ k.transpose(1, 2) / math.sqrt(k.size(-1)), dim=-1)
        return attn @ v


class Kosmos2_5ForConditionalGeneration(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.vision_model = nn.Linear(config.patch_dim, config.vision_hidden_size)
        self.text_model = Kosmos2_5TextTransformer(config)
        self.image_to_text_projection = Kosmos2_5ImageToTextProjection(config)
        self.lm_head = nn.Linear(config.embed_dim, config.vocab_size, bias=False)

    def get_input_embeddings(self):
        return self.text_model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        if gradient_checkpointing_kwargs is None:
            gradient_checkpointing_kwargs = {"use_reentrant": True}
        self.text_model._gradient_checkpointing_func = partial(torch.utils.checkpoint.checkpoint,
                                                               **gradient_checkpointing_kwargs)
        self.text_model.gradient_checkpointing = True

    @property
    def is_gradient_checkpointing(self):
        return self.text_model.gradient_checkpointing

    def forward(self, input_ids, flattened_patches, image_embeds_position_mask, labels=None):
        vision_model_output = torch.tanh(self.vision_model(flattened_patches))
        image_embeds = nn.functional.normalize(vision_model_output, dim=-1)
        image_embeds = self.image_to_text_projection(image_embeds)
        hidden_states = self.text_model(input_ids=input_ids, image_embeds=image_embeds,
                                        image_embeds_position_mask=image_embeds_position_mask)
        logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = nn.functional.cross_entropy(shift_logits.view(-1, self.config.vocab_size), shift_labels.view(-1),
                                               ignore_index=-100)
        return loss, logits
