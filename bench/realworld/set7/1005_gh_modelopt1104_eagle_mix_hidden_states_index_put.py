# source: https://github.com/NVIDIA/Model-Optimizer/pull/1104
# pattern: subscript_assign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# NVIDIA Model-Optimizer, modelopt/torch/speculative/plugins/transformers.py, HFEagleModel training forward with
# `eagle_mix_hidden_states=True`: after each training-time-test step the drafter's input hidden states are partly
# replaced by its own outputs, `eagle_input_hiddens[batch_indices, rand_indices] = eagle_output_hiddens[batch_indices,
# rand_indices]`, in place, while the step's drafter forward (its RMSNorm) saved `eagle_input_hiddens`; training fails
# ("RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation:
# IndexPutBackward0", issue #1088). PR #1104 "fix: EAGLE mix_hidden_states in-place op crash" (merged, commit
# 6b53e76): `eagle_input_hiddens = eagle_input_hiddens.clone()` before the indexed assignment.
# The library module is 1005helpers_modelopt_eagle.py (ref: 1005helpers_modelopt_eagle_fixed.py).
# Stand-ins: see the helper's header (tiny frozen base model, one-layer drafter, hidden size 8, vocabulary 16,
# eagle_ttt_steps 2 as in the PR's test); one training step on 2 random sequences of 6 tokens.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
eagle = importlib.import_module("1005helpers_modelopt_eagle")


def compute():
    torch.manual_seed(0)
    model = eagle.HFEagleModel()
    model.train()
    input_ids = torch.randint(0, 16, (2, 6))
    loss = model(input_ids)
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
