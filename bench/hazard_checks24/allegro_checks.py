"""nequip-allegro 0.8.3 (allegro/_compile.py:49, `allegro_data_settings`): the proven finding of `inplacefix
check` on main f57423a (stop 52, fresh52b). `pos_outside_cell = torch.index_select(pos, 0,
edge_idx_outside_cell[1]) + ...` saves the index, a view of `edge_idx_outside_cell`; line 49 then writes
`edge_idx_outside_cell[1] = torch.arange(...)`. The function is compiled alone from the shipped file (nequip is
not installed here): `AtomicDataDict` is a stand-in with nequip's key names and `num_frames`. The control clones
`edge_idx_outside_cell` before the write. Positions requiring grad (nequip computes forces as -dE/dpos) raise:
real by this file's convention; the LAMMPS compile path calls it on data before the model turns grad on."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh52b import compile_alone, src

SRC = src("allegro/_compile.py")
assert linecache.getline(SRC, 49).strip() == "edge_idx_outside_cell[1] = torch.arange("
ADD = types.SimpleNamespace(POSITIONS_KEY="pos", EDGE_INDEX_KEY="edge_index", EDGE_CELL_SHIFT_KEY="edge_cell_shift",
                            CELL_KEY="cell", ATOM_TYPE_KEY="atom_types", BATCH_KEY="batch",
                            NUM_NODES_KEY="num_atoms", num_frames=lambda data: 1)


def run(replace, grad=True):
    def go():
        ns = compile_alone(SRC, {"allegro_data_settings"}, {"torch": torch, "AtomicDataDict": ADD}, replace=replace)
        pos = torch.randn(3, 3, requires_grad=grad)
        data = {"pos": pos, "edge_index": torch.tensor([[0, 1, 2, 0], [1, 2, 0, 2]]),
                "edge_cell_shift": torch.tensor([[0., 0, 0], [1, 0, 0], [0, 0, 0], [0, -1, 0]]),
                "cell": torch.eye(3) * 4.0, "atom_types": torch.tensor([0, 1, 0])}
        out = ns["allegro_data_settings"](data)
        out["pos"].pow(2).sum().backward()
    return go


F49 = "allegro/_compile.py:49:IPF104"
attempt(F49, "path", "allegro_data_settings on periodic data with positions requiring grad, backward over the "
        "ghost positions", run({}))
attempt(F49, "control", "`edge_idx_outside_cell` cloned before line 49's write",
        run({49: "edge_idx_outside_cell = edge_idx_outside_cell.clone()\nedge_idx_outside_cell[1] = torch.arange("
                 "pos.size(0), pos.size(0) + pos_outside_cell.size(0), device=pos.device)"}))
attempt(F49, "context", "positions without grad (the compile path's data), no backward needed: runs",
        lambda: compile_alone(SRC, {"allegro_data_settings"}, {"torch": torch, "AtomicDataDict": ADD})["allegro_data_settings"](
            {"pos": torch.randn(3, 3), "edge_index": torch.tensor([[0, 1], [1, 2]]),
             "edge_cell_shift": torch.tensor([[1., 0, 0], [0, 0, 0]]), "cell": torch.eye(3), "atom_types": torch.tensor([0, 1, 0])}))
