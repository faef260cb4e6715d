"""Stop 53 (prec53b): three false groups of the proven tier that fresh53 found on never-measured
code (bench/hazard_checks24/prec53_probes.py), each a program that runs backward without the
in-place error and must not be proven, beside look-alikes that raise and stay proven:

- no-grad-helper-unseen (bert-score, mergekit): the tensor written is what a helper computes
  with grad off (``with torch.no_grad(): return model(x)``), reached through a closure
  (``def do_it(t): return helper(model, t)``) or returned from inside the ``with`` block: a new
  tensor that requires no grad, wherever the helper is;
- numpy-call-operand (cellseg-models-pytorch): ``m + np.sqrt(2)`` adds a NumPy value computed
  from constants, which never requires grad;
- non-differentiable-sink (torch-pointcloud, torchref): the written tensor leaves only through
  ``float(...)`` or an ``argmin`` after an index or a ``masked_fill``: backward never reaches it.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")



from tests.programs import marked as _marked, proven_lines as _proven_lines  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- no-grad-helper-unseen
HELPER = '''\
import torch
from torch import nn


def _embed(model, x):
    with torch.no_grad():
        out = model(x)
    return out


def _embed_inside(model, x):
    with torch.no_grad():
        return model(x)


def scores(model, x):
    CALL
    emb.div_(torch.norm(emb, dim=-1).unsqueeze(-1))  # MARK
    return emb


def main():
    model, x = nn.Linear(3, 4), torch.randn(2, 3, requires_grad=True)
    emb = scores(model, x)
    ((emb * 2).sum() + x.sum()).backward()
    return x.grad
'''

NO_GRAD_CALLS = [
    "emb = _embed_inside(model, x)",
    "def do_it(t):\n        return _embed(model, t)\n\n    emb = do_it(x)",
    "def do_it(t):\n        return _embed_inside(model, t)\n\n    emb = do_it(x)",
    "do_it = None\n    if x.dim() == 2:\n        def do_it(t):\n            return _embed(model, t)\n    else:\n"
    "        def do_it(t):\n            return _embed_inside(model, t)\n    emb = do_it(x)",
    "def do_it(t):\n        with torch.no_grad():\n            return model(t) * 2\n\n    emb = do_it(x)",
]

GRAD_CALLS = [
    "emb = model(x)",
    "def do_it(t):\n        return model(t)\n\n    emb = do_it(x)",
    "def do_it(t):\n        with torch.no_grad():\n            y = model(t)\n        return y * t[:, :1]\n\n    emb = do_it(x)",
    "do_it = None\n    if x.dim() == 2:\n        def do_it(t):\n            return model(t)\n    else:\n"
    "        def do_it(t):\n            return _embed(model, t)\n    emb = do_it(x)",
    "def do_it(t):\n        with torch.no_grad():\n            return t.float()\n\n    emb = do_it(x) * 1",
    "def do_it(t):\n        with torch.no_grad():\n            return t.view(2, 3)\n\n    emb = do_it(x) * 1",
]


@pytest.mark.parametrize("call", NO_GRAD_CALLS)
def test_what_a_helper_returns_from_grad_off_is_not_proven(call):
    _safe(HELPER.replace("CALL", call))


@pytest.mark.parametrize("call", GRAD_CALLS)
def test_what_a_helper_returns_with_grad_raises_and_stays_proven(call):
    _real(HELPER.replace("CALL", call))


# ---------------------------------------------------------------- numpy-call-operand
SHIFTED = '''\
import numpy as np
import torch


def smooth(n, w):
    t = torch.zeros(5, dtype=torch.double)
    for _ in range(n):
        m = torch.minimum(t[1:4], t[0:3])
        a = m + SHIFT
        t[1:4] = torch.sqrt(a)  # MARK
    return t * w


def main():
    w = torch.ones(5, dtype=torch.double, requires_grad=True)
    smooth(3, w).sum().backward()
    return w.grad
'''

NUMPY_SHIFTS = ["np.sqrt(2)", "np.float64(1.5) * np.pi", "np.log(np.array([2.0, 3.0, 4.0]))"]
GRAD_SHIFTS = ["w[0]", "np.sqrt(2) * w[0]"]


@pytest.mark.parametrize("shift", NUMPY_SHIFTS)
def test_a_numpy_value_of_constants_is_not_proven(shift):
    _safe(SHIFTED.replace("SHIFT", shift))


@pytest.mark.parametrize("shift", GRAD_SHIFTS)
def test_a_shift_requiring_grad_raises_and_stays_proven(shift):
    _real(SHIFTED.replace("SHIFT", shift))


# ---------------------------------------------------------------- non-differentiable-sink
SINK = '''\
import torch


def spacing(center):
    dist = torch.cdist(center, center)
    dist.fill_diagonal_(float("inf"))  # MARK
    USE
    return out


def main():
    center = torch.randn(4, 3, requires_grad=True)
    out = spacing(center)
    (center.sum() + torch.as_tensor(out).float().sum()).backward()
    return center.grad
'''

NO_HISTORY_USES = [
    "out = float(dist.min(dim=1).values.median())",
    "out = dist[0].argmin(dim=-1)",
    "out = dist[1:, :2].min(dim=-1).values.argmax()",
    "row = dist[0].masked_fill(dist[0] > 5, float('inf'))\n    out = row.argmin(dim=-1)",
    "out = int(dist[1:].sum() > 3)",
    "out = dist.min(dim=1).values.median().item()",
    "out = dist.clamp(max=10.0)[0].argsort()",
]

HISTORY_USES = [
    "out = dist[0]",
    "out = dist.min(dim=1).values.median()",
    "row = dist[0].masked_fill(dist[0] > 5, 0.0)\n    out = row.argmin(dim=-1) + row.sum()",
    "out = dist[0].float()",
    "out = dist[0].masked_fill(dist[0] > 5, 0.0).argmin() + dist[1].sum()",
]


@pytest.mark.parametrize("use", NO_HISTORY_USES)
def test_a_chain_ending_where_backward_never_passes_is_not_proven(use):
    _safe(SINK.replace("USE", use))


@pytest.mark.parametrize("use", HISTORY_USES)
def test_a_chain_whose_value_carries_history_raises_and_stays_proven(use):
    _real(SINK.replace("USE", use))


LEAF_SINK = '''\
import torch


def main():
    h = torch.zeros(2, 3, requires_grad=True)
    h.mul_(0.5)  # MARK
    return USE
'''


@pytest.mark.parametrize("use", ["h.argmax()", "h.sum().item()", "float(h[0].sum())"])
def test_a_leaf_written_stays_proven_whatever_its_value_reaches(use):
    """A leaf that requires grad is refused the write itself: where its value goes decides nothing
    (the sinks above are no excuse; sound34c's `print(h.sum().item())`)."""
    _real(LEAF_SINK.replace("USE", use), message="leaf Variable")
