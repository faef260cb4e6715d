# source: https://github.com/huggingface/transformers/issues/29526
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# transformers, models/mamba/modeling_mamba.py, MambaMixer.slow_forward (used without the CUDA kernels): with a cache
# (use_cache defaults to config.use_cache = True, so training a MambaForCausalLM builds a MambaCache), the scan starts
# from `ssm_state = cache_params.ssm_states[self.layer_idx]`, the first step `discrete_A[:, :, 0, :] * ssm_state`
# saves that cache tensor, and after the scan `cache_params.ssm_states[self.layer_idx].copy_(ssm_state)` overwrites it,
# so loss.backward() fails (issue #29526, "Mamba `slow_forward` uses inplace operations causing errors in the backward
# pass"; duplicate of #29514). Fix, PR #29563 "Mamba `slow_forward` gradient fix": clone the initial `ssm_state`
# taken from the cache (`cache_params.ssm_states[self.layer_idx].clone()`).
# The library module is 1109helpers_transformers_modeling_mamba.py (ref: ..._fixed.py).
# Stand-ins: a 2-layer Mamba with hidden size 8, state size 4, vocabulary 20; one language-modelling step on 2 random
# sequences of 6 tokens (labels = input_ids, as in the reporter's script).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
modeling_mamba = importlib.import_module("1109helpers_transformers_modeling_mamba")


def compute():
    torch.manual_seed(0)
    model = modeling_mamba.MambaForCausalLM(modeling_mamba.MambaConfig())
    model.train()
    input_ids = torch.randint(0, 20, (2, 6))
    loss, logits, cache = model(input_ids, labels=input_ids)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
