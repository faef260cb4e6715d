# source: https://github.com/fla-org/flash-linear-attention/commit/670f5706da1cbf44fd98823df95ccdc3ed9d497f
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# flash-linear-attention, fla/layers/delta_net.py, DeltaNet.forward: with an attention mask (padded batches) the
# per-head write strengths are masked in place, `beta = beta.mul_(attention_mask[:, None, -beta.shape[-1]:])`, where
# `beta = rearrange(self.b_proj(hidden_states), 'b t h -> b h t').sigmoid()`; SigmoidBackward saved its output, so
# training with masks fails at backward with "modified by an inplace operation ... output 0 of SigmoidBackward0".
# Commit 670f5706 ("Fix inplace mul when training with masks") writes
# `beta = (torch.mul if self.training else torch.mul_)(beta, attention_mask[:, None, -beta.shape[-1]:])`: out of
# place in training, still in place at inference.
# The library module is 2708helpers_fla_delta_net.py (ref: ..._fixed.py); its header names the stand-ins for the
# Triton kernels (the naive delta-rule recurrence, plain l2-norm and RMSNorm) and for einops.
# Stand-ins here: one DeltaNet layer (hidden 16, 2 heads, use_short_conv=False: the short convolution needs the
# causal-conv1d CUDA kernel by default) in training mode on a batch of two random sequences of 6 steps, the second
# left-padded by 2 (mask 0), and a squared-output loss.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
dn = importlib.import_module("2708helpers_fla_delta_net")


def compute():
    torch.manual_seed(0)
    layer = dn.DeltaNet(hidden_size=16, num_heads=2, use_short_conv=False, use_gate=False)
    layer.train()
    hidden_states = torch.randn(2, 6, 16)
    attention_mask = torch.ones(2, 6)
    attention_mask[1, :2] = 0
    o, _, _ = layer(hidden_states, attention_mask=attention_mask)
    loss = (o ** 2).mean()
    loss.backward()
    return {
        "q_proj.weight.grad": layer.q_proj.weight.grad,
        "k_proj.weight.grad": layer.k_proj.weight.grad,
        "b_proj.weight.grad": layer.b_proj.weight.grad,
        "o_proj.weight.grad": layer.o_proj.weight.grad,
        "o": o.detach(),
    }


if __name__ == "__main__":
    compute()
