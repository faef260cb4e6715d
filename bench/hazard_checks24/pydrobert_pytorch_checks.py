"""pydrobert-pytorch 0.3.0 (pydrobert/torch/util.py:353 `beam_search_advance`): the proven finding of `inplacefix
check` (stop 57, fresh57, end of stop). With `distribution=True` (the default) the step normalises the logits,
`logits_t = torch.nn.functional.log_softmax(logits_t, 2)` (:332; log_softmax saves its output), and with
`prevent_eos=True` writes `logits_t[..., eos] = neg_inf` (:353) into that output. Logits from a network that require
grad (the docstring's `logits_t = ff(h_t)`), backward of the beam scores raises; the write on a fresh copy runs. Real
by this file's convention: beam search is decoding (no gradient is taken of the scores). The function is compiled
alone from the shipped file (pydrobert.torch.INDEX_PAD_VALUE, its eos default, as a stand-in: -100)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pydrobert/torch/util.py")
assert linecache.getline(PATH, 353).strip() == "logits_t[..., eos] = neg_inf"
PYDROBERT = types.SimpleNamespace(torch=types.SimpleNamespace(INDEX_PAD_VALUE=-100))


def run(shipped):
    replace = {} if shipped else {353: "logits_t = logits_t.clone(); logits_t[..., eos] = neg_inf"}
    ns = compile_alone(PATH, {"beam_search_advance"}, {"torch": torch, "pydrobert": PYDROBERT, "Optional": None},
                       replace=replace)

    def go():
        torch.manual_seed(0)
        ff = torch.nn.Linear(4, 6)
        h_t = torch.randn(2, 4)
        logits_t = ff(h_t)  # (N, C), the first step
        score, y, s = ns["beam_search_advance"](logits_t, 3, eos=0, prevent_eos=True)
        score.sum().backward()
        assert ff.weight.grad is not None
    return go


attempt("pydrobert/torch/util.py:353:IPF104", "path", "one beam-search step (width 3, eos 0, prevent_eos=True) on "
        "logits of a Linear layer: the eos write spoils log_softmax's saved output, backward of the scores raises",
        run(True))
attempt("pydrobert/torch/util.py:353:IPF104", "control", "the write on a fresh copy: runs", run(False))
