# source: https://github.com/2U1/Qwen-VL-Series-Finetune/pull/178
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# Qwen-VL-Series-Finetune (Qwen2/2.5-VL fine-tuning scripts), src/train/monkey_patch_forward.py,
# qwen2_5_mixed_modality_forward (patched over Qwen2_5_VLForConditionalGeneration.forward): the image features are
# written into the image-token rows with `flat = inputs_embeds.view(-1, H); flat.index_copy_(0, row_idx, img)`.
# With QLoRA and gradient checkpointing, train_sft.py calls `model.enable_input_require_grads()`, whose forward hook
# on the frozen embed_tokens does `output.requires_grad_(True)`, so inputs_embeds is a leaf that requires grad and
# the index_copy_ on its view fails ("RuntimeError: a view of a leaf Variable that requires grad is being used in an
# in-place operation.", PR #178 with Qwen2.5-VL 3B, QLoRA, gradient_checkpointing). PR #178 (merged as d39eafc,
# "Resolve inplace issue"): `flat = flat.index_copy(0, row_idx, img)`.
# Stand-ins: a tiny model with the same attribute layout (model.embed_tokens, visual, lm_head, config); the vision
# tower is a frozen patch embedding plus a trainable 2x2 patch merger; the decoder is one frozen linear layer with a
# trainable LoRA-style adapter, run under torch.utils.checkpoint (use_reentrant=True) as with gradient checkpointing;
# the hook is transformers' make_inputs_require_grads; 2 samples of 8 tokens with 4 image tokens each.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.utils.checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
patch = importlib.import_module("908helpers_qwen_monkey_patch")


class Config:
    vocab_size = 16
    hidden_size = 12
    image_token_id = 9
    patch_dim = 6


class TinyVisual(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.patch_embed = nn.Linear(config.patch_dim, config.hidden_size)
        self.merger = nn.Linear(4 * config.hidden_size, config.hidden_size)

    @property
    def dtype(self):
        return self.patch_embed.weight.dtype

    def forward(self, pixel_values, grid_thw):
        h = self.patch_embed(pixel_values)
        return self.merger(h.reshape(-1, 4 * h.shape[-1]))


class LoraLinear(nn.Module):
    def __init__(self, dim, r=2):
        super().__init__()
        self.base = nn.Linear(dim, dim)
        self.lora_A = nn.Linear(dim, r, bias=False)
        self.lora_B = nn.Linear(r, dim, bias=False)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class TinyDecoder(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layer = LoraLinear(config.hidden_size)
        self.gradient_checkpointing = True

    def forward(self, inputs_embeds):
        if self.gradient_checkpointing and self.training:
            h = torch.utils.checkpoint.checkpoint(self.layer, inputs_embeds, use_reentrant=True)
        else:
            h = self.layer(inputs_embeds)
        return torch.tanh(h)


class TinyQwen2_5_VLForConditionalGeneration(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = TinyDecoder(config)
        self.visual = TinyVisual(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)


# replace_qwen2_5_with_mixed_modality_forward()
TinyQwen2_5_VLForConditionalGeneration.forward = patch.qwen2_5_mixed_modality_forward


def compute():
    torch.manual_seed(0)
    config = Config()
    model = TinyQwen2_5_VLForConditionalGeneration(config)
    # QLoRA: base weights frozen; the LoRA adapter and the vision merger train
    for n, p in model.named_parameters():
        p.requires_grad_("lora_" in n or "merger" in n)
    model.enable_input_require_grads()
    model.train()

    input_ids = torch.tensor([[1, 9, 9, 9, 9, 4, 5, 2],
                              [1, 3, 9, 9, 9, 9, 6, 2]])
    labels = input_ids.masked_fill(input_ids == config.image_token_id, -100)
    pixel_values = torch.randn(32, config.patch_dim)
    image_grid_thw = torch.tensor([[1, 4, 4], [1, 4, 4]])

    loss, _ = model(input_ids=input_ids, labels=labels, pixel_values=pixel_values, image_grid_thw=image_grid_thw)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
