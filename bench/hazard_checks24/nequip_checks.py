"""nequip 0.19.1: the six proven findings of `inplacefix check` on 2bba8c4 (stop 45), all false:
each is `data[<key>] = value` into nequip's `AtomicDataDict.Type`, a `Dict[str, torch.Tensor]`:
the statement replaces a dict entry and writes into no tensor (a tensor refuses a string index),
while `index_select` read `data[...]` entries as its index. Branch prec45 clears the four whose
key the file shows to be a string (nn/utils.py:115, :117, :132: parameters annotated `str`;
nn/pair_potential.py:163: `self.per_atom_energy_field`, set from such a parameter); the two of
nn/embedding/node.py (keys `AtomicDataDict.NODE_ATTRS_KEY`, a constant of another module) stay.
The paths run `with_edge_vectors_` and `with_edge_type_` from the installed file's source (`import
nequip` needs e3nn; the two functions need torch and the key names only, given as strings) with
positions that require grad and backward from the edge lengths: nothing raises. The other three
are not run (their modules need e3nn): the same dict, the same kind of write."""

import _shim  # noqa: F401

import ast
import importlib.util
import types

import torch
from _check import attempt, expect_line

PATH = importlib.util.find_spec("nequip").submodule_search_locations[0] + "/nn/utils.py"
KEYS = types.SimpleNamespace(POSITIONS_KEY="pos", EDGE_INDEX_KEY="edge_index", EDGE_CELL_SHIFT_KEY="edge_cell_shift",
                             EDGE_VECTORS_KEY="edge_vectors", EDGE_LENGTH_KEY="edge_lengths", CELL_KEY="cell",
                             BATCH_KEY="batch", EDGE_TYPE_KEY="edge_type", ATOM_TYPE_KEY="atom_types",
                             Type=dict)
with open(PATH, encoding="utf-8") as handle:
    tree = ast.parse(handle.read(), PATH)
kept = [node for node in tree.body if isinstance(node, ast.FunctionDef)
        and node.name in ("with_edge_vectors_", "with_edge_type_")]
namespace: dict = {"torch": torch, "AtomicDataDict": KEYS, "Optional": None}
exec(compile(ast.Module(body=kept, type_ignores=[]), PATH, "exec"), namespace)
vectors, types_ = namespace["with_edge_vectors_"], namespace["with_edge_type_"]
expect_line(vectors, 115, "data[edge_vec_field] = edge_vec")
expect_line(vectors, 117, "data[edge_len_field] = edge_vec.square().sum(1, keepdim=True).sqrt()")
expect_line(types_, 132, "data[edge_type_field] = edge_type")


def graph():
    torch.manual_seed(0)
    pos = torch.randn(4, 3, requires_grad=True)
    return {"pos": pos * 1.0, "edge_index": torch.tensor([[0, 1, 2, 3], [1, 2, 3, 0]]),
            "atom_types": torch.tensor([0, 1, 0, 1])}


def run_vectors():
    data = vectors(graph(), with_lengths=True)
    data["edge_lengths"].sum().backward()


def run_types():
    data = types_(vectors(graph(), with_lengths=True))
    (data["edge_lengths"].sum() + data["edge_type"].float().sum() * 0).backward()


attempt("nequip/nn/utils.py:115:IPF104", "path", "with_edge_vectors_(dict with positions requiring grad), backward "
        "from the edge lengths", run_vectors)
attempt("nequip/nn/utils.py:117:IPF104", "path", "as :115 (the lengths written under their key)", run_vectors)
attempt("nequip/nn/utils.py:132:IPF104", "path", "with_edge_type_ after with_edge_vectors_, backward", run_types)
