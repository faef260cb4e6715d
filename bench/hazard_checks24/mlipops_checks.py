"""mlipops 0.6.0 (mlipops/coulombpme.py:365, 367, 368, 372, 374, 375 `compute_spline_coefficients`): the proven
findings of `inplacefix check` (stop 55, fresh55, end of stop). The PME B-spline recursion fills `data` row by row,
each row computed from others: `dr*data[j-2]` (and `(dr+k)*data[j-k-2]`, `(j-k-dr)*data[j-k-1]`, `(1-dr)*data[0]`)
saves a row of `data` for the gradient of `dr`, and the next row write bumps `data`'s version. `dr` is the fractional
grid offset of `positions`, so positions that require grad (forces by autograd) make backward raise. In the library
the energy path runs it inside `ReciprocalFunction.forward` (grad off, its own backward), while `CoulombPME`'s
potential and field paths call it with grad on: real by this file's convention (positions that require grad).
`compute_spline_coefficients` is compiled alone from the shipped file (stand-in pme: order 5, cpu); each line is
isolated by making every other row write go through `data.data` (no version bump), and its control makes it go
through `data.data` too."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("mlipops/coulombpme.py")
LINES = {
    365: "data[j-1] = dr*data[j-2]/(j-1)",
    367: "data[j-k-1] = ((dr+k)*data[j-k-2]+(j-k-dr)*data[j-k-1])/(j-1)",
    368: "data[0] = (1-dr)*data[0]/(j-1)",
    372: "data[order-1] = dr*data[order-2]/(order-1)",
    374: "data[order-j-1] = ((dr+j)*data[order-j-2]+(order-j-dr)*data[order-j-1])/(order-1)",
    375: "data[0] = (1-dr)*data[0]/(order-1)",
}
for n, text in LINES.items():
    assert linecache.getline(PATH, n).strip() == text, n


def run(shipped=(), order=5):
    replace = {n: text.replace("data[", "data.data[", 1) for n, text in LINES.items() if n not in shipped}
    ns = compile_alone(PATH, {"compute_spline_coefficients"}, {"torch": torch}, replace=replace)

    def go():
        pme = types.SimpleNamespace(xmoduli=torch.zeros(1), order=order)
        positions = (torch.rand(6, 3) * 3).requires_grad_()
        recip = torch.eye(3) / 3
        grid = torch.tensor([8, 8, 8])
        ti, dr, data, ddata = ns["compute_spline_coefficients"](pme, positions, recip, grid, None)
        ((data * torch.rand_like(data)).sum() + (ddata * torch.rand_like(ddata)).sum()).backward()
        assert positions.grad is not None
    return go


for n in LINES:
    FID = f"mlipops/coulombpme.py:{n}:IPF104"
    attempt(FID, "path", f"order 5, positions that require grad, :{n} as shipped and the other row writes through "
            "data.data, backward of the coefficients: raises", run(shipped=(n,)))
    attempt(FID, "control", f"the same with :{n} through data.data too: runs", run())
attempt("mlipops/coulombpme.py:365:IPF104", "context", "the function as shipped (order 5), positions that require "
        "grad: raises", run(shipped=tuple(LINES)))
