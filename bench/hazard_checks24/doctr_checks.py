"""python-doctr 1.1.0 (models/utils/pytorch.py:463, :464; `_constrain_logits`, the forward hook that
`constrain_vocab`-style whitelisting puts on a recognition model's vocabulary projection): the proven findings of
`inplacefix check` on main f57423a (stop 52, fresh52b). The hook clones the logits, moves each forbidden
character's score onto its nearest allowed one with `output.scatter_reduce_(..., reduce="amax")` (line 463;
amax saves the values scattered and the result), then masks `output[..., ~keep] = -inf` (line 464) into the
tensor that scatter_reduce_ saved. The nested hook is compiled alone from the shipped file (ast, line numbers
kept; doctr's imports are not met here) with its default arguments `keep`, `src`, `dst` given. Logits
requiring grad (a model with grad on: fine-tuning with the whitelist hook in place) raise at :464: real. :463
runs backward fine on its own: see the rows' reasons."""

import _shim  # noqa: F401
import ast
import linecache
from typing import Any

import torch
import torch.nn as nn
from _check import attempt
from _fresh52b import src

SRC = src("doctr/models/utils/pytorch.py")
assert linecache.getline(SRC, 463).strip().startswith("output.scatter_reduce_(-1, index, values")
assert linecache.getline(SRC, 464).strip() == 'output[..., ~keep.to(output.device)] = float("-inf")'


def hook(replace):
    tree = ast.parse(open(SRC).read(), SRC)
    node = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_constrain_logits")
    for i, stmt in enumerate(node.body):
        if isinstance(stmt, ast.If):  # the `if src.numel():` block holds line 463
            for j, inner in enumerate(stmt.body):
                if inner.lineno in replace:
                    stmt.body[j] = ast.copy_location(ast.parse(replace[inner.lineno]).body[0], inner)
        elif stmt.lineno in replace:
            node.body[i] = ast.copy_location(ast.parse(replace[stmt.lineno]).body[0], stmt)
    ns = {"torch": torch, "nn": nn, "Any": Any, "keep": torch.tensor([True, True, False, True, False]),
          "src": torch.tensor([2, 4]), "dst": torch.tensor([1, 3])}
    exec(compile(ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[])), SRC, "exec"), ns)
    return ns["_constrain_logits"]


def run(replace, grad=True, loss="finite"):
    def go():
        torch.manual_seed(0)
        proj = nn.Linear(4, 5)
        proj.requires_grad_(grad)
        proj.register_forward_hook(hook(replace))
        out = proj(torch.randn(2, 3, 4))
        kept = out[..., [0, 1, 3]]
        kept.sum().backward() if grad else None
    return go


F463 = "doctr/models/utils/pytorch.py:463:IPF103"
F464 = "doctr/models/utils/pytorch.py:464:IPF104"
attempt(F464, "path", "a projection whose weights require grad, hook as shipped, backward over the kept logits", run({}))
attempt(F464, "control", "line 464 as `output = output.masked_fill(~keep, -inf)`",
        run({464: 'output = output.masked_fill(~keep.to(output.device), float("-inf"))'}))
attempt(F463, "path", "as :464's path with :464 out of place: the scatter_reduce_ of line 463 alone",
        run({464: 'output = output.masked_fill(~keep.to(output.device), float("-inf"))'}))
attempt(F463, "context", "projection without grad (inference, doctr's predictors run under inference mode): runs",
        run({}, grad=False))
