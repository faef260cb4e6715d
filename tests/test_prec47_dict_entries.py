"""Stop 47 (prec47): two entries of one dict (``val = props[p][None, :]``, ``idx_m = props["_idx_m"]``) are
no views of one tensor: a write into one breaks nothing autograd saved of the other, unless the keys name
the same entry, which the analysis cannot tell where a key is a variable: possible at most, not proven.

Found on schnetpack 2.1.1 (``data/stats.py:54``, labelled false by running): ``calculate_stats``'s
``val -= v0`` was proven through ``index_add``'s save of ``idx_m``, a sibling entry of the batch dict.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from tests.programs import run_program

PROGRAM = '''\
import torch


def stats(batches, names, atomref):
    total = torch.zeros(len(names), dtype=torch.float64)
    for props in batches:
        values = []
        for p in names:
            val = props[p][None, :]
            ar = atomref[p][props["_atomic_numbers"]]
            idx_m = props["_idx_m"]
            tmp = torch.zeros((idx_m[-1] + 1,), dtype=ar.dtype)
            v0 = tmp.index_add(0, idx_m, ar)
            val -= v0
            values.append(val)
        total = total + torch.cat(values, dim=0).mean(dim=1)
    return total


def main():
    batch = {"energy": torch.randn(2, dtype=torch.float64), "_atomic_numbers": torch.tensor([1, 2, 1, 3, 1]),
             "_idx_m": torch.tensor([0, 0, 0, 1, 1])}
    atomref = {"energy": torch.randn(4, dtype=torch.float64, requires_grad=True)}
    stats([batch, dict(batch)], ["energy"], atomref).sum().backward()
    return [atomref["energy"].grad]
'''
# the look-alike where both names are views of one tensor (rows of a tensor, not entries of a dict): it raises
RAISING = '''\
import torch


def stats(props, ar):
    val = props[0][None, :]
    idx_m = props[1]
    tmp = torch.zeros(3, dtype=ar.dtype)
    v0 = tmp.index_add(0, idx_m, ar)
    val -= 1
    return v0


def main():
    props = torch.tensor([[0, 1, 2], [0, 1, 1]])
    ar = torch.randn(3, dtype=torch.float64, requires_grad=True)
    stats(props, ar).sum().backward()
    return [ar.grad]
'''


def findings(source: str, select: str) -> list:
    result = process_source(source.encode(), "case.py", Settings(select=("ALL",)))
    assert result.error is None
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith(select)]


def test_two_entries_of_a_dict_are_no_views_of_one_tensor():
    grads = run_program(PROGRAM)  # runs backward
    assert torch.isfinite(grads[0]).all()
    assert findings(PROGRAM, "IPF1") == []
    assert findings(PROGRAM, "IPF2") == [("IPF201", 14)]  # `p` may be "_idx_m": possible, not gone


def test_two_views_of_one_tensor_stay_proven():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_program(RAISING)
    assert findings(RAISING, "IPF1") == [("IPF101", 9)]
