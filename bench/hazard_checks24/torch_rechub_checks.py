"""torch-rechub 0.9.0: the one proven finding of `inplacefix check` on main e0a91e4 (stop 50, prec50b):
`AUGRU.forward` (models/ranking/dien.py) takes `attn = torch.softmax(scores, dim=1)` (line 54, softmax saves its
output) and, when a row is all padding (every score masked to -inf, softmax gives NaN), writes
`attn[nan_rows] = 1.0 / attn.size(1)` (line 58). The file is imported as it is (with
empty parent packages; `basic.layers`, which needs pandas, stands as an empty module: AUGRU uses neither
of its names) from the unpacked wheel under $PREC50B_SITE (default /work/tmp/prec50b/pk). The path:
AUGRU (DIEN's interest-evolution layer) in training, behaviour embeddings and parameters requiring grad, a mask
with one all-padding row (a user with no history, what the NaN branch is written for), backward: raises.
Control: a mask with no all-padding row (the write skipped): runs. Context: DIEN.forward (line 161-164) hands
AUGRU only the rows with some history (`mask[has_hist]`), so DIEN's own training never takes the NaN branch; AUGRU used directly (a
public class) with an all-padding row raises. Real by this file's convention (a reachable call with inputs
requiring grad raises), not in the library's own model."""

import _shim  # noqa: F401
import importlib
import os
import sys
import types

import torch
from _check import attempt, expect_line

SITE = os.environ.get("PREC50B_SITE", "/work/tmp/prec50b/pk")
for name in ("torch_rechub", "torch_rechub.models", "torch_rechub.models.ranking"):
    mod = types.ModuleType(name)  # empty parents: the package __init__s import every model
    mod.__path__ = [os.path.join(SITE, *name.split("."))]
    sys.modules[name] = mod
layers = types.ModuleType("torch_rechub.basic.layers")  # needs pandas; AUGRU uses neither name
layers.MLP = layers.EmbeddingLayer = None
sys.modules["torch_rechub.basic"] = types.ModuleType("torch_rechub.basic")
sys.modules[layers.__name__] = layers
dien = importlib.import_module("torch_rechub.models.ranking.dien")
expect_line(dien.AUGRU.forward, 58, "attn[nan_rows] = 1.0 / attn.size(1)")
expect_line(dien.AUGRU.forward, 54, "attn = torch.softmax(scores, dim=1)")
FINDING = "torch_rechub/models/ranking/dien.py:58:IPF104"


def run(empty_row):
    def go():
        torch.manual_seed(0)
        layer = dien.AUGRU(8).train()
        x = torch.randn(3, 5, 8, requires_grad=True)
        item = torch.randn(3, 8, requires_grad=True)
        mask = torch.ones(3, 5, dtype=torch.bool)
        mask[1, 3:] = False
        if empty_row:
            mask[2] = False
        outs, h = layer(x, item, mask)
        (outs.sum() + h.sum()).backward()
    return go


attempt(FINDING, "path", "AUGRU(8) in training, x/item/parameters requiring grad, a mask with an all-padding row, "
        "backward", run(True))
attempt(FINDING, "control", "the same with no all-padding row (line 58 skipped)", run(False))
