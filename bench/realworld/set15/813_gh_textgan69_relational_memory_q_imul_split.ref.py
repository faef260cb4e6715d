# reference fix for 813: PR #69 in the library module (813helpers_relational_rnn_general_fixed.py): `q = q * (...)`.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
rrg = importlib.import_module("813helpers_relational_rnn_general_fixed")


class RelGAN_G(nn.Module):
    def __init__(self, mem_slots, num_heads, head_size, embedding_dim, vocab_size):
        super(RelGAN_G, self).__init__()
        self.embeddings = nn.Embedding(vocab_size, embedding_dim)
        self.hidden_dim = mem_slots * num_heads * head_size
        self.lstm = rrg.RelationalMemory(mem_slots=mem_slots, head_size=head_size, input_size=embedding_dim,
                                         num_heads=num_heads, return_all_outputs=True)
        self.lstm2out = nn.Linear(self.hidden_dim, vocab_size)

    def init_hidden(self, batch_size):
        memory = self.lstm.initial_state(batch_size)
        memory = self.lstm.repackage_hidden(memory)  # detch memory at first
        return memory

    def forward(self, inp, hidden):
        emb = self.embeddings(inp)  # batch_size * len * embedding_dim
        out, hidden = self.lstm(emb, hidden)  # out: batch_size * seq_len * hidden_dim
        out = out.contiguous().view(-1, self.hidden_dim)  # out: (batch_size * len) * hidden_dim
        out = self.lstm2out(out)  # (batch_size * seq_len) * vocab_size
        return F.log_softmax(out, dim=-1)


def compute():
    torch.manual_seed(0)
    gen = RelGAN_G(mem_slots=1, num_heads=2, head_size=4, embedding_dim=6, vocab_size=11)
    inp = torch.randint(0, 11, (3, 5))
    target = torch.randint(0, 11, (3, 5))
    hidden = gen.init_hidden(3)
    pred = gen(inp, hidden)
    loss = F.nll_loss(pred, target.view(-1))
    loss.backward()
    return {n: p.grad for n, p in gen.named_parameters() if p.grad is not None}


if __name__ == "__main__":
    compute()
