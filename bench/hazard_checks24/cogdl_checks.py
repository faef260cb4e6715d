"""cogdl (models/nn/gcnmix.py): the one proven finding of `inplacefix check` on main d1b4fd6 (stop 51, prec51b):
`mix_hidden_state(feat, ...)` mixes rows in place, `feat[train_index] = lamb * feat[train_index] + (1 - lamb) *
feat[permuted_index]` (line 18); `GCNMix.forward_aux` hands it `h = F.relu(h)` (line 91, relu saves its output)
with the default layer_mix=1. cogdl's package import needs more than torch: mix_hidden_state, GCNConv and GCNMix
are compiled alone from the shipped file with BaseModel = nn.Module (GCNMix built by __new__ with the attributes
its __init__ sets that forward_aux reads: input_gnn/hidden_gnn GCNConv, dropout, alpha). Path: training,
parameters requiring grad, forward_aux(x, one-hot labels, train_index) (as gcnmix_mw.py:120 calls it), backward
raises (output of ReLU modified). Control: line 18 as `feat = feat.index_put((train_index,), ...)`: runs.
Real in the library's own training (GCNMix's model wrapper calls forward_aux with grad on)."""

import _shim  # noqa: F401
import linecache
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from _check import attempt
from _prec51b import PK2, compile_alone

SRC = os.path.join(PK2, "cogdl/models/nn/gcnmix.py")
LINE = "feat[train_index] = lamb * feat[train_index] + (1 - lamb) * feat[permuted_index]"
assert LINE in linecache.getline(SRC, 18)
assert "h = F.relu(h)" in linecache.getline(SRC, 91)
FINDING = "cogdl/models/nn/gcnmix.py:18:IPF104"


def run(control):
    def go():
        ns = compile_alone(SRC, {"mix_hidden_state", "GCNConv", "GCNMix"},
                           {"torch": torch, "nn": nn, "F": F, "np": np, "BaseModel": nn.Module, "spmm": None},
                           replace={18: "feat = feat.index_put((train_index,), lamb * feat[train_index] + (1 - lamb)"
                                        " * feat[permuted_index])"} if control else None)
        torch.manual_seed(0)
        np.random.seed(0)
        m = ns["GCNMix"].__new__(ns["GCNMix"])
        nn.Module.__init__(m)
        m.input_gnn, m.hidden_gnn = ns["GCNConv"](4, 8), ns["GCNConv"](8, 3)
        m.dropout, m.alpha = 0.5, 1.0
        m.train()
        x = torch.randn(6, 4)
        labels = F.one_hot(torch.tensor([0, 1, 2, 0, 1, 2]), 3).float()
        logits, target = m.forward_aux(x, labels, torch.tensor([0, 2, 4, 5]), mix_hidden=True)
        (logits[torch.tensor([0, 2, 4, 5])] - target).pow(2).sum().backward()
    return go


attempt(FINDING, "path", "GCNMix.forward_aux (layer_mix=1) in training, parameters requiring grad, backward",
        run(False))
attempt(FINDING, "control", "line 18 out of place (index_put)", run(True))
