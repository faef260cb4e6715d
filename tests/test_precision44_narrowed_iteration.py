"""Iterating a name inside ``if isinstance(y, TensorList):`` (a class other than torch's tensor
classes: a container of tensors, a list or tuple) hands out what the container holds, not the
unbind views of a tensor, even where ``y`` is annotated ``torch.Tensor`` (deepinv's RAM model at
stop 43: ``for yi in y: yi /= scale``, a false proven IPF106). Written from the public pattern (a
forward that takes a tensor or a list of tensors and rescales each in place); each program run
with torch. The look-alike narrowed to ``torch.Tensor`` raises and stays proven."""

from __future__ import annotations

import pathlib

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project  # noqa: E402

PROGRAM = '''\
import torch
from torch import nn


class TensorList:
    def __init__(self, xs):
        self.xs = list(xs)

    def __getitem__(self, i):
        return self.xs[i]

    def __iter__(self):
        return iter(self.xs)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        if isinstance(y, {cls}):
            scale = y[0].detach().abs().amax()
        else:
            scale = y.detach().abs().amax()
        if isinstance(y, {cls}):
            for yi in y:
                yi /= scale
            y = y[0]
        else:
            y = y / scale
        return self.lin(y)


def example():
    w = torch.randn(2, 3, requires_grad=True)
    out = Model()({value})
    out.sum().backward()
    return w.grad
'''


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _raises(source: str) -> bool:
    namespace: dict = {}
    exec(source, namespace)
    try:
        namespace["example"]()
    except RuntimeError as error:
        assert "is a view and is being modified inplace" in str(error), error
        return True
    return False


@pytest.mark.parametrize("cls, value", [("TensorList", "TensorList([w * 2.0, w * 3.0])"),
                                        ("(list, tuple)", "[w * 2.0, w * 3.0]"),
                                        ("list", "[w * 2.0, w * 3.0]")])
def test_iterating_a_name_narrowed_to_another_class_is_not_proven(cls, value):
    source = PROGRAM.format(cls=cls, value=value)
    assert not _raises(source)
    assert _proven(source) == []


@pytest.mark.parametrize("cls", ["torch.Tensor", "(torch.Tensor, nn.Parameter)"])
def test_iterating_a_name_narrowed_to_a_tensor_stays_proven(cls):
    source = PROGRAM.format(cls=cls, value="w * 2.0")
    assert _raises(source)
    assert _proven(source) == [("IPF106", 28)]
