# FIXED version (commit 0740192, PR #8825: `x = x + ...position_embeddings`); the parent's header follows.
# nemo/collections/multimodal/modules/stable_diffusion/encoders/modules.py as of the parent of commit 0740192 (PR #8825,
# "remove in-place addition for dreambooth train with text encoder"): FrozenMegatronCLIPEmbedder.encode_with_transformer
# and text_transformer_forward. The culprit: `x += self.model.language_model.embedding.position_embeddings` on the
# output of Megatron's VocabParallelEmbedding, which ends with `reduce_from_tensor_model_parallel_region`, a custom
# autograd Function that returns its input as-is on one tensor-parallel rank; that output is a view made inside a
# custom Function, so when the text encoder is trained (DreamBooth with `train_text_encoder`, `freeze=False`) the
# in-place add fails with "Output 0 of _ReduceFromModelParallelRegionBackward is a view and is being modified inplace".
# Stand-ins: Megatron-core's VocabParallelEmbedding.forward, _reduce and _ReduceFromModelParallelRegion are copied from
# megatron/core/tensor_parallel (layers.py / mappings.py, April 2024) with tensor_model_parallel_size = 1; the CLIP
# text model (self.model) is a namespace of modules: word/position embeddings, 2 encoder layers (each a
# pre-LayerNorm MLP residual block standing in for the Megatron transformer layer, attn_mask unused), final_layernorm;
# the tokenizer / text_transform is left out (the case passes token ids).
import types

import torch
import torch.nn as nn


def get_tensor_model_parallel_world_size():
    return 1


def _reduce(input_):
    """All-reduce the input tensor across model parallel group."""

    # Bypass the function if we are using only 1 GPU.
    if get_tensor_model_parallel_world_size() == 1:
        return input_


class _ReduceFromModelParallelRegion(torch.autograd.Function):
    """All-reduce the input from the model parallel region."""

    @staticmethod
    def forward(ctx, input_):
        return _reduce(input_)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def reduce_from_tensor_model_parallel_region(input_):
    return _ReduceFromModelParallelRegion.apply(input_)


class VocabParallelEmbedding(nn.Module):
    def __init__(self, num_embeddings, embedding_dim):
        super().__init__()
        self.tensor_model_parallel_size = 1
        self.weight = nn.Parameter(torch.randn(num_embeddings, embedding_dim) * 0.02)

    def forward(self, input_):
        masked_input = input_
        # Get the embeddings.
        output_parallel = self.weight[masked_input]
        # Reduce across all the model parallel GPUs.
        output = reduce_from_tensor_model_parallel_region(output_parallel)
        return output


class EncoderLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.fc = nn.Linear(d, d)

    def forward(self, x, attn_mask=None):
        return x + self.fc(torch.nn.functional.gelu(self.ln(x)))


def build_clip_text_model(vocab=20, max_len=6, d=8, layers=2):
    embedding = types.SimpleNamespace(
        word_embeddings=VocabParallelEmbedding(vocab, d),
        position_embeddings=nn.Parameter(torch.randn(max_len, d) * 0.01),
    )
    encoder = types.SimpleNamespace(
        layers=nn.ModuleList([EncoderLayer(d) for _ in range(layers)]),
        final_layernorm=nn.LayerNorm(d),
    )
    language_model = types.SimpleNamespace(embedding=embedding, encoder=encoder)
    return types.SimpleNamespace(language_model=language_model, attn_mask=None)


class FrozenMegatronCLIPEmbedder(nn.Module):
    def __init__(self, model, layer_idx=0, return_pooled=False):
        super().__init__()
        self.model = model
        self.layer_idx = layer_idx
        self.return_pooled = return_pooled

    def encode_with_transformer(self, text):
        x = self.model.language_model.embedding.word_embeddings(text)
        x = x + self.model.language_model.embedding.position_embeddings
        x = x.permute(1, 0, 2)  # NLD -> LND
        x = self.text_transformer_forward(x, attn_mask=self.model.attn_mask)
        x = self.model.language_model.encoder.final_layernorm(x)
        x = x.permute(1, 0, 2)  # LND -> NLD
        return x, None

    def text_transformer_forward(self, x: torch.Tensor, attn_mask=None):
        for i, r in enumerate(self.model.language_model.encoder.layers):
            if i == len(self.model.language_model.encoder.layers) - self.layer_idx:
                break
            x = r(x, attn_mask)
        return x
