# source: https://github.com/microsoft/torchscale/commit/0cb96955010a93818b3dafb99708f465bcbcc651
# pattern: inplace_kwarg
# codemod_fixable: yes
# error: A
# ref_semantics: same
# TorchScale (Microsoft's transformer library), component/multihead_attention.py: the attention probabilities are
# `F.softmax(attn_weights, dim=-1, dtype=torch.float32).type_as(attn_weights)` followed by
# `self.dropout_module(attn_weights)`, where every dropout of the library was built as
# `torch.nn.Dropout(p, inplace=True)`. With float32 weights `type_as` returns the softmax output itself, so the
# in-place dropout overwrites the tensor SoftmaxBackward0 saved, and training with attention_dropout > 0 fails at
# backward with "modified by an inplace operation ... output 0 of Softmax". Commit 0cb9695 ("Remove
# inplace") builds all dropouts without inplace=True (attention, feed-forward, encoder and decoder layers).
# The library module is 2503helpers_torchscale_components.py (ref: ..._fixed.py).
# Stand-ins: a 2-layer pre-LayerNorm encoder (embed 16, 4 heads, FFN 32, dropout / attention_dropout /
# activation_dropout 0.1, as an args namespace) over an embedding of 2 random token sequences of length 5, mean-pooled
# into a 3-way classifier with cross-entropy; training mode (dropout active, same random stream in both programs).
import importlib
import os
import sys
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
ts = importlib.import_module("2503helpers_torchscale_components")


class TinyEncoderClassifier(nn.Module):
    def __init__(self, args, vocab=20, n_classes=3):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, args.encoder_embed_dim)
        self.layers = nn.ModuleList([ts.EncoderLayer(args) for _ in range(args.encoder_layers)])
        self.layer_norm = nn.LayerNorm(args.encoder_embed_dim, eps=args.layernorm_eps)
        self.head = nn.Linear(args.encoder_embed_dim, n_classes)

    def forward(self, tokens):
        x = self.embed_tokens(tokens)
        for layer in self.layers:
            x = layer(x)
        x = self.layer_norm(x)
        return self.head(x.mean(dim=1))


def compute():
    torch.manual_seed(0)
    args = SimpleNamespace(encoder_embed_dim=16, encoder_attention_heads=4, encoder_ffn_embed_dim=32,
                           encoder_layers=2, dropout=0.1, attention_dropout=0.1, activation_dropout=0.1,
                           layernorm_eps=1e-5)
    model = TinyEncoderClassifier(args)
    model.train()
    tokens = torch.randint(0, 20, (2, 5))
    labels = torch.tensor([0, 2])
    loss = F.cross_entropy(model(tokens), labels)
    loss.backward()
    attn0 = model.layers[0].self_attn
    return {"embed_tokens.weight.grad": model.embed_tokens.weight.grad,
            "layers.0.q_proj.weight.grad": attn0.q_proj.weight.grad,
            "layers.0.k_proj.weight.grad": attn0.k_proj.weight.grad,
            "layers.1.ffn.fc1.weight.grad": model.layers[1].ffn.fc1.weight.grad,
            "head.weight.grad": model.head.weight.grad, "loss": loss.detach()}


if __name__ == "__main__":
    compute()
