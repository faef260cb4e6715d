"""palm-rlhf-pytorch 0.8.0: the one proven finding of `inplacefix check` on main d1b4fd6 (stop 51, prec51b):
`Residual.forward` (palm.py) runs `y = self.fn(x)` (a ParallelTransformerBlock, whose LayerNorm saves x through
F.layer_norm) and then `return x.add_(y)` (line 63), but only under
`if not any([t.requires_grad for t in (x, y)])`: when neither x nor y requires grad; otherwise `y + x`.
palm.py imports tqdm, beartype and the package's attention/LoRA modules (tqdm is not here): LayerNorm and
Residual are compiled alone from the shipped file; the block is a stand-in with the same first step
(the file's LayerNorm, then a Linear). Path: training, parameters requiring grad (y requires grad: `y + x`),
backward runs; frozen parameters and x without grad (the add_ arm): no graph, runs (backward of nothing; the
driver checks y.grad_fn is None). Control: the guard removed (line 62 as `if True:`), x a non-leaf requiring
grad: raises (layer_norm's saved input modified). False: the write runs only when no tensor involved requires
grad, so no graph holds x."""

import _shim  # noqa: F401
import linecache
import os

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn import Module
from _check import attempt
from _prec51b import PK, compile_alone

SRC = os.path.join(PK, "palm_rlhf_pytorch/palm.py")
assert "return x.add_(y)" in linecache.getline(SRC, 63)
assert "if not any([t.requires_grad for t in (x, y)]):" in linecache.getline(SRC, 62)
FINDING = "palm_rlhf_pytorch/palm.py:63:IPF103"


def block(ns, dim):
    return nn.Sequential(ns["LayerNorm"](dim), nn.Linear(dim, dim))


def run(guard, frozen=False):
    def go():
        ns = compile_alone(SRC, {"LayerNorm", "Residual"}, {"torch": torch, "nn": nn, "F": F, "Module": Module},
                           replace=None if guard else {62: "if True:\n    return x.add_(y)"})
        torch.manual_seed(0)
        res = ns["Residual"](block(ns, 8))
        if frozen:
            res.requires_grad_(False)
            x = torch.randn(2, 3, 8)
            out = res(x)
            assert out.grad_fn is None
            return
        x = torch.randn(2, 3, 8, requires_grad=True)
        res(x * 1.0).sum().backward()
    return go


attempt(FINDING, "path", "Residual(LayerNorm+Linear) in training, parameters and input requiring grad, backward",
        run(True))
attempt(FINDING, "path", "frozen parameters, input without grad (the add_ arm): no graph", run(True, frozen=True))
attempt(FINDING, "control", "the guard removed: add_ with x (saved by layer_norm) requiring grad, backward",
        run(False))
