"""allennlp 2.10.1: the proven finding of `inplacefix check` (main at 4bb8c00, stop 35):
PretrainedTransformerEmbedder._unfold_long_sequences, `end_token_indices -= ...` (line 391), taken to
be saved by `batched_index_select` (its `torch.max(indices)` bound check). `end_token_indices` is an
integer tensor (the mask's lengths minus an arange): it never requires grad, torch.max of it records
nothing, and index_select saves `indices + offsets`, a fresh tensor. The path runs the method on
word-piece embeddings that require grad, backward; the control with the line made out of place.

allennlp's package imports need spacy (and an old transformers): the method and the nn.util helpers
it calls are run from the installed files' own source (`functions_from`), with a stand-in `self`
holding the four attributes the method reads; ConfigurationError (raised only on bad indices) is
ValueError here."""

import importlib.util
import types

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten

ROOT = importlib.util.find_spec("allennlp").submodule_search_locations[0]
UTIL = functions_from(f"{ROOT}/nn/util.py", ["get_device_of", "get_range_vector", "flatten_and_batch_shift_indices",
                                             "batched_index_select"])
UTIL["ConfigurationError"] = ValueError
EMBEDDER = functions_from(f"{ROOT}/modules/token_embedders/pretrained_transformer_embedder.py",
                          ["PretrainedTransformerEmbedder._unfold_long_sequences"])
EMBEDDER["batched_index_select"] = UTIL["batched_index_select"]
UNFOLD = EMBEDDER["PretrainedTransformerEmbedder._unfold_long_sequences"]

FINDING = "allennlp/modules/token_embedders/pretrained_transformer_embedder.py:391:IPF101"
LINE = "end_token_indices -= num_removed_non_end_tokens.unsqueeze(-1)"
expect_line(UNFOLD, 391, LINE)


def unfold(edits=()):
    def run():
        torch.manual_seed(0)
        # two sequences split into segments of 6 word pieces ([CLS] ... [SEP]); the second is shorter
        this = types.SimpleNamespace(_max_length=6, _num_added_start_tokens=1, _num_added_end_tokens=1,
                                     _num_added_tokens=2)
        batch_size, num_segments = 2, 2
        embeddings = torch.randn(batch_size * num_segments, 6, 4, requires_grad=True)
        mask = torch.ones(batch_size, num_segments * 6, dtype=torch.bool)
        mask[1, 9:] = False
        function = rewritten(UNFOLD, edits) if edits else UNFOLD
        out = function(this, embeddings, mask.reshape(batch_size * num_segments, 6), batch_size, 12)
        out.pow(2).sum().backward()
        assert embeddings.grad is not None
    return run


attempt(FINDING, "path", "_unfold_long_sequences, word-piece embeddings requiring grad, backward", unfold())
attempt(FINDING, "control", "the same with `end_token_indices = end_token_indices - ...` (out of place)",
        unfold([(LINE, "end_token_indices = end_token_indices - num_removed_non_end_tokens.unsqueeze(-1)")]))
