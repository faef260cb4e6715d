# source: https://github.com/lucidrains/x-transformers/pull/55
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# x-transformers ContinuousTransformerWrapper.forward (the package module, 410helpers_x_transformers.py):
# `x = self.project_in(x)` is nn.Identity() when dim_in is not given, then `x += self.pos_emb(x)` adds the
# positional embedding in place into the caller's tensor. Stacked on an nn.LSTM (the PR's example) that tensor is
# the LSTM output, which the RNN backward saved ("output 0 of CudnnRnnBackward" on CUDA; on CPU the oneDNN RNN
# node also saves it). Merged PR (commit 67da12a): `x = x + self.pos_emb(x)` (also in the two other wrappers).
import os
import sys
from importlib import import_module

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
x_transformers = import_module("410helpers_x_transformers")
ContinuousTransformerWrapper, Encoder = x_transformers.ContinuousTransformerWrapper, x_transformers.Encoder


class Model(nn.Module):
    def __init__(self, ):
        super().__init__()
        self.rnn = nn.LSTM(input_size=16, hidden_size=16, num_layers=1,
                           bidirectional=False, batch_first=True)
        self.transformer = ContinuousTransformerWrapper(
            max_seq_len=100,
            attn_layers=Encoder(
                dim=16,
                depth=1,
                heads=4
            )
        )

    def forward(self, x):
        x, _ = self.rnn(x)
        x = self.transformer(x)
        return x


def compute():
    torch.manual_seed(0)
    m = Model()
    x = torch.randn((3, 5, 16))
    w = torch.randn((3, 5, 16))  # fixed random read-out (a plain sum of LayerNorm outputs has no gradient)
    loss = (m(x) * w).sum()
    loss.backward()
    return {n: p.grad for n, p in m.named_parameters()}


if __name__ == "__main__":
    compute()
