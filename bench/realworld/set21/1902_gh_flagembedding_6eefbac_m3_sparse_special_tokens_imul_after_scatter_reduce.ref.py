# reference fix for 1902: commit 6eefbac in the library module (1902helpers_flagembedding_m3_fixed.py): the training
# branch scatters per position and max-pools over positions instead of scatter_reduce(amax).
import importlib
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
m3 = importlib.import_module("1902helpers_flagembedding_m3_fixed")


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
