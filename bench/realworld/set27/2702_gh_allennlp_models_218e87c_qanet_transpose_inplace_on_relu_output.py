# source: https://github.com/allenai/allennlp-models/commit/218e87c16f063b2c7bc5a7df3ebfde0059900652
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# AllenNLP models, QANet / NAQANet reading comprehension, QaNetEncoderBlock.forward: each convolution sublayer is
# `conv_layer(conv_norm_out.transpose_(1, 2)).transpose_(1, 2)`, where conv_layer is pad -> depthwise Conv1d ->
# pointwise Conv1d -> ReLU. The second `transpose_` swaps the dimensions of the ReLU's output in place, which bumps
# its version; ReluBackward saved that output, so training fails at backward with "modified by an inplace
# operation ... output 0 of ReluBackward0" (the commit also turns on anomaly detection in the NAQANet test to find
# it). Commit 218e87c ("fix qanet models") writes `.transpose(1, 2)` for both.
# The library module is 2702helpers_allennlp_qanet_encoder.py (ref: ..._fixed.py); its header names the stand-ins
# for allennlp core (FeedForward, ResidualWithLayerDropout, positional features, masked softmax).
# Stand-ins here: a QaNetEncoder of one block with two convolutions (input 12, hidden 8, 2 heads, kernel 3) on random
# token embeddings of two passages (7 tokens, the second padded after 5), in training mode (dropout 0.1, layer
# dropout 0.1, both drawn from the seeded generator: with seed 0 the layer dropout skips the second convolution
# sublayer, so only the first one's weights get gradients); the QANet span head is reduced to one linear start-logit
# layer with a cross-entropy loss against a fixed start index.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
qanet = importlib.import_module("2702helpers_allennlp_qanet_encoder")


def compute():
    torch.manual_seed(0)
    encoder = qanet.QaNetEncoder(input_dim=12, hidden_dim=8, attention_projection_dim=8, feedforward_hidden_dim=16,
                                 num_blocks=1, num_convs_per_block=2, conv_kernel_size=3, num_attention_heads=2)
    span_start = torch.nn.Linear(8, 1)
    encoder.train()
    embedded = torch.randn(2, 7, 12)
    mask = torch.ones(2, 7, dtype=torch.bool)
    mask[1, 5:] = False
    encoded = encoder(embedded, mask)
    start_logits = span_start(encoded).squeeze(-1).masked_fill(~mask, -1e7)
    loss = torch.nn.functional.cross_entropy(start_logits, torch.tensor([3, 1]))
    loss.backward()
    block = encoder._encoder_blocks[0]
    return {
        "input_projection.weight.grad": encoder._input_projection_layer.weight.grad,
        "conv0.depthwise.weight.grad": block._conv_layers[0][1].weight.grad,
        "conv0.pointwise.weight.grad": block._conv_layers[0][2].weight.grad,
        "attention.combined_projection.weight.grad": block.attention_layer._combined_projection.weight.grad,
        "span_start.weight.grad": span_start.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
