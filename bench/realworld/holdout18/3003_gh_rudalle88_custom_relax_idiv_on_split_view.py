# source: https://github.com/ai-forever/ru-dalle/pull/88 (commit 8fd214759590dc3d1fdc3c68076608059d027773)
# pattern: augassign
# codemod_fixable: yes
# error: C
# ref_semantics: same
# ruDALL-E, rudalle/dalle/transformer.py: PR #87 ("Tweaks for stable training of larger models in fp16") added a
# `custom_relax` mode to DalleSelfAttention that rescales the values with `value_layer /= scale` before the context
# matmul. value_layer is `_transpose_for_scores` (view + permute) of one of the three outputs of
# split_tensor_along_last_dim (torch.split of the fused query/key/value projection), so with grad mode on the forward
# raises "Output 0 of Permute is a view and is being modified inplace. This view is the output of a function
# that returns multiple views." (and at inference the division also rewrote the cached past values). The next day
# PR #88 (commit 8fd2147, "fix inplace modification of value_layer during forward wti custom_relax flag") computes
# `torch.matmul(attention_probs, value_layer / scale)`; the later `context_layer /= scale` (a view of a contiguous
# copy) stays.
# The library module is 3003helpers_rudalle_transformer.py (ref: ..._fixed.py); its header names its stand-ins.
# Stand-ins here: one attention layer of width 16 with 2 heads, cogview_pb_relax and custom_relax on (as the fp16
# training configuration of the larger models sets them), no dropout, a causal mask over 6 positions, a random batch
# of 2 and a mean-squared loss, without the key/value cache (training).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
transformer = importlib.import_module("3003helpers_rudalle_transformer")


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
