"""Stop 51 (prec51), torchrec 1.9.2 ``tensor_pool.py:267``: ``def update(shard:
torch.nn.Parameter, ...)`` writes ``shard[ids] = values``. The annotation says "a Parameter",
not "requires grad": its one caller in the file passes ``nn.Parameter(t, requires_grad=False)``,
a leaf PyTorch lets one write into. Where a caller the analysis sees passes a parameter that
may be frozen, the write is not proven (possible at most). The same helper whose caller passes
a trained parameter raises and stays proven.
"""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace, run_program  # noqa: E402

FROZEN = '''\
import torch
from torch import nn


def put(shard: torch.nn.Parameter, ids: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    shard[ids] = values  # MARK
    return torch.empty(0)


class Pool(nn.Module):
    def __init__(self, shard: torch.Tensor) -> None:
        super().__init__()
        self._shard: torch.nn.Parameter = torch.nn.Parameter(shard, requires_grad=False)

    def update(self, ids, values):
        _ = put(self._shard, ids, values)


def main():
    pool = Pool(torch.randn(6, 3))
    vals = torch.randn(2, 3, requires_grad=True)
    pool.update(torch.tensor([1, 4]), vals * 2)
    pool._shard.sum().backward()
    return vals.grad
'''
TRAINED = FROZEN.replace("torch.nn.Parameter(shard, requires_grad=False)", "torch.nn.Parameter(shard)")


def _marked(source: str) -> set:
    return {i for i, line in enumerate(source.splitlines(), 1) if line.endswith("# MARK")}


def _proven_lines(source: str) -> set:
    return {line for _, line in proven(source)}


def test_a_caller_passing_a_frozen_parameter_is_not_proven():
    assert run_program(FROZEN) is not None
    assert not _marked(FROZEN) & _proven_lines(FROZEN)


def test_a_caller_passing_a_trained_parameter_raises_and_stays_proven():
    assert raises_inplace(TRAINED, message="leaf Variable that requires grad")
    assert _marked(TRAINED) <= _proven_lines(TRAINED)
