# source: https://github.com/allenai/allennlp/pull/2273 (commit cf6a7d7ddeb9e2ca7f34ebec3e2b9e361e25afa7, fixes allenai/allennlp#2239)
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# AllenNLP, allennlp/nn/initializers.py, uniform_unit_scaling: the initializer ends with
# `return tensor.uniform_(-max_value, max_value)`. Applied by an InitializerApplicator to a model's parameters (a
# configuration such as `[["weight", {"type": "uniform_unit_scaling"}]]`; issue #2239 initialised LSTM / GRU weights), `tensor` is a
# Parameter that requires grad, so building the model fails with "a leaf Variable that requires grad is being used in an in-place operation" (the
# torch 0.4 merge of Variable and Tensor made this raise; the other initializers go through torch.nn.init, which draws
# under no_grad). PR #2273 ("Fix bug in uniform_unit_scaling #2239") writes `tensor.data.uniform_(...)`.
# The library module is 2709helpers_allennlp_initializers.py (ref: ..._fixed.py); its header names its stand-in.
# Stand-ins here: a small tagger (embedding 20 x 8, a linear projection 8 -> 8 with tanh, a linear output layer to 5
# tags) whose weights are initialised by an applicator with uniform_unit_scaling for every "weight" (tanh gain for the
# projection), then one cross-entropy step on random token ids and tags.
import importlib
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
init = importlib.import_module("2709helpers_allennlp_initializers")


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
