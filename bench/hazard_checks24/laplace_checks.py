"""laplace-torch 0.3: the one proven finding of `inplacefix check` (eafcde2, stop 47): `symeig`
(utils/utils.py:217), in its fallback after `torch.linalg.eigh` did not converge, takes
`L, W = torch.linalg.eigh(M, UPLO="U")` on the jittered matrix and writes `L -= 1.0`: eigh saves its
eigenvalues for backward. `import laplace` needs PIL, curvlinops and more: `symeig` is compiled
from the installed file's source (its line numbers kept) with `torch` and `logging`. The first
`eigh` is made to fail (RuntimeError, as a non-converging one does) so the fallback runs; the path
has M requiring grad and runs backward from L and W; the control has line 217 out of place. The
library's Kronecker factors are usually built without grad: real by this file's convention (an
input requiring grad raises)."""

import _shim  # noqa: F401

import ast
import importlib.util
import logging
import types

import torch
from _check import attempt, expect_line

ROOT = importlib.util.find_spec("laplace").submodule_search_locations[0]
PATH = ROOT + "/utils/utils.py"
FINDING = "laplace/utils/utils.py:217:IPF101"


def compiled(edit=None):
    with open(PATH, encoding="utf-8") as handle:
        source = handle.read()
    if edit:
        assert source.count(edit[0]) == 1
        source = source.replace(*edit)
    tree = ast.parse(source, PATH)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "symeig")
    namespace = {"torch": torch, "logging": logging}
    exec(compile(ast.Module(body=[node], type_ignores=[]), PATH, "exec"), namespace)
    calls = {"n": 0}

    def eigh(M, UPLO="L"):  # the first call fails as a non-converging eigh does
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("linalg.eigh: the algorithm failed to converge")
        return torch.linalg.eigh(M, UPLO=UPLO)

    namespace["torch"] = types.SimpleNamespace(linalg=types.SimpleNamespace(eigh=eigh), eye=torch.eye,
                                               nan_to_num=torch.nan_to_num)
    return namespace["symeig"]


symeig = compiled()
expect_line(symeig, 217, "L -= 1.0")


def run(function):
    torch.manual_seed(0)
    A = torch.randn(4, 4)
    M = (A @ A.T).requires_grad_()
    L, W = function(M)
    (L.sum() + W.abs().sum()).backward()


attempt(FINDING, "path", "symeig(M requiring grad), first eigh failing, backward", lambda: run(symeig))
attempt(FINDING, "control", "line 217 out of place (`L = L - 1.0`)",
        lambda: run(compiled(("            L -= 1.0", "            L = L - 1.0"))))
