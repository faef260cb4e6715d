"""dxtb 0.4.0 (dxtb/_src/exlibs/xitorch/_impls/linalg/solve.py:529 `_safedenom`): the proven finding of `inplacefix
check` (stop 58, fresh58, end of stop). dxtb vendors xitorch's linear solvers; `_safedenom(r, eps)` writes
`r[r == 0] = eps` into its argument, and gmres hands it `r.norm(dim=-2, keepdim=True)` (:459), whose output norm
saves: with a matrix that requires grad, backward of the solution raises. The same function as xitorch's
solve.py:438 (fresh57, real by that file's convention); real by the same convention here (the vendored solve runs
gmres inside a custom Function's forward and differentiates implicitly; called directly with grad on it raises).
Isolated as fresh57 did: the q row writes and the Hessenberg writes on fresh copies; the control has `_safedenom`
out of place (torch.where) too. gmres and its helpers are compiled alone from the shipped file, with
torch.einsum for tad_mctc's einsum, a dense LinearOperator stand-in and torch.broadcast_shapes for
get_bcasted_dims; posdef=True."""

import _shim  # noqa: F401
import linecache
import warnings

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("dxtb/_src/exlibs/xitorch/_impls/linalg/solve.py")
for n, text in ((459, "q[0] = r / _safedenom("), (472, "h[..., j, k] = _dot(q[j], y)"), (475, "h[..., k + 1, k] = "),
                (477, "q[k + 1] = y.reshape("), (480, "q[k + 1] = q[k + 1].reshape("), (529, "r[r == 0] = eps")):
    assert linecache.getline(PATH, n).strip().startswith(text), n
FRESH = {472: "v = _dot(q[j], y).reshape(-1, ncols); h = h.clone(); h[..., j, k] = v",
         475: "v = torch.linalg.norm(y, dim=-2); h = h.clone(); h[..., k + 1, k] = v",
         477: "v = y.reshape(-1, nr, ncols) / h[..., k + 1, k].reshape(-1, 1, ncols); q = q.clone(); q[k + 1] = v",
         480: "v = q[k + 1].reshape(*batchdims, nr, ncols); q = q.clone(); q[k + 1] = v"}


class Dense:
    """LinearOperator stand-in: a dense matrix."""

    def __init__(self, m):
        self.m, self.shape, self.dtype, self.device, self.is_hermitian = m, m.shape, m.dtype, m.device, False

    def mm(self, x):
        return self.m @ x

    def rmm(self, x):
        return self.m.transpose(-2, -1) @ x


def run(shipped):
    replace = dict(FRESH)
    if not shipped:
        replace[529] = "r = torch.where(r == 0, torch.full_like(r, eps), r)"
    ns = compile_alone(PATH, {"gmres", "_safedenom", "_dot", "_get_batchdims", "_setup_linear_problem"},
                       {"torch": torch, "warnings": warnings, "LinearOperator": Dense, "einsum": torch.einsum,
                        "get_bcasted_dims": lambda *dims: torch.broadcast_shapes(*[torch.Size(d) for d in dims]),
                        "normalize_bcast_dims": None, "ConvergenceWarning": UserWarning}, replace=replace)

    def go():
        torch.manual_seed(0)
        m = torch.randn(5, 5, requires_grad=True)
        a = m + 5 * torch.eye(5)
        b = torch.randn(5, 2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = ns["gmres"](Dense(a), b, posdef=True)
        x.sum().backward()
        assert m.grad is not None
    return go


FID = "dxtb/_src/exlibs/xitorch/_impls/linalg/solve.py:529:IPF104"
attempt(FID, "path", "gmres(A, B, posdef=True) on a 5x5 matrix that requires grad, :529 as shipped, the q and h writes "
        "on fresh copies: `r[r == 0] = eps` writes the norm's saved output, backward of the solution raises", run(True))
attempt(FID, "control", "_safedenom out of place too: runs", run(False))
