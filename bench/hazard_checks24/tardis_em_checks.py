"""tardis-em 0.3.36 (dist_pytorch/model/embedding.py:150, :156, :161 `EdgeEmbedding.forward`; utils/losses.py:84
`AbstractLoss.ignor_diagonal`): the proven findings of `inplacefix check` on main 7911fb7 (stop 53, fresh53).
EdgeEmbedding, AbstractLoss and DiceLoss are compiled alone from the shipped files (nn.Module bases kept).
- embedding: `dist = torch.exp(...)` (exp saves its output), then `dist[torch.isnan(dist)] = 0.0` (:150, :161) and
  `dist[:, g_range, g_range, :] = 1.0` on its unsqueezed view (:156) write it. Coordinates requiring grad raise:
  real by this file's convention (DIST embeds point-cloud coordinates that do not require grad). Each line is run
  with the other write of the same branch as a clone-and-write (:156, :162) or skipped (:150, so that :156 writes
  exp's output).
- losses: `logits = torch.sigmoid(logits)` (sigmoid saves its output), then with `diagonal=True` and no mask
  `logits[:, g_range, g_range] = 1` writes it. A DiceLoss(diagonal=True) on a model's logits raises in training:
  real in the library's own use."""

import _shim  # noqa: F401
import linecache
from abc import abstractmethod
from typing import Union

import numpy as np
import torch
from torch import nn
from _check import attempt
from _fresh53 import compile_alone, src

EMB, LOSS = src("tardis_em/dist_pytorch/model/embedding.py"), src("tardis_em/utils/losses.py")
assert linecache.getline(EMB, 150).strip() == linecache.getline(EMB, 161).strip() == "dist[torch.isnan(dist)] = 0.0"
assert linecache.getline(EMB, 156).strip() == linecache.getline(EMB, 162).strip() == "dist[:, g_range, g_range, :] = 1.0"
assert linecache.getline(LOSS, 84).strip() == "logits[:, g_range, g_range] = 1"
NAN_OUT = "dist = dist.masked_fill(torch.isnan(dist), 0.0)"
DIAG_CLONE = "dist = dist.clone(); dist[:, g_range, g_range, :] = 1.0"


def emb(replace, sigma, grad=True):
    def go():
        ns = compile_alone(EMB, {"EdgeEmbedding"}, {"torch": torch, "nn": nn, "Union": Union, "np": np},
                           replace=replace)
        torch.manual_seed(0)
        layer = ns["EdgeEmbedding"](n_out=4, sigma=sigma)
        coord = torch.randn(1, 6, 3, requires_grad=grad)
        out = layer(coord)
        if grad:
            out.sum().backward()
    return go


def loss(replace, mask=False):
    def go():
        ns = compile_alone(LOSS, {"AbstractLoss", "DiceLoss"}, {"torch": torch, "nn": nn, "abstractmethod": abstractmethod},
                           replace=replace)
        torch.manual_seed(0)
        head = nn.Linear(4, 6)  # a graph head: logits (1, 6, 6) from a module whose weights require grad
        logits = head(torch.randn(1, 6, 4))
        targets = (torch.rand(1, 6, 6) > 0.5).float()
        ns["DiceLoss"](diagonal=True)(logits, targets, mask=mask).backward()
    return go


F150, F156, F161 = (f"tardis_em/dist_pytorch/model/embedding.py:{n}:IPF104" for n in (150, 156, 161))
attempt(F150, "path", "sigma 2.0, coordinates requiring grad, :156 as clone-and-write, backward", emb({156: DIAG_CLONE}, 2.0))
attempt(F150, "control", ":150 as masked_fill, :156 as clone-and-write", emb({150: NAN_OUT, 156: DIAG_CLONE}, 2.0))
attempt(F156, "path", "sigma 2.0, :150 skipped, :156 as shipped (a view of exp's output)", emb({150: "pass"}, 2.0))
attempt(F156, "control", ":150 skipped, :156 as clone-and-write", emb({150: "pass", 156: DIAG_CLONE}, 2.0))
attempt(F161, "path", "sigma range [1, 3], :162 as clone-and-write, backward", emb({162: DIAG_CLONE}, [1.0, 3.0]))
attempt(F161, "control", ":161 as masked_fill, :162 as clone-and-write", emb({161: NAN_OUT, 162: DIAG_CLONE}, [1.0, 3.0]))
attempt(F150, "context", "coordinates without grad (DIST), as shipped", emb({}, 2.0, grad=False))
F84 = "tardis_em/utils/losses.py:84:IPF104"
attempt(F84, "path", "DiceLoss(diagonal=True) on logits from a linear head, backward", loss({}))
attempt(F84, "control", ":84 as clone-and-write", loss({84: "logits = logits.clone(); logits[:, g_range, g_range] = 1"}))
attempt(F84, "context", "mask=True (the masked branch, out of place): runs", loss({}, mask=True))
