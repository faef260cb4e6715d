"""A tensor index made by ``torch.tensor([...])`` or ``torch.arange(...)`` copies (advanced indexing):
``m = x[:, idx]`` is no view of ``x``, so a write into ``x`` after ``m`` was saved runs (stA43's
report at stop 43: proven IPF104 on main, the program runs; a strict xfail until fixed). A 0-d index (``torch.tensor(0)``), an int or a slice
gives a view, whose save a later write breaks: still proven (stop 44: fixed in ``dataflow.copies``;
a list, a comparison and ``torch.randperm`` added). Each program is run with torch."""

from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import process_in_project  # noqa: E402

PROGRAM = '''\
import torch


def example():
    x = torch.randn(4, 3, requires_grad=True) * 1.0
    idx = {index}
    m = x[:, idx]
    n = m.norm()
    x[:, 0] = 0.0
    n.backward()
    return n
'''


def _proven(source: str):
    result = process_in_project(source, Settings())
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _raises(source: str) -> bool:
    namespace: dict = {}
    exec(textwrap.dedent(source), namespace)
    try:
        namespace["example"]()
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    return False


@pytest.mark.parametrize("index", ["torch.tensor([0, 1])", "torch.arange(2)", "torch.LongTensor([2, 0])",
                                   "torch.tensor([True, False, True])", "[0, 2]", "torch.randperm(3)",
                                   "torch.tensor([0, 1, 2]) > 0"])
def test_a_tensor_index_of_one_dimension_copies_so_nothing_is_proven(index):
    source = PROGRAM.format(index=index)
    assert not _raises(source)
    assert _proven(source) == []


@pytest.mark.parametrize("index", ["torch.tensor(0)", "1", "slice(0, 2)"])
def test_a_zero_dimensional_index_tensor_is_a_view_and_stays_proven(index):
    source = PROGRAM.format(index=index)
    assert _raises(source)
    assert _proven(source) == [("IPF104", 9)]
