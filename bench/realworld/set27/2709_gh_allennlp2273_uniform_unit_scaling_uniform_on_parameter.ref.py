# reference fix for 2709: allennlp PR #2273 (commit cf6a7d7) in the library module (2709helpers_allennlp_initializers_fixed.py):
# `return tensor.data.uniform_(-max_value, max_value)`.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
init = importlib.import_module("2709helpers_allennlp_initializers_fixed")


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedder = torch.nn.Embedding(20, 8)
        self.projection = torch.nn.Linear(8, 8)
        self.tag_projection = torch.nn.Linear(8, 5)

    def forward(self, tokens):
        return self.tag_projection(torch.tanh(self.projection(self.embedder(tokens))))


def compute():
    torch.manual_seed(0)
    model = Tagger()
    applicator = init.InitializerApplicator([
        (r"projection\.weight", lambda t: init.uniform_unit_scaling(t, "tanh")),
        (r"weight", init.uniform_unit_scaling),
    ])
    applicator(model)
    tokens = torch.randint(0, 20, (3, 4))
    tags = torch.randint(0, 5, (3, 4))
    logits = model(tokens)
    loss = F.cross_entropy(logits.reshape(-1, 5), tags.reshape(-1))
    loss.backward()
    return {
        "projection.weight": model.projection.weight.detach(),
        "embedder.weight.grad": model.embedder.weight.grad,
        "projection.weight.grad": model.projection.weight.grad,
        "tag_projection.weight.grad": model.tag_projection.weight.grad,
        "loss": loss.detach(),
    }


if __name__ == "__main__":
    compute()
