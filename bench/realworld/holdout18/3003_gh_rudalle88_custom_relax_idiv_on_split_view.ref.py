# reference fix for 3003: PR #88 (commit 8fd2147) in the library module (3003helpers_rudalle_transformer_fixed.py):
# `context_layer = torch.matmul(attention_probs, value_layer / scale)` under custom_relax.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
transformer = importlib.import_module("3003helpers_rudalle_transformer_fixed")


def compute():
    torch.manual_seed(0)
    attn = transformer.DalleSelfAttention(16, 2, attention_dropout_prob=0.0, output_dropout_prob=0.0,
                                          cogview_pb_relax=True, custom_relax=True)
    hidden_states = torch.randn(2, 6, 16, requires_grad=True)
    ltor_mask = torch.tril(torch.ones(6, 6)).view(1, 1, 6, 6)
    target = torch.randn(2, 6, 16)

    output, _ = attn(hidden_states, ltor_mask, has_cache=False, use_cache=False)
    loss = ((output - target) ** 2).mean()
    loss.backward()
    return {
        "output": output.detach(),
        "hidden_states.grad": hidden_states.grad,
        "query_key_value.weight.grad": attn.query_key_value.weight.grad,
        "query_key_value.bias.grad": attn.query_key_value.bias.grad,
        "dense.weight.grad": attn.dense.weight.grad,
    }


if __name__ == "__main__":
    compute()
