# source: https://github.com/NovaSky-AI/SkyRL/pull/1648
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# SkyRL (RL post-training of LLMs), Megatron backend, skyrl/backends/skyrl_train/distributed/megatron/model_utils.py:
# with chunked log-probs (the default since #1610) and the entropy loss on, two autograd Functions save the same
# logits: ChunkedDistributedLogprob.forward saves `vocab_parallel_logits` itself, _VocabParallelEntropy.forward saves
# `action_logits = logits[:, -num_actions-1:-1, :]`, a view of the same storage. _VocabParallelEntropy.backward runs
# first and uses a "modify-then-restore" trick on its saved tensor, `vocab_parallel_logits.sub_(...)` ...
# `vocab_parallel_logits.add_(...)`: the values come back, the version counter does not, and
# ChunkedDistributedLogprob.backward fails with "modified by an inplace operation ... is at version 3; expected
# version 1". PR #1648 (merged, commit c89adcb14): `softmax_logits.mul_(sum_softmax_times_logits -
# vocab_parallel_logits)`, one out-of-place subtraction.
# The library module is 1301helpers_skyrl_model_utils.py (ref: 1301helpers_skyrl_model_utils_fixed.py).
# Stand-ins: one tensor-parallel rank (all-reduces left out, see the helper), a linear LM head on random hidden
# states instead of the Megatron model, batch 2, sequence 7 of which the last 4 are actions, vocabulary 11, chunk 3;
# the loss is the policy-gradient term on the action log-probs minus 0.01 times the mean entropy of the action logits
# (the trainer's `use_entropy_loss` path).
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_utils = importlib.import_module("1301helpers_skyrl_model_utils")


def compute():
    torch.manual_seed(0)
    hidden, vocab, seq, num_actions = 8, 11, 7, 4
    lm_head = nn.Linear(hidden, vocab)
    hidden_states = torch.randn(2, seq, hidden, requires_grad=True)
    sequences = torch.randint(0, vocab, (2, seq))
    advantages = torch.randn(2, num_actions)

    logits = lm_head(hidden_states)
    token_logprobs = model_utils.from_parallel_logits_to_logprobs(
        logits, sequences, vocab_start_index=0, vocab_end_index=vocab, tp_group=None, chunk_size=3
    )
    action_log_probs = token_logprobs[:, -num_actions:]

    action_logits = logits[:, -num_actions - 1:-1, :]
    entropy = model_utils.vocab_parallel_entropy(action_logits)

    policy_loss = -(action_log_probs * advantages).mean()
    loss = policy_loss - 0.01 * entropy.mean()
    loss.backward()
    grads = {"lm_head." + n: p.grad for n, p in lm_head.named_parameters()}
    grads["hidden_states"] = hidden_states.grad
    return grads


if __name__ == "__main__":
    compute()
