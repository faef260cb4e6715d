"""The unsafe tier's alias fix (``x -= 1`` -> ``x = other = x - 1``, rebinding every name of the
tensor) is right only for a tensor: for a number the alias never saw the change. Found by the
migration sweep over issue 24's code bases (stop 45): torch_geometric's
``structured_negative_sampling_feasible`` has ``num_nodes = maybe_num_nodes(...)`` (a helper of
another package: kind unknown), ``max_num_neighbors = num_nodes``, ``max_num_neighbors -= 1``; the
unsafe tier rewrote the last to ``max_num_neighbors = num_nodes = max_num_neighbors - 1``, and
``degree(edge_index[0], num_nodes)`` then counted one node too few. Where the kind is unknown and
another name would be rebound, no tier rewrites (manual, unknown-type); a tensor keeps its fix.
Each program is run with torch, original against rewritten."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from tests.programs import fixed_source, run_program  # noqa: E402

UNSAFE = Settings(select=("ALL",), unsafe_fixes=True)

NUMBER = '''\
import torch
from helpers_elsewhere import count_nodes


def feasible(edge_index, num_nodes=None, loops=False):
    num_nodes = count_nodes(edge_index, num_nodes)
    max_neighbors = num_nodes
    if not loops:
        max_neighbors -= 1
    deg = torch.bincount(edge_index[0], minlength=num_nodes)
    return deg.numel(), bool(torch.all(deg < max_neighbors))


def main():
    return feasible(torch.tensor([[0, 1, 2, 2], [1, 0, 0, 1]]), 3)
'''

HELPER = "def count_nodes(edge_index, num_nodes):\n    return int(edge_index.max()) + 1 if num_nodes is None else num_nodes\n"

TENSOR = '''\
import torch


def shrink(x):
    y = x.clone()
    z = y
    y -= 1
    return z.sum() + y.sum()


def main():
    return shrink(torch.ones(3))
'''


def _run(source: str, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "helpers_elsewhere.py").write_text(HELPER)
    return run_program(source)


def test_an_alias_of_unknown_kind_is_not_rebound_by_the_unsafe_tier(tmp_path, monkeypatch):
    fixed = fixed_source(NUMBER, UNSAFE)
    assert "num_nodes = max_neighbors" not in fixed and "= num_nodes = " not in fixed, fixed
    assert _run(fixed, tmp_path, monkeypatch) == _run(NUMBER, tmp_path, monkeypatch) == (3, False)


def test_a_tensor_alias_keeps_its_unsafe_rebinding():
    fixed = fixed_source(TENSOR, UNSAFE)
    assert "y = z = y - 1" in fixed or "z = y = y - 1" in fixed, fixed
    assert torch.equal(run_program(fixed), run_program(TENSOR))
