"""composer 0.32.1 (algorithms/factorize/factorize_core.py:81, :82, `_svd_initialize`): the proven findings of
`inplacefix check` on main 7911fb7 (stop 53, fresh53). `U, s, Vt = torch.linalg.svd(W)` (svd saves U and Vt),
`Wa_svd = U[:, :k]`, `Wb_svd = Vt[:k]` (views), then `Wa_svd *= s_sqrt` (:81) and `Wb_svd *= ...` (:82) write
them. _svd_initialize is compiled alone from the shipped file. A weight requiring grad raises: real by this
file's convention (factorize_matrix is called by the Factorize algorithm under torch.no_grad(),
factorize_modules.py:97). Each line is run with the other out of place."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

SRC = src("composer/algorithms/factorize/factorize_core.py")
assert linecache.getline(SRC, 81).strip() == "Wa_svd *= s_sqrt"
assert linecache.getline(SRC, 82).strip() == "Wb_svd *= s_sqrt.reshape(-1, 1)"
OUT81, OUT82 = "Wa_svd = Wa_svd * s_sqrt", "Wb_svd = Wb_svd * s_sqrt.reshape(-1, 1)"


def run(replace, grad=True, wb=True):
    def go():
        ns = compile_alone(SRC, {"_svd_initialize"}, {"torch": torch}, replace=replace)
        torch.manual_seed(0)
        wa = torch.randn(6, 5, requires_grad=grad)
        b = torch.randn(5, 4, requires_grad=grad) if wb else None
        a, b = ns["_svd_initialize"](wa, b, 2)
        if grad:
            (a.sum() + b.sum()).backward()
    return go


F81 = "composer/algorithms/factorize/factorize_core.py:81:IPF101"
F82 = "composer/algorithms/factorize/factorize_core.py:82:IPF101"
attempt(F81, "path", "Wa and Wb requiring grad, :82 out of place, backward from both factors", run({82: OUT82}))
attempt(F81, "path", "Wa alone (Wb None), :82 out of place", run({82: OUT82}, wb=False))
attempt(F81, "control", ":81 and :82 out of place", run({81: OUT81, 82: OUT82}))
attempt(F82, "path", "Wa and Wb requiring grad, :81 out of place, :82 as shipped", run({81: OUT81}))
attempt(F82, "control", ":81 and :82 out of place", run({81: OUT81, 82: OUT82}))
attempt(F81, "context", "weights without grad (Factorize runs it under no_grad), as shipped", run({}, grad=False))
