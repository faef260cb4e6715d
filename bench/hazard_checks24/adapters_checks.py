"""adapters 1.3.0: the one proven finding of `inplacefix check` on 2bba8c4 (stop 45), false and gone
on branch prec45: `EmbeddingAdaptersMixin.add_embeddings` (model_mixin.py) builds an
`nn.Embedding`, turns it off (`embedding.requires_grad_(False)`, line 314) and then copies the
reference embedding's rows in (`embedding.weight[idx] = ...detach().clone()`, line 329): the weight
no longer requires grad, so the write raises nothing. The path runs the method with grad on, a
reference embedding and tokenizers sharing two tokens; the context is the same write without the
`requires_grad_(False)` line (then PyTorch raises the leaf error). Run from the installed file's
source (`import adapters` needs transformers), with a stand-in `self` and tokenizers."""

import _shim  # noqa: F401

import importlib.util
import types

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten
from torch import nn

FINDING = "adapters/model_mixin.py:329:IPF105"
PATH = importlib.util.find_spec("adapters").submodule_search_locations[0] + "/model_mixin.py"
method = functions_from(PATH, ["EmbeddingAdaptersMixin.add_embeddings"])["EmbeddingAdaptersMixin.add_embeddings"]
method.__globals__.update({"nn": nn, "torch": torch})
expect_line(method, 314, "embedding.requires_grad_(False)")
expect_line(method, 329, "embedding.weight[idx] = (")


class Tokenizer:
    def __init__(self, vocab):
        self.vocab = vocab

    def get_vocab(self):
        return dict(self.vocab)

    def __len__(self):
        return len(self.vocab)


def add(function):
    def run():
        torch.manual_seed(0)
        model = types.SimpleNamespace(loaded_embeddings={"default": nn.Embedding(5, 4)},
                                      config=types.SimpleNamespace(hidden_size=4),
                                      set_active_embeddings=lambda name: None)
        function(model, "new", Tokenizer({"a": 0, "b": 1, "c": 2}), "default", Tokenizer({"a": 3, "c": 4, "d": 0}))
        model.loaded_embeddings["new"].weight.sum()
    return run


attempt(FINDING, "path", "add_embeddings(name, tokenizer, reference embedding and tokenizer) with grad on", add(method))
attempt(FINDING, "context", "the same without line 314's requires_grad_(False)",
        add(rewritten(method, [("embedding.requires_grad_(False)", "pass")])))
