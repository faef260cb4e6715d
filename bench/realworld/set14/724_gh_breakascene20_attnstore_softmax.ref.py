# reference fix for 724: the controller writes into a clone of the attention probabilities (PR #20), via 724helpers_ptp_utils_fixed
# break-a-scene PR #20 "Fix bug for peft compatibility": training break-a-scene with peft (LoRA/BOFT) fails with
# "one of the variables needed for gradient computation has been modified by an inplace operation:
# [torch.cuda.FloatTensor [10, 4096, 77]], which is output 0 of SoftmaxBackward0". The P2PCrossAttnProcessor
# passes the softmax output `attention_probs` to the prompt-to-prompt controller, whose
# AttentionControl.__call__ (ptp_utils.py) writes `attn[h // 2 :] = self.forward(attn[h // 2 :], ...)` into it.
# (In the original fp16 setup get_attention_scores' `.to(dtype)` made a copy after the fp32 softmax, which hid
# the problem; with one dtype throughout the write hits the softmax output itself.)
# Fix (PR, commit 837853b): `attn_ = attn.clone()`, write into `attn_` and return it.
# The culprit lives in 724helpers_ptp_utils.py (ref: 724helpers_ptp_utils_fixed.py).
# Stand-ins: diffusers' CrossAttention reduced to the methods the processor calls (to_q/k/v, to_out, head/batch
# reshapes, prepare_attention_mask, get_attention_scores as in diffusers 0.12); the UNet is one self-attention and
# one cross-attention layer in a "down" block; the text embeddings are a trainable tensor; the loss is a
# denoising MSE plus break-a-scene's cross-attention mask loss on the stored maps; fp32 on CPU.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ptp_utils = importlib.import_module("724helpers_ptp_utils_fixed")
AttentionStore = ptp_utils.AttentionStore


class CrossAttention(nn.Module):
    # stand-in: diffusers.models.cross_attention.CrossAttention (methods used by the processor)
    def __init__(self, query_dim, cross_attention_dim=None, heads=2, dim_head=4):
        super().__init__()
        inner_dim = dim_head * heads
        cross_attention_dim = cross_attention_dim if cross_attention_dim is not None else query_dim
        self.scale = dim_head**-0.5
        self.heads = heads
        self.upcast_attention = False
        self.upcast_softmax = False
        self.to_q = nn.Linear(query_dim, inner_dim, bias=False)
        self.to_k = nn.Linear(cross_attention_dim, inner_dim, bias=False)
        self.to_v = nn.Linear(cross_attention_dim, inner_dim, bias=False)
        self.to_out = nn.ModuleList([nn.Linear(inner_dim, query_dim), nn.Dropout(0.0)])
        self.processor = None

    def batch_to_head_dim(self, tensor):
        head_size = self.heads
        batch_size, seq_len, dim = tensor.shape
        tensor = tensor.reshape(batch_size // head_size, head_size, seq_len, dim)
        tensor = tensor.permute(0, 2, 1, 3).reshape(batch_size // head_size, seq_len, dim * head_size)
        return tensor

    def head_to_batch_dim(self, tensor):
        head_size = self.heads
        batch_size, seq_len, dim = tensor.shape
        tensor = tensor.reshape(batch_size, seq_len, head_size, dim // head_size)
        tensor = tensor.permute(0, 2, 1, 3).reshape(batch_size * head_size, seq_len, dim // head_size)
        return tensor

    def get_attention_scores(self, query, key, attention_mask=None):
        dtype = query.dtype
        if self.upcast_attention:
            query = query.float()
            key = key.float()
        if attention_mask is None:
            baddbmm_input = torch.empty(
                query.shape[0], query.shape[1], key.shape[1], dtype=query.dtype, device=query.device
            )
            beta = 0
        else:
            baddbmm_input = attention_mask
            beta = 1
        attention_scores = torch.baddbmm(
            baddbmm_input, query, key.transpose(-1, -2), beta=beta, alpha=self.scale
        )
        if self.upcast_softmax:
            attention_scores = attention_scores.float()
        attention_probs = attention_scores.softmax(dim=-1)
        attention_probs = attention_probs.to(dtype)
        return attention_probs

    def prepare_attention_mask(self, attention_mask, target_length):
        return attention_mask

    def forward(self, hidden_states, encoder_hidden_states=None, attention_mask=None):
        return self.processor(self, hidden_states, encoder_hidden_states=encoder_hidden_states,
                              attention_mask=attention_mask)


class P2PCrossAttnProcessor:
    def __init__(self, controller, place_in_unet):
        super().__init__()
        self.controller = controller
        self.place_in_unet = place_in_unet

    def __call__(
        self,
        attn: CrossAttention,
        hidden_states,
        encoder_hidden_states=None,
        attention_mask=None,
    ):
        batch_size, sequence_length, _ = hidden_states.shape
        attention_mask = attn.prepare_attention_mask(attention_mask, sequence_length)

        query = attn.to_q(hidden_states)

        is_cross = encoder_hidden_states is not None
        encoder_hidden_states = (
            encoder_hidden_states
            if encoder_hidden_states is not None
            else hidden_states
        )
        key = attn.to_k(encoder_hidden_states)
        value = attn.to_v(encoder_hidden_states)

        query = attn.head_to_batch_dim(query)
        key = attn.head_to_batch_dim(key)
        value = attn.head_to_batch_dim(value)

        attention_probs = attn.get_attention_scores(query, key, attention_mask)

        # one line change
        self.controller(attention_probs, is_cross, self.place_in_unet)

        hidden_states = torch.bmm(attention_probs, value)
        hidden_states = attn.batch_to_head_dim(hidden_states)

        # linear proj
        hidden_states = attn.to_out[0](hidden_states)
        # dropout
        hidden_states = attn.to_out[1](hidden_states)

        return hidden_states


class TinyUNetBlock(nn.Module):
    # stand-in for a down block's transformer: attn1 (self) + attn2 (cross)
    def __init__(self, dim, text_dim):
        super().__init__()
        self.attn1 = CrossAttention(dim)
        self.attn2 = CrossAttention(dim, cross_attention_dim=text_dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, encoder_hidden_states):
        x = x + self.attn1(x)
        x = x + self.attn2(x, encoder_hidden_states=encoder_hidden_states)
        return self.proj(x)


def compute():
    torch.manual_seed(0)
    dim, text_dim, n_tokens, n_pix = 8, 6, 5, 16
    unet = TinyUNetBlock(dim, text_dim)
    controller = AttentionStore()
    # register_attention_control
    unet.attn1.processor = P2PCrossAttnProcessor(controller=controller, place_in_unet="down")
    unet.attn2.processor = P2PCrossAttnProcessor(controller=controller, place_in_unet="down")
    controller.num_att_layers = 2

    token_embeds = nn.Parameter(torch.randn(2, n_tokens, text_dim))  # stand-in: trained text embeddings
    latents = torch.randn(2, n_pix, dim)
    noise = torch.randn(2, n_pix, dim)
    gt_mask = (torch.rand(2, n_pix) > 0.5).float()  # stand-in instance mask, flattened 4x4

    model_pred = unet(latents + noise, token_embeds)
    loss = F.mse_loss(model_pred, noise)
    # break-a-scene attention loss: cross-attention map of the asset token vs its mask
    attn_map = controller.attention_store["down_cross"][0]          # [heads*batch/2, n_pix, n_tokens]
    asset_attn = attn_map[..., 1].reshape(2, -1, n_pix).mean(1)      # per-sample map of token 1
    asset_attn = asset_attn / asset_attn.max(dim=1, keepdim=True).values
    loss = loss + 0.01 * F.mse_loss(asset_attn, gt_mask[:, :])
    loss.backward()
    return {
        "loss": loss.detach(),
        "grad_token_embeds": token_embeds.grad.detach().clone(),
        "grad_attn2_to_k": unet.attn2.to_k.weight.grad.detach().clone(),
        "grad_attn1_to_q": unet.attn1.to_q.weight.grad.detach().clone(),
    }
