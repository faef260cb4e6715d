"""Stop 50 (prec50b's widest false group, ptlflow 0.4.2 ``separableflow/cost_agg.py:177/:193``): on an
``if`` arm that binds a name twice (``x = torch.sigmoid(x)`` then ``x = x @ w``), only the second
binding leaves the arm; the first was read as reaching the code after the ``if``, and an in-place
write there was proven to modify sigmoid's saved output. Look-alikes that do raise stay proven:
the arm binding once; a ``break``/``continue`` between the two bindings; a ``try`` around them.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

REBOUND = '''\
import torch


def block(x, w, refine: bool):
    if refine:
        x = torch.sigmoid(x)
        x = x @ w
    else:
        x = x * 2
    x += 1  # MARK
    return x


def main():
    w = torch.randn(4, 4, requires_grad=True)
    out = block(torch.randn(3, 4) * w.sum(), w, True) + block(torch.randn(3, 4) * w.sum(), w, False)
    out.sum().backward()
    return w.grad
'''
# the arm binds once: sigmoid's output reaches the write, which raises
ONCE = REBOUND.replace("        x = x @ w\n", "").replace("    return x\n", "    return x @ w\n")
# a `continue` between the two bindings: sigmoid's output leaves the arm on the turns that take it
JUMP = '''\
import torch


def block(xs, w):
    out = []
    for i, x in enumerate(xs):
        if True:
            x = torch.sigmoid(x)
            if i == 0:
                out.append(x)
                continue
            x = x @ w
        out.append(x)
    x += 1  # MARK
    return torch.cat(out)


def main():
    w = torch.randn(4, 4, requires_grad=True)
    block([torch.randn(3, 4) * w.sum()], w).sum().backward()
    return w.grad
'''
# a `try` around them: an exception between the two bindings leaves sigmoid's output bound
TRIED = '''\
import torch


def block(x, w):
    try:
        x = torch.sigmoid(x)
        x = x @ w
    except RuntimeError:
        pass
    x += 1  # MARK
    return x


def main():
    w = torch.randn(5, 5, requires_grad=True)
    block(torch.randn(3, 4) * w.sum(), w).sum().backward()
    return w.grad
'''


# every arm of an `if` before the write rebinds the parameter: the caller's leaf never reaches it
EVERY_ARM = '''\
import torch


def block(x, w, refine: bool):
    if refine:
        x = torch.sigmoid(x)
        x = x @ w
    elif w.sum() > 100:
        x = x - 1
    else:
        x = x * 2
    x += 1  # MARK
    return x


def main():
    w = torch.randn(4, 4, requires_grad=True)
    x = torch.randn(3, 4, requires_grad=True)
    (block(x, w, True) + block(x, w, False)).sum().backward()
    return w.grad, x.grad
'''
# one arm leaves the parameter bound (no `else`): the caller's leaf reaches the write
NO_ELSE = EVERY_ARM.replace("    else:\n        x = x * 2\n", "")


def _marked(source: str, code: str) -> set:
    return {(code, i) for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


@pytest.mark.parametrize("source", [REBOUND, EVERY_ARM], ids=["rebound-on-its-arm", "rebound-on-every-arm"])
def test_a_binding_rebound_on_the_way_does_not_reach_the_write(source):
    assert run_program(source) is not None
    assert not {line for _, line in _marked(source, "")} & {line for _, line in proven(source)}


@pytest.mark.parametrize("source", [ONCE, JUMP, TRIED, NO_ELSE],
                         ids=["bound-once", "continue-between", "try-around", "no-else"])
def test_the_look_alikes_raise_and_stay_proven(source):
    assert raises_inplace(source, message=("modified by an inplace operation", "leaf Variable that requires grad"))
    assert {line for _, line in _marked(source, "")} <= {line for _, line in proven(source)}
