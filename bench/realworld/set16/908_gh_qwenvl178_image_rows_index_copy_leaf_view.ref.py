# reference fix for 908: PR #178, `flat = flat.index_copy(0, row_idx, img)` in the patched forward (helper _fixed).
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.utils.checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
patch = importlib.import_module("908helpers_qwen_monkey_patch_fixed")


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
