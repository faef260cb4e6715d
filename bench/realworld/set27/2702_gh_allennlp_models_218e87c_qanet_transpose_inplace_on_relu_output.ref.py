# reference fix for 2702: commit 218e87c in the library module (2702helpers_allennlp_qanet_encoder_fixed.py):
# `conv_layer(conv_norm_out.transpose(1, 2)).transpose(1, 2)` (both transposes out of place); the rest as in the original.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
qanet = importlib.import_module("2702helpers_allennlp_qanet_encoder_fixed")


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
