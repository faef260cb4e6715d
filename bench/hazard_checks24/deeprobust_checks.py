"""deeprobust (graph): the two proven findings of `inplacefix check` on main d1b4fd6 (stop 51, prec51b).
deeprobust's imports (scipy, sklearn, torch_geometric...) are not all met: the flagged functions are compiled
alone from the shipped files (AdaptiveMessagePassing.proximal_L21 extracted from its class and run with a dummy
self: it reads nothing of self).

- graph/utils.py:345 IPF104: `classification_margin(output, true_label)`: `probs = torch.exp(output)` (line 343,
  exp saves its output), `probs[true_label] = 0`, then `return (probs_true_label - probs[probs.argmax()]).item()`:
  the only thing that leaves is a Python float, so exp's backward can never run. Path: output (log-probs of
  a Linear requiring grad): returns a float; backward from the Linear's own loss runs. Control: the function with
  its last line returning the tensor (no `.item()`), backward: raises. False.
- graph/defense_pyg/airgnn.py:168 IPF104: `proximal_L21(x, lambda_)`: `score = torch.clamp(row_norm - lambda_,
  min=0)`, `index = torch.where(row_norm > 0)`, `score[index] = score[index] / row_norm[index]`. The division
  saves `score[index]`, an advanced-index copy (index is a tuple of index tensors), not score; clamp saves its
  input. Path: x requiring grad (a row of zeros too), backward through the result: runs. Control: a basic slice
  in place of the index (`score[1:] = score[1:] / row_norm[1:]`, a view that the division saves): raises.
  False (AirGNN's own training runs it with grad on, and runs)."""

import _shim  # noqa: F401
import ast
import linecache
import os

import torch
import torch.nn.functional as F
from torch import nn
from _check import attempt
from _prec51b import PK2, compile_alone

UT = os.path.join(PK2, "deeprobust/graph/utils.py")
AIR = os.path.join(PK2, "deeprobust/graph/defense_pyg/airgnn.py")
assert "probs[true_label] = 0" in linecache.getline(UT, 345)
assert "score[index] = score[index] / row_norm[index]" in linecache.getline(AIR, 168)


def margin(control):
    def go():
        ns = compile_alone(UT, {"classification_margin"}, {"torch": torch}, replace={
            347: "return probs_true_label - probs_best_second_class"} if control else None)
        torch.manual_seed(0)
        lin = nn.Linear(4, 3)
        out = F.log_softmax(lin(torch.randn(4)), dim=-1)
        m = ns["classification_margin"](out, 1)
        if control:
            m.backward()
        else:
            assert isinstance(m, float)
            out.sum().backward()
    return go


def proximal(control):
    def go():
        tree = ast.parse(open(AIR).read(), AIR)
        fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "proximal_L21")
        if control:
            fn.body[3] = ast.copy_location(ast.parse("score[1:] = score[1:] / row_norm[1:]").body[0], fn.body[3])
            ast.fix_missing_locations(fn)
        ns = {"torch": torch, "Tensor": torch.Tensor}
        exec(compile(ast.Module(body=[fn], type_ignores=[]), AIR, "exec"), ns)
        torch.manual_seed(0)
        x = torch.randn(4, 3, requires_grad=True)
        xx = x * torch.tensor([[1.0], [0.0], [1.0], [1.0]])
        ns["proximal_L21"](None, xx, 0.1).sum().backward()
    return go


attempt("deeprobust/graph/utils.py:345:IPF104", "path",
        "classification_margin(log-probs of a Linear requiring grad, 1): a float; backward of the output", margin(False))
attempt("deeprobust/graph/utils.py:345:IPF104", "control",
        "the same returning the tensor (no .item()), backward", margin(True))
attempt("deeprobust/graph/defense_pyg/airgnn.py:168:IPF104", "path",
        "proximal_L21(x requiring grad with a zero row, 0.1), backward", proximal(False))
attempt("deeprobust/graph/defense_pyg/airgnn.py:168:IPF104", "control",
        "a basic slice in place of the index (score[1:] = score[1:] / row_norm[1:])", proximal(True))
