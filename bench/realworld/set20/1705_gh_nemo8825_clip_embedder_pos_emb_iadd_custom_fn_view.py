# source: https://github.com/NVIDIA/NeMo/commit/074019248db8928beaac0a1156f1ebe2b744514b
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# NeMo multimodal (Stable Diffusion DreamBooth with the text encoder trained), FrozenMegatronCLIPEmbedder
# .encode_with_transformer: `x = word_embeddings(text)` then `x += position_embeddings`. Megatron's VocabParallelEmbedding
# returns `reduce_from_tensor_model_parallel_region(output_parallel)`, a custom Function that hands back its input
# as-is on a single tensor-parallel rank, so `x` is a view created inside a custom Function and the in-place add fails
# with "Output 0 of _ReduceFromModelParallelRegionBackward is a view and is being modified inplace". PR #8825
# "remove in-place addition for dreambooth train with text encoder" writes `x = x + ...position_embeddings`.
# The library module is 1705helpers_nemo_clip_embedder.py (ref: 1705helpers_nemo_clip_embedder_fixed.py).
# Stand-ins (see the helper): the Megatron embedding / reduce Function copied with one rank, a 2-layer stand-in text
# transformer, a batch of 2 prompts of 6 token ids; the loss stands in for the UNet's denoising loss conditioned on
# the text embedding (the squared mean of the conditioning); the gradients of every text-encoder parameter returned.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
mod = importlib.import_module("1705helpers_nemo_clip_embedder")


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
