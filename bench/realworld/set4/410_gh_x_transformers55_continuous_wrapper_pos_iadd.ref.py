# reference fix for 410: the merged PR in the package module (410helpers_x_transformers_fixed.py):
# `x = x + self.pos_emb(x)`; the caller is unchanged.
import os
import sys
from importlib import import_module

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
x_transformers = import_module("410helpers_x_transformers_fixed")
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
