"""Stop 51: a false proven group prec51b found on never-measured code (deeprobust's
``classification_margin``): a saved output (``probs = torch.exp(output)``) is written in place,
but every value computed from it ends in ``.item()`` (or ``float(...)``): a Python number leaves,
the graph is dropped, and no backward ever reaches ``exp``. The look-alikes where a tensor made
from it is returned, or kept beside the number, raise at backward and stay proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

NUMBER = '''\
import torch


def margin(output, label):
    probs = torch.exp(output)
    true = probs[label].clone()
    probs[label] = 0  # MARK
    second = probs[probs.argmax()]
    return (true - second).item()


def main():
    w = torch.randn(3, requires_grad=True)
    m = margin(torch.log_softmax(w * 2, dim=0), 1)
    (w * m).sum().backward()
    return w.grad
'''
FLOAT = NUMBER.replace("return (true - second).item()", "return float(true - second)")
TENSOR = NUMBER.replace("return (true - second).item()", "return true - second").replace(
    "(w * m).sum().backward()", "(w * m).sum().backward()\n    m.backward()")
KEPT = NUMBER.replace("return (true - second).item()", "return (true - second).item(), second").replace(
    "    m = margin(torch.log_softmax(w * 2, dim=0), 1)\n    (w * m).sum().backward()",
    "    m, s = margin(torch.log_softmax(w * 2, dim=0), 1)\n    (w * m + s).sum().backward()")


def _marked(source: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


@pytest.mark.parametrize("source", [NUMBER, FLOAT], ids=["item", "float"])
def test_a_saved_output_reaching_only_numbers_is_not_proven(source):
    assert run_program(source) is not None
    assert not _marked(source) & {line for _, line in proven(source)}


@pytest.mark.parametrize("source", [TENSOR, KEPT], ids=["returned-tensor", "kept-beside-the-number"])
def test_the_look_alikes_that_keep_a_tensor_raise_and_stay_proven(source):
    assert raises_inplace(source)
    assert _marked(source) <= {line for _, line in proven(source)}
