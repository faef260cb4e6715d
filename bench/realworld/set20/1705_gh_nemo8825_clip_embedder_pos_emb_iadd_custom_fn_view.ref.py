# reference fix for 1705: PR #8825 (commit 0740192) in the library module (1705helpers_nemo_clip_embedder_fixed.py):
# `x = x + self.model.language_model.embedding.position_embeddings`.
# Stand-ins (see the helper): the Megatron embedding / reduce Function copied with one rank, a 2-layer stand-in text
# transformer, a batch of 2 prompts of 6 token ids; the loss stands in for the UNet's denoising loss conditioned on
# the text embedding (the squared mean of the conditioning); the gradients of every text-encoder parameter returned.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
mod = importlib.import_module("1705helpers_nemo_clip_embedder_fixed")


def compute():
    torch.manual_seed(0)
    model = mod.build_clip_text_model()
    embedder = mod.FrozenMegatronCLIPEmbedder(model)
    text = torch.tensor([[1, 5, 7, 3, 19, 0], [2, 2, 9, 4, 19, 0]])
    z, _ = embedder.encode_with_transformer(text)
    target = torch.randn(2, 6, 8)
    loss = ((z - target) ** 2).mean()
    loss.backward()
    emb = model.language_model.embedding
    enc = model.language_model.encoder
    out = {
        "word_embeddings.weight.grad": emb.word_embeddings.weight.grad,
        "position_embeddings.grad": emb.position_embeddings.grad,
        "final_layernorm.weight.grad": enc.final_layernorm.weight.grad,
    }
    for i, layer in enumerate(enc.layers):
        out["layers.%d.fc.weight.grad" % i] = layer.fc.weight.grad
    return out


if __name__ == "__main__":
    compute()
