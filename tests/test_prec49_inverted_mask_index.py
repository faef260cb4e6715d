"""Stop 49 (lead, from prec49's labels): `x[~m]` where `x[m]` is already read as a mask is a mask too.

mmpretrain 1.2.0 `ofa_modules.py:1133` (labelled false by prec49): `x[~code_masks] = self.embedding_ln(x[~code_masks])`
was read as a basic index (a view of `x`) although `~` of a mask is a mask, and indexing with one makes a copy.
The index `~m` now counts as a copy wherever `m` itself would (a comparison, a name bound only to comparisons,
a boolean tensor, an index tensor): `m = ids > 3; x[~m] = torch.sin(x[~m])` runs backward (torch below). A
parameter of unknown type stays what it was (`x[~i]` of a Python int is `x[-i - 1]`, a view).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

MASKED = '''\
import torch
import torch.nn as nn


class Embed(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)

    def embed(self, ids):
        m = ids > 3
        x = self.emb(ids) * 2.0
        x[~m] = torch.sin(x[~m])
        return x


def main():
    model = Embed()
    ids = eval("torch.tensor([1, 5, 7, 2])")  # a tensor the analysis cannot see (a forward's input)
    model.embed(ids).sum().backward()
    return model.emb.weight.grad
'''
SLICED = MASKED.replace("x[~m] = torch.sin(x[~m])", "x[:2] = torch.sin(x[:2])")
INT_INDEX = MASKED.replace("    m = ids > 3\n", "    m = 0\n")


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_the_inverted_mask_write_runs_backward():
    assert run_program(MASKED) is not None


def test_an_inverted_mask_index_is_a_copy():
    assert ("IPF104", _line(MASKED, "x[~m] =")) not in proven(MASKED)


def test_a_slice_stays_proven_and_raises():
    assert ("IPF104", _line(SLICED, "x[:2] =")) in proven(SLICED)
    assert raises_inplace(SLICED)


def test_the_inverse_of_a_python_int_is_a_view_and_raises():
    assert raises_inplace(INT_INDEX)
    assert ("IPF104", _line(INT_INDEX, "x[~m] =")) in proven(INT_INDEX)
