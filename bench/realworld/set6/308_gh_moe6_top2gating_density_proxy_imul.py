# source: https://github.com/lucidrains/mixture-of-experts/issues/6
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# mixture-of-experts (sparsely gated MoE, lucidrains), Top2Gating.forward: `raw_gates = raw_gates.softmax(dim=-1)`,
# `density_1_proxy = raw_gates`, and when an `importance` is given (the inner gate of HeirarchicalMoE)
# `density_1_proxy *= equals_one_mask[..., None]` multiplies the softmax output, saved by softmax for backward, in
# place; backpropagating through the hierarchical MoE fails ("implicit inplace operation '*=' cause an error when
# deriving the back gradient in pytorch", issue #6; the reporter's fix `density_1_proxy = density_1_proxy *
# equals_one_mask[..., None]` was committed by the maintainer as 04201ee, "fix inplace"). `density_1_proxy` is the
# same tensor as `raw_gates`, so the in-place product also masked `raw_gates`, which the second-choice selection
# (`gates_without_top_1 = raw_gates * (1. - mask_1)`) reads next; the fix leaves raw_gates unmasked, so gate_2 and
# index_2 change where importance < 1: the reference computes another routing, hence `differs`.
# The library module is 308helpers_mixture_of_experts.py (ref: 308helpers_mixture_of_experts_fixed.py).
# Stand-ins: a HeirarchicalMoE with 2 x 2 experts (dim 8, hidden 16) inside a tiny token model (embedding, MoE layer
# with residual, linear read-out) trained one step on random tokens: next-token cross-entropy plus the MoE's auxiliary
# balancing loss; the 'random' second-expert policy is seeded.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
moe_lib = importlib.import_module("308helpers_mixture_of_experts")


class TinyMoELM(nn.Module):
    def __init__(self, vocab=13, dim=8):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.moe = moe_lib.HeirarchicalMoE(dim=dim, num_experts=(2, 2), hidden_dim=16)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.emb(tokens)
        h, aux_loss = self.moe(x)
        return self.out(x + h), aux_loss


def compute():
    torch.manual_seed(0)
    model = TinyMoELM()
    tokens = torch.randint(0, 13, (2, 7))
    logits, aux_loss = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 13), tokens[:, 1:].reshape(-1)) + aux_loss
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
