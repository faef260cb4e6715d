"""A method called through its class, ``Box.fill(obj, q, p)``, passes its receiver as the first
argument: the parameters after ``self`` take the arguments after ``obj``. ``leaves._passed_leaf``
and ``requires_grad._arguments`` took ``obj`` for the first parameter after ``self`` (they
skipped one argument for any ``x.m(...)`` call), which both missed the leaf the call passes
and proved a write into a leaf the call does not pass (stop 49). ``Calls.unpassed`` now says
how many leading parameters a call leaves out; each program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace  # noqa: E402

_LEAF = "a leaf Variable that requires grad"

_BOX = """import torch


class Box:
    def fill(self, x, y):
        y[0] = 1.0
        return x


def main():
    obj = Box()
    p = torch.zeros(3, requires_grad=True)
    q = torch.zeros(3)
    {call}
    return p
"""


def test_a_leaf_passed_through_the_class_is_followed():
    source = _BOX.format(call="Box.fill(obj, q, p)")
    assert raises_inplace(source, "main", message=_LEAF)
    assert "IPF105" in [code for code, _ in proven(source)]


def test_the_receiver_is_not_taken_for_a_parameter():
    source = _BOX.format(call="Box.fill(obj, p, q)")  # the leaf goes to `x`, never written
    assert not raises_inplace(source, "main", message=_LEAF)
    run = {}
    exec(compile(source, "case.py", "exec"), run)
    run["main"]()  # runs through
    assert proven(source) == []


def test_a_bound_call_still_skips_the_receiver():
    source = _BOX.format(call="obj.fill(q, p)")
    assert raises_inplace(source, "main", message=_LEAF)
    assert "IPF105" in [code for code, _ in proven(source)]
    source = _BOX.format(call="obj.fill(p, q)")
    assert not raises_inplace(source, "main", message=_LEAF)
    assert proven(source) == []


_STEP = """import torch


class Box:
    def step(self, w, x):
        y = x.sigmoid()
        y.mul_(w)
        return y


def main():
    obj = Box()
    w = torch.ones(3)
    x = torch.ones(3, requires_grad=True)
    {call}.sum().backward()
"""


def test_what_a_call_through_the_class_passes_is_read_for_grad():
    # `requires_grad._arguments` read `w` (a constant) for `x`: a proven hazard shown as possible
    source = _STEP.format(call="Box.step(obj, w, x)")
    assert raises_inplace(source, "main")
    assert "IPF103" in [code for code, _ in proven(source)]
