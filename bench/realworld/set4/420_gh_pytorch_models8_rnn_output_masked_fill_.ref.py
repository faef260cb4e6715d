# reference fix for 420: the maintainer's fix (commit 23ee691) in torchmodels/modules/rnn.py
# (420helpers_torchmodels_rnn_fixed.py): the output masking line is removed, so padded steps keep their LSTM
# outputs; this deliberately differs from what the original computes.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
rnn = import_module("420helpers_torchmodels_rnn_fixed")


class SentenceEncoder(nn.Module):
    def __init__(self, vocab, dim, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = rnn.LSTM(dim, hidden, dynamic=False)
        self.rnn.reset_parameters()
        self.out = nn.Linear(hidden, 3)

    def forward(self, tokens, lens):
        o, c, h = self.rnn(self.embed(tokens), lens)
        return self.out(o).mean(1)  # mean over all time steps, padded ones included


def compute():
    torch.manual_seed(0)
    model = SentenceEncoder(20, 6, 8)
    tokens = torch.randint(0, 20, (3, 5))
    lens = torch.tensor([5, 3, 2])
    loss = nn.functional.cross_entropy(model(tokens, lens), torch.tensor([0, 2, 1]))
    loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
