"""deepchem 2.8.0 (utils/differentiation_utils/solve.py:836, :838, :1122; `gmres` and `safedenom`): the proven
findings of `inplacefix check` on main f57423a (stop 52, fresh52b). `gmres` keeps its Krylov basis in a
preallocated `q`; `dot(q[j], y)` (an einsum, line 831) saves the view `q[j]`, and lines 836/838 write
`q[k + 1]`. `safedenom` (line 1122, `r[r == 0] = eps`) writes the output of `r.norm(...)` that its caller
passes at line 821; norm saves its output. The functions are compiled alone from the shipped files (solve.py's
and bcast.py's; deepchem's package imports scipy, rdkit-era modules, none needed): the linear operator is a
stand-in with `mm`/`rmm` over a dense matrix. Right-hand sides requiring grad (solve's own custom Function runs
gmres on B under its autograd.Function forward, without a graph: the context scenario) raise: real by this
file's convention.

Isolation: gmres also writes `h`, which line 832's product saves (a miss: not reported), so every scenario
reads `h` through `.clone()` at lines 832, 836 and 845. :836 is run with :838 skipped (with no batch
dimensions :838 is an identity reshape), and :838 with :836 written through `q.data` (the same values, without a
version bump; skipping it leaves q[k + 1] zero and lstsq degenerate). :1122 is run with :836 out of place and :838 skipped."""

import _shim  # noqa: F401
import linecache
import warnings

import torch
from _check import attempt
from _fresh52b import compile_alone, src

SRC = src("deepchem/utils/differentiation_utils/solve.py")
BCAST = src("deepchem/utils/differentiation_utils/bcast.py")
assert linecache.getline(SRC, 836).strip() == "q[k + 1] = y.reshape(-1, nr, ncols) / h[..., k + 1, k].reshape("
assert linecache.getline(SRC, 838).strip() == "q[k + 1] = q[k + 1].reshape(*batchdims, nr, ncols)"
assert linecache.getline(SRC, 1122).strip() == "r[r == 0] = eps"


class Op:
    """Stand-in for deepchem's MatrixLinearOperator: A.mm(x) = A @ x."""

    def __init__(self, m):
        self.m, self.shape, self.dtype, self.device = m, m.shape, m.dtype, m.device

    def mm(self, x):
        return self.m @ x

    def rmm(self, x):
        return self.m.transpose(-2, -1) @ x


H_CLONED = {
    832: "y = y - h[..., j, k].clone().reshape(*batchdims, 1, ncols) * q[j]",
    845: "rk = torch.linalg.lstsq(h[..., :k + 1, :k].clone(), b)[0]",
}
Q836 = "q[k + 1] = y.reshape(-1, nr, ncols) / h[..., k + 1, k].clone().reshape(-1, 1, ncols)"
Q836_OUT = ("q = q.index_put((torch.tensor([k + 1]),), y.reshape(-1, nr, ncols) / "
            "h[..., k + 1, k].clone().reshape(-1, 1, ncols))")
Q836_DATA = ("q.data[k + 1] = (y.reshape(-1, nr, ncols) / "
             "h[..., k + 1, k].clone().reshape(-1, 1, ncols)).detach()")  # same values, no version bump
SAFE_OUT = "r = r.masked_fill(r == 0, eps)"


def run(replace, max_niter=3, grad=True):
    def go():
        ns = {"torch": torch, "warnings": warnings, "ConvergenceWarning": UserWarning}
        compile_alone(BCAST, {"get_bcasted_dims", "normalize_bcast_dims"}, ns)
        compile_alone(SRC, {"gmres", "get_batchdims", "setup_linear_problem", "safedenom", "dot",
                                "get_largest_eival"}, ns,
                      replace=replace)
        torch.manual_seed(0)
        a = torch.randn(3, 3, dtype=torch.float64) + 4 * torch.eye(3, dtype=torch.float64)
        b = torch.randn(3, 2, dtype=torch.float64, requires_grad=grad)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = ns["gmres"](Op(a), b, max_niter=max_niter)
        if grad:
            x.pow(2).sum().backward()
    return go


F836 = "deepchem/utils/differentiation_utils/solve.py:836:IPF104"
F838 = "deepchem/utils/differentiation_utils/solve.py:838:IPF104"
F1122 = "deepchem/utils/differentiation_utils/solve.py:1122:IPF104"
SAFE = {1122: SAFE_OUT}
attempt(F836, "path", "gmres on B requiring grad (3x3, max_niter=3), :838 skipped, backward from the solution",
        run({**H_CLONED, **SAFE, 836: Q836, 838: "pass"}))
attempt(F836, "control", "as path, :836 out of place (`q = q.index_put(...)`)",
        run({**H_CLONED, **SAFE, 836: Q836_OUT, 838: "pass"}))
attempt(F838, "path", "gmres on B requiring grad, :836 written through `q.data` (same values, no version bump), "
        "backward from the solution", run({**H_CLONED, **SAFE, 836: Q836_DATA}))
attempt(F838, "control", "as path, :838 skipped too (an identity reshape here)",
        run({**H_CLONED, **SAFE, 836: Q836_DATA, 838: "pass"}))
attempt(F1122, "path", "gmres on B requiring grad, :836 out of place and :838 skipped, safedenom as shipped",
        run({**H_CLONED, 836: Q836_OUT, 838: "pass"}))
attempt(F1122, "control", "as path, :1122 as `r = r.masked_fill(r == 0, eps)`",
        run({**H_CLONED, **SAFE, 836: Q836_OUT, 838: "pass"}))
attempt(F836, "context", "gmres on B without grad (solve_torchfcn's forward), as shipped: runs", run({}, grad=False))
