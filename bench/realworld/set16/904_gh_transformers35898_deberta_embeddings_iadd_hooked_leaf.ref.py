# reference fix for 904: PR #35898, DebertaEmbeddings adds the position / token-type embeddings out of place (helper _fixed).
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
modeling_deberta = importlib.import_module("904helpers_modeling_deberta_fixed")


class DebertaConfig:
    vocab_size = 30
    hidden_size = 16
    num_hidden_layers = 1
    num_attention_heads = 4
    intermediate_size = 24
    hidden_dropout_prob = 0.0
    attention_probs_dropout_prob = 0.0
    max_position_embeddings = 32
    type_vocab_size = 0
    layer_norm_eps = 1e-7
    position_biased_input = True
    relative_attention = True
    pad_token_id = 0
    num_labels = 3


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


def get_peft_model(model, target_modules=("in_proj",), modules_to_save=("pooler_dense", "classifier")):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.encoder.layer:
        for name in target_modules:
            setattr(layer.self, name, LoraLinear(getattr(layer.self, name)))
    for name in modules_to_save:
        for p in getattr(model, name).parameters():
            p.requires_grad_(True)
    return model


def compute():
    torch.manual_seed(0)
    config = DebertaConfig()
    model = modeling_deberta.DebertaForSequenceClassification(config)
    model = get_peft_model(model)
    model.train()
    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    # Enable input gradients
    model.enable_input_require_grads()

    input_ids = torch.tensor([[1, 5, 9, 12, 7, 2], [1, 8, 3, 2, 0, 0]])
    attention_mask = (input_ids != config.pad_token_id).long()
    labels = torch.tensor([2, 0])
    loss, _ = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.requires_grad}


if __name__ == "__main__":
    compute()
