"""piq 0.8.0: the one proven finding of `inplacefix check` (main at e95ccd4, stop 42): `_log_gabor`
(`piq/vsi.py`) computes `lg = torch.exp(...)` (line 268; exp saves its result) and then writes
`lg[0, 0] = 0` (line 269). The path calls `_log_gabor` with meshgrid components requiring grad and
calls backward through the filter; the control the same with the write into a copy
(`lg = lg.clone(); lg[0, 0] = 0`, one line); the context how piq runs it: `vsi(x, y)` with images
requiring grad (the meshgrid is made from `torch.arange`, no grad: nothing raises)."""

import _shim  # noqa: F401
import importlib

import piq
import torch
from _check import attempt, expect_line
from _rewrite import rewritten

V = importlib.import_module("piq.vsi")  # `piq.vsi` the attribute is the function of that name
FINDING = "piq/vsi.py:269:IPF104"
expect_line(V._log_gabor, 268, "lg = torch.exp((-(r / omega_0).log().pow(2)) / (2 * sigma_f ** 2))")
expect_line(V._log_gabor, 269, "lg[0, 0] = 0")


def gabor(edits=()):
    def run():
        base = torch.stack(torch.meshgrid(torch.linspace(-0.5, 0.5, 8), torch.linspace(-0.5, 0.5, 8), indexing="ij"))
        grid = base.requires_grad_() * 1.0
        function = rewritten(V._log_gabor, edits) if edits else V._log_gabor
        function(grid[0], grid[1], 0.021, 1.34).sum().backward()
    return run


def library():
    torch.manual_seed(0)
    x = torch.rand(1, 3, 32, 32, requires_grad=True)
    piq.vsi(x, torch.rand(1, 3, 32, 32)).backward()


attempt(FINDING, "path", "_log_gabor(xx, yy, 0.021, 1.34), the meshgrid requiring grad, backward", gabor())
attempt(FINDING, "control", "the same with `lg = lg.clone(); lg[0, 0] = 0` (the write into a copy)",
        gabor([("lg[0, 0] = 0", "lg = lg.clone(); lg[0, 0] = 0")]))
attempt(FINDING, "context", "piq.vsi(x, y), x requiring grad (the meshgrid from arange: no grad), backward", library)
