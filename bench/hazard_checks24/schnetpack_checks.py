"""schnetpack 2.1.1: the two proven findings of `inplacefix check` (b47935c, stop 46). Both write
a *dict* of tensors, keyed by string constants of `schnetpack.properties` (`idx_m: Final[str] =
"_idx_m"`), which the analysis took for one tensor whose parts alias:

- data/stats.py:54 (`calculate_stats`): `val = props[p][None, :]`, `val -= v0`, where `v0 =
  tmp.index_add(0, idx_m, ar)` saved `idx_m = props[structure.idx_m]`: another entry of the batch
  dict. The path runs it over a batch whose atom references require grad and calls backward on the
  mean: it runs.
- transform/neighborlist.py:675 (`WrapPositions.forward`): `inputs[properties.R] = R_wrapped`
  replaces the positions entry of the input dict, after `torch.masked_select(inv_positions,
  pbc[None, ...])` saved `pbc = inputs[properties.pbc]`. The method does raise with positions that
  require grad, but from line 670: `inv_positions.masked_scatter_(...)` writes what masked_select
  saved (torch saves its input too), a write reported as possible (IPF203). The path has line 670
  out of place and the flagged dict write as installed: it runs (`context`: the method as installed
  raises, at the masked_scatter_).

Run from the installed files' source (`functions_from`: `import schnetpack` needs ase, matscipy,
dirsync and more), with `schnetpack.properties` loaded by itself (its key strings)."""

import _shim  # noqa: F401

import importlib.util
import sys
import types

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten

ROOT = importlib.util.find_spec("schnetpack").submodule_search_locations[0]
# the package's __init__ imports ase: a bare package object lets `schnetpack.properties` (typing only) load
PACKAGE = types.ModuleType("schnetpack")
PACKAGE.__path__ = [ROOT]
sys.modules["schnetpack"] = PACKAGE
import schnetpack.properties as KEYS  # noqa: E402

sys.modules.setdefault("fasteners", types.ModuleType("fasteners"))  # imported by neighborlist.py, unused here

stats = functions_from(ROOT + "/data/stats.py", ["calculate_stats"])
stats["tqdm"] = lambda items: items
calculate_stats = stats["calculate_stats"]
expect_line(calculate_stats, 54, "val -= v0")


def run_stats():
    torch.manual_seed(0)
    batch = {"energy": torch.randn(2, dtype=torch.float64), KEYS.Z: torch.tensor([1, 6, 1, 8, 1]),
             KEYS.idx_m: torch.tensor([0, 0, 0, 1, 1]), KEYS.n_atoms: torch.tensor([3, 2])}
    atomref = {"energy": torch.randn(10, dtype=torch.float64, requires_grad=True)}
    result = calculate_stats([batch, dict(batch)], {"energy": True}, atomref)
    result["energy"][0].backward()


attempt("schnetpack/data/stats.py:54:IPF101", "path",
        "calculate_stats over two batches, atom references requiring grad, backward of the mean", run_stats)

wrap = functions_from(ROOT + "/transform/neighborlist.py", ["WrapPositions.forward"])
wrap["properties"] = KEYS  # the file's `from schnetpack import properties`
forward = wrap["WrapPositions.forward"]
expect_line(forward, 662, "periodic = torch.masked_select(inv_positions, pbc[None, ...])")
expect_line(forward, 675, "inputs[properties.R] = R_wrapped")


def run_wrap(function):
    def run():
        torch.manual_seed(0)
        positions = (torch.rand(4, 3, dtype=torch.float64) * 3).requires_grad_(True)
        inputs = {KEYS.R: positions, KEYS.cell: 2.0 * torch.eye(3, dtype=torch.float64),
                  KEYS.pbc: torch.tensor([True, True, False])}
        out = function(types.SimpleNamespace(eps=1e-6), inputs)
        out[KEYS.R].sum().backward()
    return run


SCATTER = "inv_positions.masked_scatter_(pbc[None, ...], periodic)"
expect_line(forward, 670, SCATTER)
attempt("schnetpack/transform/neighborlist.py:675:IPF104", "path",
        "WrapPositions.forward(positions requiring grad, periodic in x and y), line 670's masked_scatter_ made "
        "out of place (the flagged dict write left as it is), backward",
        run_wrap(rewritten(forward, [(SCATTER, "inv_positions = inv_positions.masked_scatter(pbc[None, ...], periodic)")])))
attempt("schnetpack/transform/neighborlist.py:675:IPF104", "context",
        "WrapPositions.forward as installed: raises, from line 670 (`masked_scatter_` into what masked_select saved "
        "at 662; IPF203, possible), not from the dict write", run_wrap(forward))
