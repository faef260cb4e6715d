# reference fix for 1301: PR #1648 in the library module (1301helpers_skyrl_model_utils_fixed.py): one out-of-place
# subtraction in _VocabParallelEntropy.backward.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
model_utils = importlib.import_module("1301helpers_skyrl_model_utils_fixed")


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
