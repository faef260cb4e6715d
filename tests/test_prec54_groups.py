"""Stop 54 (prec54): two false groups of the proven tier that fresh53b found in adv-lib
(bench/hazard_checks24/prec53b_probes.py), each a program that runs backward without the in-place
error and must not be proven, beside look-alikes that raise and stay proven:

- consumed-graph (adv-lib pdgd, str_attack): a product saves ``lam``; ``grad(loss.sum(), r)``
  (or a ``backward`` with ``inputs=``) takes its gradient before the write, on every path, and
  nothing else holds what the product made: every backward through the saved node runs before
  the write (a new graph is built on the next turn). ``retain_graph``/``create_graph``/``**kw``,
  the write before the consume, a consume that only some paths run, or the loss kept elsewhere
  keep the proof;
- comparison-only-saver (adv-lib fab projections): ``(d * w).sum(1).add_(c) > 0`` (or
  ``torch.gt``, ``.lt()``): the product's value ends in a bool; the in-place ``add_`` writes the
  product's own temporary, which nothing holds. The product's value also returned keeps it.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402

# ---------------------------------------------------------------- consumed-graph
ATTACK = '''\
import torch
from torch import nn
from torch.autograd import grad


def attack(model, inputs, steps=3):
    r = torch.zeros_like(inputs, requires_grad=True)
    lam = torch.zeros(len(inputs), 2).softmax(dim=1)
    kept = []
    for i in range(steps):
        l2 = r.flatten(1).norm(p=2, dim=1)
        loss = lam[:, 0] * l2 + lam[:, 1] * model(inputs + r).sum(1)
BODY
    return r.detach() + sum(kept)


def main():
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    return attack(model, torch.rand(2, 4))
'''

WRITE = "        lam.lerp_(torch.ones(len(inputs), 2) / 2, weight=0.1)  # MARK\n"
STEP = "        r.data.add_(g, alpha=-0.1)\n"

CONSUMED = [
    "        g = grad(loss.sum(), inputs=r, only_inputs=True)[0]\n" + STEP + WRITE,
    "        g, = torch.autograd.grad(loss.sum(), [r])\n" + STEP + WRITE,
    "        total = loss.sum() * 2\n        g = grad(total, r, allow_unused=True)[0]\n" + STEP + WRITE,
    "        loss.sum().backward(inputs=[r])\n        g = r.grad\n" + STEP + WRITE,
    "        g = grad(loss.sum(), r)[0]\n" + STEP + "        if i > 0:\n    " + WRITE,
]

KEPT = [
    WRITE + "        g = grad(loss.sum(), inputs=r)[0]\n" + STEP,  # the write before the consume
    "        g = grad(loss.sum(), r, retain_graph=True)[0]\n" + STEP + WRITE + "        loss.sum().backward()\n",
    "        g = grad(loss.pow(2).sum(), r, create_graph=True)[0]\n" + WRITE + "        kept.append(g.sum())\n",
    "        opts = dict(create_graph=True)\n        g = grad(loss.pow(2).sum(), r, **opts)[0]\n" + WRITE
    + "        kept.append(g.sum())\n",
    "        kept.append(loss.sum())\n        g = grad(loss.sum(), r, retain_graph=True)[0]\n" + STEP + WRITE,
    "        if i % 2:\n            g = grad(loss.sum(), r)[0]\n" + WRITE
    + "        if not i % 2:\n            g = grad(loss.sum(), r)[0]\n",  # some turns consume after the write
]


def _kept_backward(source: str) -> str:
    """The sum of what the loop kept is backpropagated after the loop (where it is a tensor)."""
    return source.replace("    return r.detach() + sum(kept)\n",
                          "    if kept:\n        sum(kept).backward()\n    return r.detach()\n")


@pytest.mark.parametrize("body", CONSUMED)
def test_a_graph_consumed_before_the_write_is_not_proven(body):
    _safe(ATTACK.replace("BODY\n", body))


@pytest.mark.parametrize("body", KEPT)
def test_a_graph_kept_or_consumed_after_the_write_raises_and_stays_proven(body):
    _real(_kept_backward(ATTACK.replace("BODY\n", body)))


# ---------------------------------------------------------------- comparison-only-saver
SPLIT = '''\
import torch


def split(d, w, c):
    TEST
    d[c3] = 0  # MARK
    return d + EXTRA


def main():
    g = torch.Generator().manual_seed(0)
    d = torch.rand(6, 5, generator=g, requires_grad=True)
    w = torch.randn(6, 5, generator=g, requires_grad=True)
    c = torch.randn(6, generator=g)
    split(d * 1.0, w * 1.0, c).sum().backward()
    return w.grad
'''

COMPARED = [
    "c3 = (d * w).sum(dim=1).add_(c) > 0",
    "c3 = torch.gt((d * w).sum(dim=1), c)",
    "c3 = (d * w).sum(dim=1).sub_(c).lt(0)",
    "s = (d * w).sum(dim=1).add_(c)\n    c3 = (s > 0) & torch.le(s, 2)",
]

RETURNED = [
    "s = (d * w).sum(dim=1).add_(c)\n    c3 = s > 0",
    "p = d * w\n    c3 = p.sum(dim=1).add_(c) > 0",
]


@pytest.mark.parametrize("test", COMPARED)
def test_a_product_only_compared_is_not_proven(test):
    _safe(SPLIT.replace("TEST", test).replace("EXTRA", "0"))


@pytest.mark.parametrize("test", RETURNED)
def test_a_product_also_returned_raises_and_stays_proven(test):
    extra = "s.unsqueeze(1)" if test.startswith("s =") else "p"
    _real(SPLIT.replace("TEST", test).replace("EXTRA", extra))
