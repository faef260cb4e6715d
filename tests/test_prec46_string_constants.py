"""A key that is a string constant of a module of the project (``properties.R`` with
``R: Final[str] = "_positions"`` in ``properties.py``) is a string: the name indexed with it is a
dict there, and ``data[key] = v`` replaces an entry, it writes into no tensor (stop 46: schnetpack
2.1.1, ``data/stats.py:54`` and ``transform/neighborlist.py:675``, two false proven findings; the
open half of stop 45's string-keyed-dict group, nequip's ``data[AtomicDataDict.NODE_ATTRS_KEY]``).
Each module's names bound once at its top level to a string (a literal, an f-string without
fields, another such name, a sum of such strings) are in its project facts
(``ModuleFacts.strings``); ``string_keys.string_key`` reads them through the import, and the
file's own ones from its tree. Programs written from the pattern, each run with torch: the probes
run and are not proven; the look-alike whose constant is an integer (a tensor indexed with it)
raises and stays proven. Stop 47: a top-level module imported whole under an alias (``import
keys as properties``, the probes' form) resolves too; and schnetpack's ``stats.py:54`` (the write into one entry's view, the save of
another entry, which dataflow takes for views of one tensor) is possible, not proven
(tests/test_prec47_dict_entries.py)."""

from __future__ import annotations

import pathlib
import tempfile

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from codemod.engine.pipeline import process_source  # noqa: E402
from codemod.engine.project import build_index  # noqa: E402
from tests.programs import run_program  # noqa: E402

KEYS = '''\
from typing import Final

position: Final[str] = "_positions"
R: Final[str] = position  #: atom positions
cell: Final[str] = "_cell"
pbc: Final[str] = "_pbc"
Z = "_atomic_numbers"
idx_m = "_idx_m"
cell_strained: Final[str] = cell + "_strained"
'''

WRAP = '''\
import torch
import keys as properties


def wrap(inputs, eps=1e-6):
    R = inputs[properties.R]
    cell = inputs[properties.cell].view(3, 3)
    pbc = inputs[properties.pbc]
    inverse_cell = torch.inverse(cell)
    inv_positions = torch.sum(R[..., None] * inverse_cell[None, ...], dim=1)
    periodic = torch.masked_select(inv_positions, pbc[None, ...])
    periodic = (periodic + eps) % 1.0 - eps
    inv_positions = inv_positions.masked_scatter(pbc[None, ...], periodic)
    R_wrapped = torch.sum(inv_positions[..., None] * cell[None, ...], dim=1)
    inputs[properties.R] = R_wrapped
    return inputs


def main():
    positions = (torch.rand(4, 3, dtype=torch.float64) * 3).requires_grad_(True)
    inputs = {properties.R: positions, properties.cell: 2.0 * torch.eye(3, dtype=torch.float64),
              properties.pbc: torch.tensor([True, True, False])}
    wrap(inputs)[properties.R].sum().backward()
    return positions.grad
'''

STATS = '''\
import torch
import keys as structure


def stats(batches, names, atomref):
    total = torch.zeros(len(names), dtype=torch.float64)
    for props in batches:
        values = []
        for p in names:
            val = props[p][None, :]
            ar = atomref[p][props[structure.Z]]
            idx_m = props[structure.idx_m]
            tmp = torch.zeros((idx_m[-1] + 1,), dtype=ar.dtype)
            v0 = tmp.index_add(0, idx_m, ar)
            val -= v0
            values.append(val)
        total = total + torch.cat(values, dim=0).mean(dim=1)
    return total


def main():
    batch = {"energy": torch.randn(2, dtype=torch.float64), structure.Z: torch.tensor([1, 2, 1, 3, 1]),
             structure.idx_m: torch.tensor([0, 0, 0, 1, 1])}
    atomref = {"energy": torch.randn(4, dtype=torch.float64, requires_grad=True)}
    stats([batch, dict(batch)], ["energy"], atomref).sum().backward()
    return atomref["energy"].grad
'''

PROBES = {"wrap_positions": WRAP}


def _proven(case: str, keys: str = KEYS, more: tuple = ()) -> list:
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, text in (("case", case), ("keys", keys), *more):
            path = pathlib.Path(tmp, f"{name}.py")
            path.write_text(text)
            paths.append(str(path))
        index = build_index(paths)
        result = process_source(case.encode(), "case.py", Settings(), project=index, module_name="case")
        assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings if f.code.startswith("IPF1")]


def _runs(case: str, keys: str = KEYS, more: tuple = ()) -> bool:
    import sys

    with tempfile.TemporaryDirectory() as tmp:
        pathlib.Path(tmp, "keys.py").write_text(keys)
        for name, text in more:
            pathlib.Path(tmp, f"{name}.py").write_text(text)
            sys.modules.pop(name, None)
        sys.path.insert(0, tmp)
        sys.modules.pop("keys", None)
        try:
            run_program(case, "main")
            return True
        except RuntimeError as exc:
            assert "inplace" in str(exc) or "in-place" in str(exc), exc
            return False
        finally:
            sys.path.remove(tmp)
            sys.modules.pop("keys", None)


@pytest.mark.parametrize("name", sorted(PROBES))
def test_a_dict_keyed_by_another_modules_string_constants_is_no_tensor(name):
    source = PROBES[name]
    assert _runs(source)
    assert _proven(source) == []


# nequip's form: the keys' module re-exports another's constants with a star import
# (`from ._keys import *` in AtomicDataDict.py)
STAR_KEYS = "from keys import *  # noqa: F403\n\nType = dict\n"

EMBED = '''\
import torch
from torch import nn
import atomic_dict as AtomicDataDict


class Embedding(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.embed = nn.Embedding(n, 4)

    def forward(self, data: AtomicDataDict.Type) -> AtomicDataDict.Type:
        types = data[AtomicDataDict.Z].view(-1)
        embedding = self.embed(types)
        if AtomicDataDict.idx_m in data:
            field = torch.index_select(data[AtomicDataDict.cell].view(-1), 0, data[AtomicDataDict.idx_m].view(-1))
            embedding = torch.cat([embedding, field[:, None]], dim=1)
        data[AtomicDataDict.pbc] = embedding
        data[AtomicDataDict.R] = embedding
        return data


def main():
    layer = Embedding(5)
    cell = torch.randn(2, requires_grad=True)
    data = {AtomicDataDict.Z: torch.tensor([1, 2, 4]), AtomicDataDict.idx_m: torch.tensor([0, 0, 1]),
            AtomicDataDict.cell: cell}
    out = layer(data)
    (out[AtomicDataDict.pbc] * out[AtomicDataDict.R]).sum().backward()
    return cell.grad
'''


def test_a_star_imported_modules_string_constants_are_strings():
    more = (("atomic_dict", STAR_KEYS),)
    assert _runs(EMBED, more=more)
    assert _proven(EMBED, more=more) == []


def test_two_entries_of_a_dict_keyed_by_string_constants_are_no_views_of_one_tensor():
    assert _runs(STATS)
    assert _proven(STATS) == []


# the same file with the keys' module holding integers: `inputs` is a tensor, its rows written
INTEGER_KEYS = KEYS.replace('"_positions"', "0").replace('"_cell"', "1").replace('"_pbc"', "2") \
    .replace("Final[str]", "Final[int]").replace('cell_strained: Final[int] = cell + "_strained"\n', "")

ROWS = '''\
import torch
import keys as rows


def scale(x):
    first = x[rows.R]
    y = first.pow(2)
    x[rows.R] = 0.0
    return y


def main():
    w = torch.randn(3, 4, requires_grad=True)
    out = scale(w * 1.0)
    out.sum().backward()
    return w.grad
'''


def test_an_integer_constant_of_another_module_indexes_a_tensor():
    assert not _runs(ROWS, INTEGER_KEYS)
    assert _proven(ROWS, INTEGER_KEYS) != []
