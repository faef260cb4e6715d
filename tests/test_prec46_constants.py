"""Constants the analysis did not see (stop 46: torch-harmonics 0.9.3, three false proven IPF104
findings; labels by running in bench/hazard_checks24/torch_harmonics_checks.py).

- A Python number from the ``math`` module: ``lobatto_weights`` (quadrature.py:430, :434) fills
  ``tlg = torch.zeros(n)`` with ``-math.cos(...)`` and runs a Newton loop where ``tlg * vdm[:, n - 1]``
  was taken to save a column of ``vdm`` (written on the next turn) for ``tlg``'s gradient. ``math``'s
  functions return Python numbers (a tensor handed to ``math.cos`` becomes a float: no grad), except
  ``math.prod``/``math.sumprod``, which multiply what they are handed (a tensor stays one).
- A registered buffer: ``ShallowWaterSolver.timestep`` (shallow_water_equations.py:313) writes
  ``uspec[1:] = self.hyperdiff * uspec[1:]``, where ``self.hyperdiff`` is registered with
  ``register_buffer``: ``*`` saves ``uspec[1:]`` only for the buffer's gradient, and a buffer is
  state, not trained. Possible, not proven (a buffer can be handed a tensor that requires grad;
  one registered from constants is read as such, as the class's other constant attributes are).

Programs written from the pattern, each run with torch: the probes run backward and are not proven;
the look-alikes (the loop seeded from a tensor that requires grad, ``math.prod`` of one, a
parameter where the buffer was) raise the in-place error and stay proven."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace  # noqa: E402

SAVED = "modified by an inplace operation"

NEWTON = '''\
import math
import torch


def nodes(n, tol=1e-12, maxiter=50):
    t = torch.zeros((n,), dtype=torch.float64, requires_grad=False)
    v = torch.zeros((n, n), dtype=torch.float64, requires_grad=False)
    for i in range(n):
        t[i] = -math.cos(math.pi * i / (n - 1))
    for _ in range(maxiter):
        old = t
        v[:, 0] = 1.0
        v[:, 1] = t
        for k in range(2, n):
            v[:, k] = ((2 * k - 1) * t * v[:, k - 1] - (k - 1) * v[:, k - 2]) / k
        t = old - (t * v[:, n - 1] - v[:, n - 2]) / (n * v[:, n - 1])
        if max(abs(t - old).flatten()) < tol:
            break
    w = 2.0 / ((n * (n - 1)) * (v[:, n - 1] ** 2))
    return t, w


def main():
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    t, w = nodes(6)
    (x * t * w).sum().backward()
    return x.grad
'''

MATH_FILL = '''\
import math
import torch


def main():
    x = torch.randn(4, requires_grad=True)
    z = x + 1.0
    w = torch.ones(4)
    w[0] = math.sqrt(2.0) * math.exp(-1.0)
    y = w * z
    z[1] = math.log(3.0)
    y.sum().backward()
    return x.grad
'''

BUFFER = '''\
import torch
from torch import nn


class Solver(nn.Module):
    def __init__(self, n):
        super().__init__()
        decay = torch.exp(-torch.arange(n, dtype=torch.float64))
        self.register_buffer("decay", decay)

    def step(self, state, nsteps):
        for _ in range(nsteps):
            state = state + 0.1 * torch.sin(state)
            state[1:] = self.decay[1:] * state[1:]
        return state


def main():
    solver = Solver(5)
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    solver.step(x, 3).sum().backward()
    return x.grad
'''

# torch-harmonics' own form: the buffer is computed from what the constructor is handed, which the
# analysis cannot show constant (a caller could hand a tensor that requires grad)
HANDED_BUFFER = BUFFER.replace("def __init__(self, n):", "def __init__(self, n, rate):") \
    .replace("decay = torch.exp(-torch.arange(n, dtype=torch.float64))",
             "decay = torch.exp(-torch.as_tensor(rate) * torch.arange(n, dtype=torch.float64))") \
    .replace("solver = Solver(5)", "solver = Solver(5, 0.5)")

PROBES = {"newton_loop": NEWTON, "math_fill": MATH_FILL, "buffer": BUFFER, "buffer_from_argument": HANDED_BUFFER}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_what_nothing_makes_require_grad_is_not_proven_saved(name):
    source = PROBES[name]
    assert not raises_inplace(source, "main", SAVED)
    assert proven(source) == []


SEEDED = NEWTON.replace("def nodes(n, tol=1e-12, maxiter=50):", "def nodes(n, seed, tol=1e-12, maxiter=50):") \
    .replace("        t[i] = -math.cos(math.pi * i / (n - 1))", "        t[i] = -math.cos(math.pi * i / (n - 1)) * seed") \
    .replace("    t, w = nodes(6)", "    t, w = nodes(6, x[0])")

PRODUCT = MATH_FILL.replace("w[0] = math.sqrt(2.0) * math.exp(-1.0)", "w[0] = math.prod([x[0], x[1]])")

PARAMETER = BUFFER.replace('self.register_buffer("decay", decay)', "self.decay = nn.Parameter(decay)")

LOOK_ALIKES = {"seeded_from_grad": SEEDED, "math_prod_of_a_tensor": PRODUCT, "parameter": PARAMETER}


@pytest.mark.parametrize("name", sorted(LOOK_ALIKES))
def test_look_alikes_that_raise_stay_proven(name):
    source = LOOK_ALIKES[name]
    assert raises_inplace(source, "main", SAVED)
    assert proven(source) != []
