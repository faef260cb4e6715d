"""A name indexed with a string is a dict there: ``data[key] = v`` replaces an entry and writes
into no tensor (stop 45: nequip 0.19.1's ``AtomicDataDict.Type`` (``Dict[str, Tensor]``), four
false proven IPF104 findings in ``nn/utils.py`` and ``nn/pair_potential.py``: ``data[field] = edge_vec``
with ``field: str``, taken for a write into a tensor that ``index_select`` saved as its index).
``string_keys.indexed_by_string`` (through ``tensor_kind.used_as_container``): a literal key, a
parameter annotated ``str``, a name bound to string literals, ``self.<attr>`` set only to such
strings. Programs written from the pattern, each run with torch: the probes run and are not
proven; the look-alike with a tensor and an integer index raises and stays proven."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from tests.programs import proven, raises_inplace  # noqa: E402

# A graph dict: positions, edge index; edge vectors written back under a field name.
PARAM_FIELD = '''\
from typing import Dict

import torch


def with_edge_vectors_(data: Dict[str, torch.Tensor], vec_field: str = "edge_vec",
                       index_field: str = "edge_index") -> Dict[str, torch.Tensor]:
    pos = data["pos"]
    edge_index = data[index_field]
    edge_vec = torch.index_select(pos, 0, edge_index[1]) - torch.index_select(pos, 0, edge_index[0])
    data[vec_field] = edge_vec
    data[index_field] = edge_index.flip(0)
    return data


def example():
    pos = torch.randn(4, 3, requires_grad=True)
    data = {"pos": pos, "edge_index": torch.tensor([[0, 1, 2], [1, 2, 3]])}
    out = with_edge_vectors_(data)
    out["edge_vec"].square().sum().backward()
'''

ATTRIBUTE_FIELD = '''\
import torch
from torch import nn


class Energy(nn.Module):
    def __init__(self, field: str = "atomic_energy", index_field: str = "edge_index"):
        super().__init__()
        self.field = field
        self.index_field = index_field
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, data):
        src = data[self.index_field][0]
        eng = torch.index_select(data["pos"], 0, src).square().sum(-1) * self.scale
        data[self.index_field] = src.unsqueeze(0)
        data[self.field] = eng
        return data


def example():
    pos = torch.randn(4, 3, requires_grad=True)
    data = {"pos": pos, "edge_index": torch.tensor([[0, 1, 2], [1, 2, 3]])}
    Energy()(data)["atomic_energy"].sum().backward()
'''

BOUND_FIELD = '''\
import torch


def gather(data, idx):
    key = "index"
    index = data[key]
    out = torch.index_select(data["x"], 0, index)
    data[key] = index + 1
    return out


def example():
    x = torch.randn(4, 3, requires_grad=True)
    data = {"x": x, "index": torch.tensor([0, 2])}
    gather(data, 0).sum().backward()
'''

PROBES = {"param_field": PARAM_FIELD, "attribute_field": ATTRIBUTE_FIELD, "bound_field": BOUND_FIELD}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_write_under_a_string_key_is_no_tensor_write(name):
    source = PROBES[name]
    assert not raises_inplace(source, "example")
    assert proven(source) == []


# The look-alike: a tensor of indices, its rows selected by an integer and saved, then written.
TENSOR_INDEX = '''\
import torch


def gather(x, index: torch.Tensor, row: int):
    src = index[row]
    out = torch.index_select(x, 0, src)
    index[row] = src + 1
    return out


def example():
    x = torch.randn(4, 3, requires_grad=True)
    index = torch.tensor([[0, 1], [1, 2]])
    gather(x, index, 0).sum().backward()
'''

# A field name that is not surely a string (annotated otherwise): as today.
INT_FIELD = '''\
import torch


def gather(x, index, row: int):
    src = index[row]
    out = torch.index_select(x, 0, src)
    index[row] = src + 1
    return out


def example():
    x = torch.randn(4, 3, requires_grad=True)
    index = torch.tensor([[0, 1], [1, 2]])
    gather(x, index, 0).sum().backward()
'''


@pytest.mark.parametrize("source", [TENSOR_INDEX, INT_FIELD], ids=["tensor_index", "int_field"])
def test_a_tensor_written_at_an_integer_index_raises_and_stays_proven(source):
    assert raises_inplace(source, "example", ("modified by an inplace operation", "is at version"))
    assert proven(source) != []
