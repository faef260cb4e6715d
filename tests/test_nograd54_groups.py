"""Stop 54 (nograd54): a result made where grad is off saves nothing (found by prec54b).

``with torch.no_grad(): y = x.exp()`` then ``y.add_(1)`` outside the block was proven (IPF103,
"the output of exp, which autograd saves"), though under ``no_grad`` the op records nothing: ``y``
has no grad_fn and requires no grad, so the write cannot raise. The same for
``torch.set_grad_enabled(False)`` and for a helper decorated ``@torch.no_grad()``. Look-alikes that
raise stay proven: the op outside the block, ``torch.enable_grad()`` inside it, a result of the
block saved by another op (``x * y`` saves ``y`` for ``x``'s gradient) that is written afterwards,
a tensor made outside the block and written after it.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402

WITH = '''\
import torch
import torch as th


def f(x):
    with CONTEXT:
        y = x.OP()
    y.add_(1)  # MARK
    return (x * y).sum()


def main():
    x = torch.randn(3, requires_grad=True)
    f(x).backward()
'''

OFF = ["th.no_grad()", "torch.no_grad()", "torch.autograd.no_grad()", "torch.set_grad_enabled(False)"]
OPS = ["exp", "sigmoid", "tanh", "softmax(0)"]


@pytest.mark.parametrize("context", OFF)
@pytest.mark.parametrize("op", OPS)
def test_an_op_under_no_grad_saves_nothing_for_a_later_write(context, op):
    _safe(WITH.replace("CONTEXT", context).replace("OP()", op if "(" in op else op + "()"))


@pytest.mark.parametrize("op", OPS)
def test_the_same_op_with_grad_on_stays_proven(op):
    src = WITH.replace("CONTEXT", "torch.enable_grad()").replace("OP()", op if "(" in op else op + "()")
    _real(src)


def test_enable_grad_inside_no_grad_stays_proven():
    _real(WITH.replace("    with CONTEXT:\n        y = x.OP()",
                       "    with torch.no_grad():\n        with torch.enable_grad():\n            y = x.exp()"))


DECORATED = '''\
import torch


@torch.no_grad()
def make(x):
    y = x.exp()
    return y


def f(x):
    y = make(x)
    y.add_(1)  # MARK
    return (x * y).sum()


def main():
    x = torch.randn(3, requires_grad=True)
    f(x).backward()
'''


def test_a_helper_decorated_no_grad_returns_what_nothing_saved():
    _safe(DECORATED)


def test_the_same_helper_undecorated_stays_proven():
    _real(DECORATED.replace("@torch.no_grad()\n", ""))


SAVED_LATER = '''\
import torch


def f(x):
    with torch.no_grad():
        y = x.exp()
    z = x * y
    y.add_(1)  # MARK
    return z.sum()


def main():
    x = torch.randn(3, requires_grad=True)
    f(x).backward()
'''


def test_a_result_of_the_block_saved_by_an_op_outside_stays_proven():
    _real(SAVED_LATER)


MADE_OUTSIDE = '''\
import torch


def f(x):
    a = x * 2
    b = a.exp()
    with torch.no_grad():
        y = b.exp()
    b.add_(1)  # MARK
    return (b + y).sum()


def main():
    x = torch.randn(3, requires_grad=True)
    f(x).backward()
'''


def test_a_tensor_made_outside_the_block_and_written_after_it_stays_proven():
    _real(MADE_OUTSIDE)


def test_inference_mode_results_stay_proven():
    """An inference tensor refuses a write outside inference mode: the write raises (another
    message), and the out-of-place rewrite is what makes the program run."""
    _real(WITH.replace("CONTEXT", "torch.inference_mode()").replace("OP()", "exp()"), message="inference tensor")


SWITCHED = '''\
import torch


def on():
    torch.set_grad_enabled(True)


def f(x):
    torch.set_grad_enabled(False)
    BETWEEN
    y = x.exp()
    torch.set_grad_enabled(True)
    y.add_(1)  # MARK
    return (x * y).sum()


def main():
    x = torch.randn(3, requires_grad=True)
    f(x).backward()
'''


@pytest.mark.parametrize("between", ["pass", "x.sum()", "if x.sum() > -1e9:\n        z = torch.abs(x)"])
def test_an_op_after_a_set_grad_enabled_false_statement_saves_nothing(between):
    _safe(SWITCHED.replace("BETWEEN", between))


@pytest.mark.parametrize("between", ["torch.set_grad_enabled(True)", "on()"])
def test_grad_turned_on_again_before_the_op_stays_proven(between):
    _real(SWITCHED.replace("BETWEEN", between))


def test_einsum_can_hand_back_a_view():
    """Why einsum is not a fresh op of ``requires_grad._FRESH_OPS``: its result may alias its input."""
    x = torch.randn(2, 3, requires_grad=True)
    with torch.no_grad():
        y = torch.einsum("ij->ji", x)
    assert y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    from codemod.analysis.requires_grad import _FRESH_OPS
    assert "einsum" not in _FRESH_OPS and "exp" in _FRESH_OPS


UNSEEN = '''\
import torch as th


def f(torch, x):
    with torch.no_grad():
        y = x.exp()
    y.add_(1)  # MARK
    return (x * y).sum()


def main():
    x = th.randn(3, requires_grad=True)
    f(th, x).backward()
'''


def test_an_op_under_a_no_grad_not_resolved_to_torch_saves_what_is_unknown():
    """``torch`` a parameter: grad is unknown in the block, so the save of exp's output is too
    (possible at most, as a write there is: tests/test_prec54b_groups.py)."""
    _safe(UNSEEN)


def test_the_same_op_under_enable_grad_on_the_parameter_stays_proven():
    _real(UNSEEN.replace("torch.no_grad()", "th.enable_grad()"))
