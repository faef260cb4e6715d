# reference fix for 909: PR #43418, clone inputs_embeds before writing the image rows (helper _fixed).
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
modeling_kosmos2_5 = importlib.import_module("909helpers_modeling_kosmos2_5_fixed")


class Kosmos2_5Config:
    vocab_size = 40
    embed_dim = 16
    attention_heads = 4
    ffn_dim = 32
    layers = 1
    max_position_embeddings = 64
    scale_embedding = True
    pad_token_id = 1
    vision_hidden_size = 12
    patch_dim = 10
    latent_query_num = 4


class LoraLinear(nn.Module):
    def __init__(self, base_layer, r=4, lora_alpha=8):
        super().__init__()
        self.base_layer = base_layer
        self.lora_A = nn.Linear(base_layer.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base_layer.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = lora_alpha / r

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x)) * self.scaling


def get_peft_model(model, target_modules=("q_proj", "v_proj")):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.text_model.layers:
        for name in target_modules:
            setattr(layer.self_attn, name, LoraLinear(getattr(layer.self_attn, name)))
    if model.is_gradient_checkpointing:
        model.enable_input_require_grads()
    return model


def compute():
    torch.manual_seed(0)
    config = Kosmos2_5Config()
    model = modeling_kosmos2_5.Kosmos2_5ForConditionalGeneration(config)
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    model = get_peft_model(model)
    model.train()

    input_ids = torch.tensor([[0, 3, 0, 0, 0, 0, 4, 17, 23, 2],
                              [0, 3, 0, 0, 0, 0, 4, 29, 11, 2]])
    image_embeds_position_mask = torch.tensor([[0, -1, 1, 1, 1, 1, -1, 0, 0, 0]]).repeat(2, 1)
    labels = input_ids.masked_fill(image_embeds_position_mask != 0, -100)
    flattened_patches = torch.randn(2, 9, config.patch_dim)

    loss, _ = model(input_ids=input_ids, flattened_patches=flattened_patches,
                    image_embeds_position_mask=image_embeds_position_mask, labels=labels)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
