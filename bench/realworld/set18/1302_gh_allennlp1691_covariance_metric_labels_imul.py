# source: https://github.com/allenai/allennlp/pull/1691
# pattern: augassign
# codemod_fixable: yes
# error: A
# ref_semantics: same
# AllenNLP, allennlp/training/metrics/covariance.py, Covariance.__call__: the metric unwraps its inputs with
# `x.detach().cpu()` (on the CPU the same storage and version counter) and then masks them in place,
# `predictions *= mask`, `gold_labels *= mask`. PR #1691 "Remove inplace modification in Covariance" (merged, commit
# 4b6f8d165): "this was modifying the labels inplace, which led to problems if you called something like
# `loss = some_function(pred, labels)` then `covariance(pred, labels)`" -- the trainer's `loss.backward()` fails with
# "modified by an inplace operation" (the report's traceback: a selective regression model for event factuality).
# Fix: `predictions = predictions * mask`, `gold_labels = gold_labels * mask`.
# The library module is 1302helpers_allennlp_covariance.py (ref: 1302helpers_allennlp_covariance_fixed.py).
# Stand-ins: a token-level factuality regressor (embedding, linear head) instead of the report's ELMo-based model;
# its forward computes the masked MSE loss and then updates the Covariance metric, as AllenNLP models do; one batch
# of 2 sentences of 5 tokens with a mask; compute() returns the gradients and the metric value.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
covariance = importlib.import_module("1302helpers_allennlp_covariance")


class FactualityRegressor(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.head = nn.Linear(dim, 1)
        self.covariance = covariance.Covariance()

    def forward(self, tokens, labels, mask):
        predictions = self.head(torch.tanh(self.embed(tokens))).squeeze(-1)
        loss = (nn.functional.mse_loss(predictions, labels, reduction="none") * mask).sum() / mask.sum()
        self.covariance(predictions, labels, mask)
        return {"loss": loss, "predictions": predictions}


def compute():
    torch.manual_seed(0)
    model = FactualityRegressor()
    tokens = torch.randint(0, 20, (2, 5))
    labels = torch.randn(2, 5)
    mask = torch.tensor([[1.0, 1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0]])
    output = model(tokens, labels, mask)
    output["loss"].backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    grads["covariance"] = torch.tensor(model.covariance.get_metric())
    return grads


if __name__ == "__main__":
    compute()
