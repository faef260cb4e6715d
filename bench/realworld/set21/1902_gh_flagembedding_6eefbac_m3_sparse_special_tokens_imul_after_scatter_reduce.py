# source: https://github.com/FlagOpen/FlagEmbedding/commit/6eefbac0e0c185205fe210b999a4cbe55c97054e (issue #1364)
# pattern: subscript_augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# FlagEmbedding (BGE-M3 retrieval embedder, unified fine-tuning), EncoderOnlyEmbedderM3Model._sparse_embedding:
# after commit 4e82b52 took the optimisation suggested in issue #1364, the per-token weights are max-pooled into the
# vocabulary with `scatter_reduce(..., reduce="amax")` and the special tokens are then zeroed in place,
# `sparse_embedding[:, unused_tokens] *= 0.`. ScatterReduceBackward saved its result, so fine-tuning fails with
# "modified by an inplace operation ... output 0 of ScatterReduceBackward0". Commit 6eefbac keeps scatter_reduce for
# inference only and, in training, scatters each position into a (batch, length, vocab) tensor and takes the max
# over positions (the same values; `*= 0.` stays, on max's values, which MaxBackward does not save).
# The library module is 1902helpers_flagembedding_m3.py (ref: ..._fixed.py); its header names its stand-ins.
# Harness (stand-in): a vocabulary of 40 tokens (cls 0, pad 1, eos 2, unk 3); the encoder is an embedding plus a
# Linear-Tanh in place of XLM-RoBERTa's last hidden state; 2 queries and 4 passages (2 per query, the first of
# each pair positive) of 7 tokens with a pad tail; sparse_linear = Linear(hidden, 1) as in BGE-M3; the sparse
# scores, temperature 0.02, go through cross-entropy as in the model's training loss.
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
m3 = importlib.import_module("1902helpers_flagembedding_m3")


def compute():
    torch.manual_seed(0)
    vocab_size, hidden = 40, 16
    tokenizer = types.SimpleNamespace(cls_token_id=0, pad_token_id=1, eos_token_id=2, unk_token_id=3)
    embed = torch.nn.Embedding(vocab_size, hidden)
    encoder = torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.Tanh())
    sparse_linear = torch.nn.Linear(hidden, 1)
    model = m3.EncoderOnlyEmbedderM3Model(sparse_linear, tokenizer, vocab_size, temperature=0.02)
    model.train()

    def tokens(n):
        ids = torch.randint(4, vocab_size, (n, 7))
        ids[:, 0] = 0
        ids[:, -2] = 2
        ids[:, -1] = 1
        return ids

    q_ids, p_ids = tokens(2), tokens(4)
    q_reps = model._sparse_embedding(encoder(embed(q_ids)), q_ids)
    p_reps = model._sparse_embedding(encoder(embed(p_ids)), p_ids)
    scores = model.compute_sparse_score(q_reps, p_reps)
    target = torch.tensor([0, 2])
    loss = torch.nn.functional.cross_entropy(scores, target)
    loss.backward()
    return {
        "embed.weight.grad": embed.weight.grad,
        "encoder.0.weight.grad": encoder[0].weight.grad,
        "sparse_linear.weight.grad": sparse_linear.weight.grad,
        "sparse_linear.bias.grad": sparse_linear.bias.grad,
        "scores": scores.detach(),
    }


if __name__ == "__main__":
    compute()
