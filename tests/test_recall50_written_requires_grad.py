"""A tensor made without grad (``buf = torch.zeros(3)``) that a statement on every way to a use
writes, in place and with grad on, a value requiring grad into (``buf.copy_(w * 2)``,
``buf[1:] = w[1:]``) requires grad from there: autograd recorded the write. ``GradRequirement``
read only the binding ("no": a fresh tensor), so the sigmoid of ``buf`` saved nothing as far as
it could tell and the write into that output stayed possible. Look-alikes (the write with grad
off, on a branch that may not run, of a detached value, into a list, through a double index)
stay unproven; every program is run with torch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

_PROGRAM = """import torch


def main(flag=False):
    w = torch.ones(3, requires_grad=True)
    buf = {made}
    {write}
    y = buf.sigmoid()
    y.mul_(2)
    (y.sum() + w.sum()).backward()
    return w.grad
"""


def _source(write: str, made: str = "torch.zeros(3)") -> str:
    return _PROGRAM.format(write=write.replace("\n", "\n    "), made=made)


@pytest.mark.parametrize("write", ["buf.copy_(w * 2)", "buf[1:] = w[1:]", "buf.add_(w)"])
def test_a_write_of_what_requires_grad_makes_the_tensor_require_grad(write):
    source = _source(write)
    assert raises_inplace(source)
    assert ("IPF103", 9) in proven(source)


@pytest.mark.parametrize("write", [
    "with torch.no_grad():\n    buf.copy_(w * 2)",  # grad off: nothing recorded
    "if flag:\n    buf.copy_(w * 2)",  # a branch that does not run here
    "buf.copy_(w.detach() * 2)",  # nothing requiring grad written
    "buf[[0, 1]][0] = w[0]",  # the first index copies: the write misses `buf`
])
def test_look_alikes_stay_unproven(write):
    source = _source(write)
    assert not raises_inplace(source)
    run_program(source)  # runs through: sigmoid's input never required grad
    assert ("IPF103", 9) not in proven(source) and ("IPF103", 10) not in proven(source)


def test_a_list_written_into_is_not_a_tensor():
    source = _PROGRAM.format(made="[0.0, 0.0, 0.0]", write="buf[0] = w[0]\nbuf = torch.tensor(buf)".replace("\n", "\n    "))
    assert not raises_inplace(source)
    assert not [c for c, _ in proven(source) if c == "IPF103"]
