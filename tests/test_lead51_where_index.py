"""Stop 51: a false proven group prec51b found on never-measured code (deeprobust's AirGNN
proximal step): ``index = torch.where(mask)`` (one argument) is a tuple of index tensors, so
``score[index]`` is advanced indexing, a copy; a division saving that copy never sees a write
into ``score``. Measured: indexing with ``torch.where(m)`` or a piece of it copies for every
shape (a 0-d tensor cannot be indexed with it). The look-alike with a slice (a view) raises and
stays proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

NAMED = '''\
import torch


def prox(x, lam):
    row_norm = torch.norm(x, p=2, dim=1)
    score = torch.clamp(row_norm - lam, min=0)
    index = torch.where(row_norm > 0)
    score[index] = score[index] / row_norm[index]  # MARK
    return score.unsqueeze(1) * x


def main():
    x = torch.randn(4, 3, requires_grad=True)
    prox(x * 1.0, 0.1).sum().backward()
    return x.grad
'''
INLINE = NAMED.replace("    index = torch.where(row_norm > 0)\n", "").replace(
    "score[index] = score[index] / row_norm[index]",
    "score[torch.where(row_norm > 0)] = score[torch.where(row_norm > 0)] / row_norm")
SLICED = NAMED.replace("score[index] = score[index] / row_norm[index]", "score[1:] = score[1:] / row_norm[1:]")


def _marked(source: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


@pytest.mark.parametrize("source", [NAMED, INLINE], ids=["named", "inline"])
def test_an_index_made_by_one_argument_where_copies_and_proves_nothing(source):
    assert run_program(source) is not None
    assert not _marked(source) & {line for _, line in proven(source)}


def test_the_sliced_look_alike_raises_and_stays_proven():
    assert raises_inplace(SLICED)
    assert _marked(SLICED) <= {line for _, line in proven(SLICED)}


def test_where_indexing_copies_in_torch():
    x = torch.randn(3, 4)
    for cond in (torch.tensor([True, False, True]), torch.randn(3, 4) > 0, torch.zeros(3, dtype=torch.bool)):
        y = x if cond.dim() == 2 else x[:, 0]
        assert y[torch.where(cond)]._base is None
        assert y[torch.where(cond)[0]]._base is None
