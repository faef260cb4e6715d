"""torch-harmonics 0.9.3: the three proven findings of `inplacefix check` (b47935c, stop 46).

- quadrature.py:430 and :434 (`lobatto_weights`): `vdm`, the Vandermonde matrix, is made by
  `torch.zeros(..., requires_grad=False)` and filled in a Newton loop from `tlg`, itself zeros filled
  with `-math.cos(...)`; `tlg * vdm[:, n - 1]` (line 434) is taken to save a column of `vdm`, which
  the next turn writes (lines 430, 434). Every operand is made in the function from its numbers
  (`n`, `a`, `b`): nothing requires grad, `*` saves nothing. The path runs it with grad on and
  calls backward on what needs grad downstream (the weights times a tensor requiring grad): it runs.
- examples/shallow_water_equations.py:313 (`ShallowWaterSolver.timestep`): `uspec[1:] =
  self.hyperdiff * uspec[1:]`; `self.hyperdiff` is a buffer (`register_buffer`), which requires no
  grad, so `*` does not save `uspec[1:]` (saved only for the buffer's gradient). The path steps an
  initial condition requiring grad and calls backward: it runs. The `context` scenario makes the
  buffer require grad (no library code does): then the write raises."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line
from torch_harmonics import quadrature
from torch_harmonics.examples import shallow_water_equations as swe

weights = quadrature.lobatto_weights
expect_line(weights, 430, "vdm[:, 0] = 1.0")
expect_line(weights, 434, "vdm[:, k] = ((2 * k - 1) * tlg * vdm[:, k - 1] - (k - 1) * vdm[:, k - 2]) / k")


def lobatto():
    x = torch.randn(7, dtype=torch.float64, requires_grad=True)
    tlg, wlg = weights(7)
    (x * tlg * wlg).sum().backward()


for line in (430, 434):
    attempt(f"torch_harmonics/quadrature.py:{line}:IPF104", "path",
            "lobatto_weights(7) with grad on, its nodes and weights times a tensor requiring grad, backward", lobatto)

FINDING = "torch_harmonics/quadrature.py:313:IPF104".replace("quadrature.py", "examples/shallow_water_equations.py")
expect_line(swe.ShallowWaterSolver.timestep, 313, "uspec[1:] = self.hyperdiff * uspec[1:]")


def solver_step(buffer_grad=False):
    def run():
        torch.manual_seed(0)
        solver = swe.ShallowWaterSolver(16, 32, dt=60.0)
        if buffer_grad:
            solver.hyperdiff.requires_grad_(True)
        start = solver.random_initial_condition(mach=0.1).clone().requires_grad_(True)
        solver.timestep(start, 3).abs().sum().backward()
    return run


attempt(FINDING, "path", "ShallowWaterSolver.timestep(initial condition requiring grad, 3 steps), backward", solver_step())
attempt(FINDING, "context", "hyperdiff made to require grad (no library code does)", solver_step(True))
