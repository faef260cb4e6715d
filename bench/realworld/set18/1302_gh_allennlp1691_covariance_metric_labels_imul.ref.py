# reference fix for 1302: PR #1691 in the library module (1302helpers_allennlp_covariance_fixed.py): the mask applied
# out of place.
import importlib
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
covariance = importlib.import_module("1302helpers_allennlp_covariance_fixed")


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
