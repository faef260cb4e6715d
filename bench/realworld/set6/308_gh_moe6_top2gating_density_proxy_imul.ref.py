# reference fix for 308: commit 04201ee in the library module (308helpers_mixture_of_experts_fixed.py): `density_1_proxy = density_1_proxy * equals_one_mask[..., None]`.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
moe_lib = importlib.import_module("308helpers_mixture_of_experts_fixed")


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
