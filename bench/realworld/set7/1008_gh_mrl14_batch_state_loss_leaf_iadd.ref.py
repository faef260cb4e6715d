# reference fix for 1008: commit 14d60cb in the repository module (1008helpers_mrl_callback_fixed.py): the batch loss starts as a clone, not a leaf.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
callback = importlib.import_module("1008helpers_mrl_callback_fixed")


class Environment:
    def __init__(self):
        self.batch_state = callback.BatchState()
        self.log = {}


class LossCallback:
    def __init__(self, loss_function, name, weight=1., environment=None):
        self.name = name
        self.loss_function = loss_function
        self.weight = weight
        self.environment = environment

    def compute_loss(self):
        loss = self.loss_function(self.environment.batch_state)
        loss = loss * self.weight
        self.environment.log[self.name] = loss.mean().detach().cpu()
        self.environment.batch_state.loss += loss.mean()
        self.environment.batch_state[self.name] = loss.detach().cpu()


class Policy(nn.Module):
    def __init__(self, vocab=8, hidden=16):
        super().__init__()
        self.emb = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)

    def forward(self, x):
        h, _ = self.rnn(self.emb(x))
        return F.log_softmax(self.out(h), -1)


def compute():
    torch.manual_seed(0)
    model = Policy()
    prior = Policy()
    env = Environment()
    tokens = torch.randint(0, 8, (4, 6))
    x, y = tokens[:, :-1], tokens[:, 1:]
    bs = env.batch_state
    bs.model_gathered_logprobs = model(x).gather(2, y.unsqueeze(-1)).squeeze(-1)
    with torch.no_grad():
        bs.base_gathered_logprobs = prior(x).gather(2, y.unsqueeze(-1)).squeeze(-1)
    bs.rewards = (y.float() / 7.).mean(-1)
    pg = LossCallback(lambda b: -(b.rewards * b.model_gathered_logprobs.sum(-1)), 'PG', environment=env)
    kl = LossCallback(lambda b: (b.model_gathered_logprobs - b.base_gathered_logprobs).sum(-1), 'prior', 0.1, env)
    for cb in (pg, kl):
        cb.compute_loss()
    bs.loss.backward()
    return {n: p.grad for n, p in model.named_parameters()}


if __name__ == "__main__":
    compute()
