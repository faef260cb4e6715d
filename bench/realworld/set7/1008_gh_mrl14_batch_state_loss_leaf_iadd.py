# source: https://github.com/DarkMatterAI/mrl/issues/14
# pattern: augassign
# codemod_fixable: yes
# error: B
# ref_semantics: same
# MRL (DarkMatterAI, molecular reinforcement learning), mrl/train/callback.py: BatchState starts every batch with
# `self.loss = to_device(torch.tensor(0., requires_grad=True))` and every loss callback accumulates into it,
# `self.environment.batch_state.loss += loss.mean()` (mrl/train/loss.py, LossCallback.compute_loss). On a GPU,
# to_device returns a copy (not a leaf); on the CPU (and on Apple silicon / Colab CPU runtimes) `.to('cpu')` returns
# the leaf itself, so the tutorials fail ("RuntimeError: a leaf Variable that requires grad is being used in an
# in-place operation", issue #14). Commit 14d60cb "fix leaf flag on batch state loss for CPU runtime" (release 1.3):
# `self.loss = torch.tensor(0., requires_grad=True); self.loss = to_device(self.loss.clone())`.
# The repository module is 1008helpers_mrl_callback.py (ref: 1008helpers_mrl_callback_fixed.py).
# Stand-ins: the policy is a one-layer GRU over 5-token SMILES-like sequences (vocabulary 8) instead of MRL's LSTM
# language model; the environment runs one batch: sample, reward (a fixed per-token score), PolicyGradient-style
# loss callback (-(reward * sum of gathered log-probs)) and a prior-likelihood loss callback; one backward of
# batch_state.loss.
import importlib
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
callback = importlib.import_module("1008helpers_mrl_callback")


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
