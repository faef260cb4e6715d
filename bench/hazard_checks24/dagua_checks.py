"""dagua 0.4.0 (seven proven findings of `inplacefix check` on the preview, main de3d78f; five on the merged main
f26f2d0, which no longer proves cluster_driver.py:505 and :511; stop 56, fresh56, end of stop). dagua lays graphs out
with torch; its solvers run on tensors without grad. Each function is compiled alone from the shipped file (module
constants and the functions it calls with it, dagua's own imports left out).

- layout/ops/pipelines/linlog.py:833 (`_layout_linlog_fidelity`) and eval/competitors/linlog_competitor.py:808
  (`_layout_linlog_reference`, the same solver kept as a reference): `positions += steps * cooling` writes the
  positions that the step's savers read (the weighted barycenter's product, `_average_distances`' norm). Edge
  weights that require grad (they reach the repulsion weights and the step), backward of the normalised positions:
  raises; out of place runs. Isolated from the line before it (`steps *= ...`, which writes what
  `torch.linalg.norm` saved on the line above it and raises on its own: unflagged, a miss), made out of place.
  Real by this file's convention (edge weights that require grad; the library hands plain weights).
- layout/multilevel.py:436, :437 (`_build_streaming_min_neighbor`): `min_neighbor.scatter_reduce_(0, src, tgt,
  reduce="amin")` and its mirror fill a `torch.full(..., dtype=index_dtype)` tensor with node ids: the index dtype
  is an integer one (the same tensors index the scatter), so nothing can require grad and nothing is saved. The
  function runs (int32 and int64 ids); a float dtype is refused by the scatter's index. False.
- layout/multilevel.py:1406 (`_coarsen_once_streaming`): `coarse_sizes[:, 1].scatter_reduce_(..., reduce="amax")`
  writes coarse_sizes, whose column 0 the amax scatter of :1405 saved (its result, a view of coarse_sizes). Node
  sizes that require grad, the level coarsened, backward of the coarse sizes: raises; column 1 written on a fresh
  copy runs. Real by this file's convention (sizes that require grad).
- layout/ops/cluster_driver.py:505, :511 (`_enforce_external_cluster_clearance`): `adjusted[i, 1] =
  torch.maximum(adjusted[i, 1], min_y)` (and minimum) writes adjusted, whose slot the same call saved (positions are
  detached on entry, but min_y carries the item sizes' grad). Item sizes that require grad, backward of the adjusted
  positions: raises; written on a fresh copy runs. Real by this file's convention (item sizes that require grad)."""

import _shim  # noqa: F401
import ast
import dataclasses
import linecache
import sys
import types
from typing import Optional

import torch
from _check import attempt
from _fresh53 import compile_alone, src
from _rewrite import replace_statement

LINLOG = src("dagua/layout/ops/pipelines/linlog.py")
REF = src("dagua/eval/competitors/linlog_competitor.py")
ML = src("dagua/layout/multilevel.py")
CD = src("dagua/layout/ops/cluster_driver.py")
assert linecache.getline(LINLOG, 833).strip() == "positions += steps_tensor * cooling"
assert linecache.getline(REF, 808).strip() == "positions += steps * cooling"
assert linecache.getline(ML, 436).strip() == 'min_neighbor.scatter_reduce_(0, src, tgt, reduce="amin")'
assert linecache.getline(ML, 437).strip() == 'min_neighbor.scatter_reduce_(0, tgt, src, reduce="amin")'
assert linecache.getline(ML, 1406).strip().startswith("coarse_sizes[:, 1].scatter_reduce_(0, fine_to_coarse")
assert linecache.getline(CD, 505).strip() == "adjusted[source_index, 1] = torch.maximum(adjusted[source_index, 1], min_y)"
assert linecache.getline(CD, 511).strip() == "adjusted[target_index, 1] = torch.minimum(adjusted[target_index, 1], max_y)"


def module_alone(path, ns, replace=None, upto=None):
    """The module run from its shipped source (line numbers kept) with dagua's own imports left out (the names
    they bring are stand-ins in ns) and statements replaced by line; top-level statements from line `upto` on
    are left out."""
    tree = ast.parse(open(path).read(), path)
    for line, code in (replace or {}).items():
        replace_statement(tree, line, code)
    tree.body = [n for n in tree.body if not (isinstance(n, ast.ImportFrom) and (n.module or "").startswith("dagua"))
                 and not (isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test))
                 and (upto is None or n.lineno < upto)]
    module = types.ModuleType(f"dagua_alone_{len(sys.modules)}")  # dataclasses look their module up
    module.__dict__.update(ns)
    sys.modules[module.__name__] = module
    exec(compile(tree, path, "exec"), module.__dict__)
    return module.__dict__


BASE = {}

# --- the two LinLog solvers
LINLOG_831 = "steps_tensor = steps_tensor * torch.minimum(torch.ones_like(lengths), max_step / lengths)[:, None]"
REF_806 = "steps = steps * torch.minimum(torch.ones_like(lengths), max_step / lengths)[:, None]"
assert linecache.getline(LINLOG, 831).strip() == LINLOG_831.replace("steps_tensor = steps_tensor * ", "steps_tensor *= ")
assert linecache.getline(REF, 806).strip() == REF_806.replace("steps = steps * ", "steps *= ")


def linlog(ref, shipped=True, isolate=True):
    path, line, before = (REF, 808, 806) if ref else (LINLOG, 833, 831)
    replace = {}
    if isolate:
        replace[before] = REF_806 if ref else LINLOG_831
    if not shipped:
        replace[line] = "positions = positions + steps * cooling" if ref else \
            "positions = positions + steps_tensor * cooling"
    ns = module_alone(path, dict(BASE), replace, upto=814 if ref else 838)

    def go():
        edge_index = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 2]])
        weights = torch.rand(5, dtype=torch.float64, requires_grad=True)
        if ref:
            config = dataclasses.replace(ns["_resolve_config"](None), steps=5)
            graph = types.SimpleNamespace(num_nodes=5, edge_index=edge_index, edge_weights=weights * 1.0)
            out = ns["_layout_linlog_reference"](graph, config, 0)
        else:
            config = dataclasses.replace(ns["_resolve_fidelity_config"](None), steps=5)
            out = ns["_layout_linlog_fidelity"](edge_index, 5, weights * 1.0, config, 0)
        (out * torch.arange(10.0).reshape(5, 2)).sum().backward()
        assert weights.grad is not None
    return go


for ref, fid in ((False, "dagua/layout/ops/pipelines/linlog.py:833:IPF101"),
                 (True, "dagua/eval/competitors/linlog_competitor.py:808:IPF101")):
    attempt(fid, "path", "5 steps on a 5-node graph, edge weights that require grad, the step's `*=` out of place, "
            "backward of the positions: raises", linlog(ref))
    attempt(fid, "control", "the same with the positions update out of place too: runs", linlog(ref, shipped=False))
    attempt(fid, "context", "the `*=` on the step as shipped, the positions update out of place: raises (the step "
            "writes what torch.linalg.norm saved; unflagged)", linlog(ref, shipped=False, isolate=False))

# --- multilevel: the integer min-neighbor signature and the coarse sizes
ML_NS = dict(_EDGE_CHUNK=10_000_000, LayoutConfig=None, GraphFamily=None, classify_graph=None,
             build_layer_index=None, VRAMBudget=None, _vram_fits=None, longest_path_layering=None)


def multilevel(replace=None):
    layers = module_alone(src("dagua/layout/layers.py"), {"_cuda_stage_status_message": lambda *a, **k: ""})
    return module_alone(ML, dict(ML_NS, build_layer_index=layers["build_layer_index"]), replace)


def min_neighbor(dtype):
    ns = multilevel()

    def go():
        edge_index = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 2]])
        out, used_gpu, _ = ns["_build_streaming_min_neighbor"](edge_index, 5, dtype, None)
        assert out.dtype == dtype and not out.requires_grad
        assert out.tolist() == [1, 0, 0, 2, 3], out.tolist()
    return go


def min_neighbor_float():
    ns = multilevel()

    def go():
        edge_index = torch.tensor([[0.0, 1.0], [1.0, 2.0]], requires_grad=True)
        ns["_build_streaming_min_neighbor"](edge_index, 3, torch.float32, None)
    return go


COL1 = "coarse_sizes[:, 1].scatter_reduce_(0, fine_to_coarse, node_sizes_cpu[:, 1], reduce=\"amax\")"


def coarse_sizes(control=False):
    line = linecache.getline(ML, 1406).strip()
    stop = "return coarse_sizes"
    if control:
        line = ("coarse_sizes = coarse_sizes.clone(); " + COL1)
    ns = multilevel({1406: line + "\n" + stop})

    def go():
        # two layers, nodes 0-2 in layer 0 and 3-5 in layer 1, edges between the layers
        edge_index = torch.tensor([[0, 1, 2, 0], [3, 4, 5, 5]])
        layers = torch.tensor([0, 0, 0, 1, 1, 1])
        sizes = torch.rand(6, 2, requires_grad=True)
        out = ns["_coarsen_once_streaming"](edge_index, 6, sizes * 10.0, layers, 2, torch.tensor([3, 3]),
                                            torch.tensor([0, 3, 6]))
        out.sum().backward()
        assert sizes.grad is not None
    return go


FID = "dagua/layout/multilevel.py:436:IPF103"
attempt(FID, "path", "_build_streaming_min_neighbor on a 5-node graph with int32 ids: runs (an integer tensor, no "
        "grad, nothing saved)", min_neighbor(torch.int32))
attempt(FID, "path", "the same with int64 ids: runs", min_neighbor(torch.int64))
attempt(FID, "context", "float ids that require grad: the scatter refuses a float index (RuntimeError)",
        min_neighbor_float(), expected=(RuntimeError,))
FID = "dagua/layout/multilevel.py:437:IPF103"
attempt(FID, "path", "_build_streaming_min_neighbor on a 5-node graph with int32 ids: runs", min_neighbor(torch.int32))
attempt(FID, "path", "the same with int64 ids: runs", min_neighbor(torch.int64))
FID = "dagua/layout/multilevel.py:1406:IPF104"
attempt(FID, "path", "_coarsen_once_streaming on a 6-node, 2-layer graph, node sizes that require grad, stopped "
        "after :1406, backward of the coarse sizes: raises", coarse_sizes())
attempt(FID, "control", "the same with column 1 written on a fresh copy: runs", coarse_sizes(control=True))

# --- cluster_driver: the external clearance
REPL_505 = "_v = torch.maximum(adjusted[source_index, 1], min_y); adjusted = adjusted.clone(); adjusted[source_index, 1] = _v"
REPL_511 = "_v = torch.minimum(adjusted[target_index, 1], max_y); adjusted = adjusted.clone(); adjusted[target_index, 1] = _v"


def _clearance(kinds, control):
    tree = ast.parse(open(CD).read(), CD)
    owner = next(n.name for n in tree.body if isinstance(n, ast.ClassDef) and any(
        isinstance(i, ast.FunctionDef) and i.name == "_enforce_external_cluster_clearance" for i in n.body))
    ns = compile_alone(CD, {f"{owner}._enforce_external_cluster_clearance"}, {"torch": torch, "Optional": Optional},
                       replace={505: REPL_505, 511: REPL_511} if control else {})

    def go():
        # items: 0 a leaf, 1 a cluster; one edge between them, in the direction asked
        items = [types.SimpleNamespace(key=0, kind="leaf"), types.SimpleNamespace(key="c", kind="cluster")]
        edge = [[0], [1]] if kinds == "leaf->cluster" else [[1], [0]]
        this = types.SimpleNamespace(external_clearance_pt=4.0,
                                     _node_owner_at_level=lambda tree, name, its: {0: 0, 1: "c"})
        problem = types.SimpleNamespace(edge_index=torch.tensor(edge))
        positions = torch.tensor([[0.0, 0.0], [0.0, 0.0]])
        sizes = torch.tensor([[10.0, 10.0], [30.0, 30.0]], requires_grad=True)
        out = ns["_enforce_external_cluster_clearance"](this, problem, None, None, items, positions, sizes * 1.0)
        out.sum().backward()
        assert sizes.grad is not None
    return go


FID = "dagua/layout/ops/cluster_driver.py:505:IPF104"
attempt(FID, "path", "a leaf with an edge into a cluster, item sizes that require grad, backward of the adjusted "
        "positions: raises", _clearance("leaf->cluster", False))
attempt(FID, "control", "the same with the write on a fresh copy: runs", _clearance("leaf->cluster", True))
FID = "dagua/layout/ops/cluster_driver.py:511:IPF104"
attempt(FID, "path", "a cluster with an edge into a leaf, item sizes that require grad: raises",
        _clearance("cluster->leaf", False))
attempt(FID, "control", "the same with the write on a fresh copy: runs", _clearance("cluster->leaf", True))
