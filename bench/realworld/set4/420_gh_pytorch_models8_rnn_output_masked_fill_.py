# source: https://github.com/kaniblu/pytorch-models/pull/8
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: differs
# torchmodels BaseRNN.forward (torchmodels/modules/rnn.py, here 420helpers_torchmodels_rnn.py) zeroes the padded
# time steps of the RNN output in place, `o.masked_fill_(1 - mask.unsqueeze(-1), 0)`. With dynamic=False, `o` is
# the nn.LSTM output itself, which the RNN backward keeps (cuDNN on GPU, oneDNN on CPU). The maintainer's PR
# "inplace operation rnn fixed" deleted the masking line (commit 23ee691), so padded steps are no longer zeroed:
# the ref computes something else than the original would have (an out-of-place masked_fill would keep it).
# The caller is a sentence encoder over a padded batch that reads every time step of the output.
import os
import sys
from importlib import import_module

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
rnn = import_module("420helpers_torchmodels_rnn")


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
