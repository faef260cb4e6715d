"""bte-pytorch 0.0.1.5rc0 (bte/utils/specials.py:29 and bte/grad/distribution.py:327, `eval_hermitenorm_seq`, one
function shipped twice): the proven findings of `inplacefix check` (stop 56, fresh56, end of stop). The Hermite
recursion fills a preallocated tensor row by row: `y[j] = x*y[j-1] - (j-1)*y[j-2]`. With x that requires grad the
product saves the row y[j-1], a view of y, and the next row's write bumps y's version counter, which the view
shares, so backward raises (from n = 2 on). Real by this file's convention (points x that require grad; the library
evaluates the polynomials on its fixed velocity grid, `vm.v.cpu()`, without grad). Each copy is compiled alone
from its shipped file; the control builds each row on a fresh tensor (torch.cat)."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

OOP = "y = torch.cat([y[:j], (x*y[j-1]-(j-1)*y[j-2]).unsqueeze(0), y[j+1:]])"


def run(rel, line, control=False):
    path = src(rel)
    assert linecache.getline(path, line).strip() == "y[j]=x*y[j-1]-(j-1)*y[j-2]"
    ns = compile_alone(path, {"eval_hermitenorm_seq"}, {"torch": torch}, replace={line: OOP} if control else {})

    def go():
        x = torch.linspace(-2.0, 2.0, 7, requires_grad=True)
        ns["eval_hermitenorm_seq"](4, x).sum().backward()
        assert x.grad is not None
    return go


for rel, line in (("bte/utils/specials.py", 29), ("bte/grad/distribution.py", 327)):
    FID = f"{rel}:{line}:IPF104"
    attempt(FID, "path", "eval_hermitenorm_seq(4, x) with points x that require grad, backward: raises", run(rel, line))
    attempt(FID, "control", "the same with each row on a fresh tensor (torch.cat): runs", run(rel, line, True))
