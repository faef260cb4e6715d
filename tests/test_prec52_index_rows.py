"""Stop 52 (prec52), funasr 1.4.16 ``specaug/profileaug.py:97``, ``:98``, ``:137``: the speaker index
is a row of ``torch.nonzero(...)`` (a 1-d index tensor: ``valid[k]`` of the (hits, dims) matrix, by
an int or a tensor index, or two rows unpacked from a tuple), so ``profile[i, spk]`` is advanced
indexing, a copy: ``F.normalize`` saves the copy, not ``profile``, and writing ``profile`` breaks
nothing. A name bound to such a row copies like one bound to ``torch.nonzero`` itself. Where the
index is a Python int (``int(valid[0])``) the subscript is a view, and the same code raises and
stays proven; so does an alias of a view by such an int (``v = s[int(...)]``, ``v.mul_(2)``)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

MERGE = '''\
import torch
import torch.nn.functional as F


def merge(profile: torch.Tensor, mask: torch.Tensor):
    for idx in range(profile.shape[0]):
        valid = torch.nonzero(mask[idx])
        to_merge = torch.randint(len(valid), (2,))
        a, b = valid[to_merge[0]], valid[to_merge[1]]
        profile[idx, a] = profile[idx, a] + profile[idx, b]  # MARK
        profile[idx, a] = F.normalize(profile[idx, a], dim=-1)  # MARK
        profile[idx, b] = 0  # MARK
    return profile


def disturb(profile: torch.Tensor, mask: torch.Tensor):
    for idx in range(profile.shape[0]):
        valid = torch.nonzero(mask[idx])
        spk = valid[0]
        profile[idx, spk] = F.normalize(profile[idx, spk], dim=-1)  # MARK
    return profile


def main():
    w = torch.randn(2, 3, 4, requires_grad=True)
    merge(w * 1.0, torch.ones(2, 3)).sum().backward()
    disturb(w * 1.0, torch.ones(2, 3)).sum().backward()
    return w.grad
'''
# the index a Python int: `profile[idx, spk]` is a view; normalize saves profile's rows
AS_INT = MERGE.replace("spk = valid[0]", "spk = int(valid[0])").replace(
    "    merge(w * 1.0, torch.ones(2, 3)).sum().backward()\n", "")

ALIAS = '''\
import torch


def scale(h: torch.Tensor, mask: torch.Tensor):
    s = torch.sigmoid(h)
    valid = torch.nonzero(mask)
    spk = valid[0]
    v = s[spk]
    v.mul_(2)  # MARK
    return s.sum() + v.sum()


def main():
    h = torch.randn(3, 4, requires_grad=True)
    scale(h, torch.ones(3)).backward()
    return h.grad
'''
ALIAS_INT = ALIAS.replace("spk = valid[0]", "spk = int(valid[0])")


def _lines(source: str, mark: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith(mark)}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


@pytest.mark.parametrize("source", [MERGE, ALIAS], ids=["saved-copy", "alias-of-copy"])
def test_a_row_of_nonzero_indexes_a_copy(source):
    assert run_program(source) is not None
    assert not _lines(source, "# MARK") & _proven_lines(source)


@pytest.mark.parametrize("source", [AS_INT, ALIAS_INT], ids=["saved-view", "alias-of-view"])
def test_an_int_index_views_and_stays_proven(source):
    assert raises_inplace(source)
    marks = _lines(source, "# MARK")
    if source is AS_INT:
        marks = {line for line in marks if "spk" in source.splitlines()[line - 1]}
    assert marks and marks <= _proven_lines(source)
