"""braindecode 1.8.1: the one proven finding of `inplacefix check` (main at a4c47fa, stop 44):
`_torch_normalize_vectors` (braindecode/augmentation/functional.py) takes `norm =
torch.linalg.norm(rr, axis=1, keepdim=True)` (line 625; the vector norm saves its result) and
writes `norm[~mask] = 1` (line 627) before `rr / norm`. The path calls it with surface points that
require grad and backward; the control the same with the write made out of place
(`norm = norm.masked_fill(~mask, 1)`); the context: the library calls it on a montage's fixed
positions (no grad), where nothing is saved. The module is run from its source
(`functions_from`): braindecode's package imports skorch, mne-bids and torchaudio binaries."""

import _shim  # noqa: F401

import importlib.util

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten

FINDING = "braindecode/augmentation/functional.py:627:IPF104"
PATH = importlib.util.find_spec("braindecode").submodule_search_locations[0] + "/augmentation/functional.py"
F = functions_from(PATH, ["_torch_normalize_vectors"])["_torch_normalize_vectors"]
expect_line(F, 625, "norm = torch.linalg.norm(rr, axis=1, keepdim=True)")
expect_line(F, 627, "norm[~mask] = 1")


def normalize(function, grad=True):
    def run():
        torch.manual_seed(0)
        rr = torch.randn(6, 3, requires_grad=grad)
        out = function(rr * 1.0)
        if grad:
            out.sum().backward()
    return run


attempt(FINDING, "path", "_torch_normalize_vectors(points requiring grad), backward", normalize(F))
attempt(FINDING, "control", "the same with `norm = norm.masked_fill(~mask, 1)` (line 627 out of place)",
        normalize(rewritten(F, [("norm[~mask] = 1", "norm = norm.masked_fill(~mask, 1)")])))
attempt(FINDING, "context", "fixed positions that require no grad (the library's montage use)",
        normalize(F, grad=False))
