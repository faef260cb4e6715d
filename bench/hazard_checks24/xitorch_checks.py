"""xitorch 0.5.1 (xitorch/_impls/linalg/solve.py:397, :398 `gmres`, :438 `_safedenom`): the proven findings of
`inplacefix check` (stop 57, fresh57, end of stop). GMRES keeps its Krylov basis in one tensor q: each step takes
`_dot(q[j], y)` (an einsum that saves the row view q[j]) and then writes the next row, `q[k + 1] = y... / h...` (:397)
and `q[k + 1] = q[k + 1].reshape(...)` (:398), bumping q's version. `_safedenom(r, eps)` writes `r[r == 0] = eps`
(:438) into its argument, which gmres hands as `r.norm(dim=-2, keepdim=True)` (:385): norm saves its output. With a
matrix that requires grad, backward of the solution raises at each line. Real by this file's convention: xitorch's
public `solve` runs gmres inside `solve_torchfcn.forward` (a custom Function, no grad there) and differentiates
implicitly; the implementation called directly with grad on raises. Each line is isolated: the other q row writes
and the Hessenberg writes of h (whose slices the products and lstsq save: they raise on their own, unflagged) on a
fresh copy (`v = ...; q = q.clone(); q[...] = v`; for :398, :397 through `q.data`, so that :398 writes the q that
the einsums saved, as shipped), `_safedenom` out of place (torch.where) except for :438; the
control has all of them so. gmres and its helpers are compiled alone from the shipped file (scipy is not
installed), with a dense LinearOperator stand-in (mm, rmm, shape, dtype, device) and torch.broadcast_shapes for
get_bcasted_dims; posdef=True (no eigenvalue estimate)."""

import _shim  # noqa: F401
import linecache
import types
import warnings

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("xitorch/_impls/linalg/solve.py")
for n, text in ((385, "q[0] = r / _safedenom("), (392, "h[..., j, k] = _dot(q[j], y)"), (395, "h[..., k + 1, k] = "),
                (397, "q[k + 1] = y.reshape("), (398, "q[k + 1] = q[k + 1].reshape("), (438, "r[r == 0] = eps")):
    assert linecache.getline(PATH, n).strip().startswith(text), n
FRESH = {392: "v = _dot(q[j], y).reshape(-1, ncols); h = h.clone(); h[..., j, k] = v",
         395: "v = torch.linalg.norm(y, dim=-2); h = h.clone(); h[..., k + 1, k] = v",
         397: "v = y.reshape(-1, nr, ncols) / h[..., k + 1, k].reshape(-1, 1, ncols); q = q.clone(); q[k + 1] = v",
         398: "v = q[k + 1].reshape(*batchdims, nr, ncols); q = q.clone(); q[k + 1] = v",
         438: "r = torch.where(r == 0, torch.full_like(r, eps), r)"}


class Dense:
    """LinearOperator stand-in: a dense matrix."""

    def __init__(self, m):
        self.m, self.shape, self.dtype, self.device, self.is_hermitian = m, m.shape, m.dtype, m.device, False

    def mm(self, x):
        return self.m @ x

    def rmm(self, x):
        return self.m.transpose(-2, -1) @ x


DATA_397 = "q.data[k + 1] = (y.reshape(-1, nr, ncols) / h[..., k + 1, k].reshape(-1, 1, ncols)).detach()"


def run(shipped, keep=()):
    replace = {n: code for n, code in FRESH.items() if n != shipped and n not in keep}
    if shipped == 398:  # :398 writes back the row :397 wrote into the same q: :397 through .data (no version bump)
        replace[397] = DATA_397
    ns = compile_alone(PATH, {"gmres", "_safedenom", "_dot", "_get_batchdims", "_setup_linear_problem"},
                       {"torch": torch, "warnings": warnings, "LinearOperator": Dense,
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


for n, what in ((397, "the next basis row spoils the row views `_dot(q[j], y)` saved"),
                (398, "(:397 through .data, the same q kept) the reshaped row written back spoils the same"),
                (438, "`r[r == 0] = eps` writes the norm's saved output")):
    fid = f"xitorch/_impls/linalg/solve.py:{n}:IPF104"
    attempt(fid, "path", f"gmres(A, B, posdef=True) on a 5x5 matrix that requires grad, :{n} as shipped, the other "
            f"writes on fresh copies / out of place: {what}, backward of the solution raises", run(n))
    attempt(fid, "control", "all of them on fresh copies / out of place: runs", run(None))
attempt("xitorch/_impls/linalg/solve.py:397:IPF104", "context", "the Hessenberg writes of h (:392, :395) as shipped, "
        "the q writes on fresh copies and _safedenom out of place: they write the h whose slices the products and "
        "lstsq saved (unflagged: a miss if it raises)", run(None, keep=(392, 395)))
