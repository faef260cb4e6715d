"""Stop 57 (prec57): false groups of the proven tier seen by fresh56 and fresh55 (bench/hazard_checks24/
fresh56_probes.py, fresh55_probes.py), each a program that runs backward without the in-place error (or has nothing
that can require grad) and must not be proven, beside look-alikes that raise and stay proven:

- integer-dtype-scatter (dagua layout/multilevel.py:436/:437): the written tensor is integral, so nothing saved of
  it carries grad. Shown two ways, both of the dtype facts (``dtype.Integral``, the one table ``hazard`` asks):
  its ``dtype=`` names an integral dtype through a name (``index_dtype``, a parameter every call of the file
  passes ``torch.int32 if ... else torch.long``), or the write is a scatter whose source is an integral tensor
  (torch refuses a source of another dtype than the tensor written), the source shown integral by its use as a
  scatter's index in a statement run before on every path;
- advanced-index-read-as-view, the attribute-row form (pykaira belief_propagation_polar.py:152/:153): a helper
  reading its parameter through an index not known basic (``R[:, i, mask[i]]``, ``mask`` an integer tensor) saves
  a copy where the index copies; the summaries counted it saved (the caller's proof), as the direct read is not;
- comparison-only-saver through a helper's result (buctoolkit TS/_eigen_solver.py:894, TS_old/Dimer.py:453):
  ``th.sum(index_ops.index_inner_product(v, w, ...)) < 1e-7``: the helper stores nothing past its call, so what
  it saved is reached only through its result, which only a comparison reads. For a helper of this file and of
  another file of the run (the project index's ``SummaryFact.stores_nothing``);
- a private helper method handed a fresh tensor (lightnet data/transform/post/_brambox.py:160): ``forward`` calls
  ``self._transform_obb(boxes)`` with ``boxes = boxes.clone()`` and reads it no more; the helper writes it after
  ``boxes[:, 5].sin()`` saved a view of it, then only ``boxes.detach().cpu().numpy()`` leaves: no backward reaches
  the save. Every call of the helper (``self._m(...)`` from its own class, no class of the run extending it) hands
  it such a tensor (``arguments.private_values_passed``), and a rebinding that reads the name only past a
  history-dropping step (``boxes = boxes.detach()...``) carries nothing a backward reaches.
"""
from __future__ import annotations

import itertools
import pathlib
import sys
import tempfile
import textwrap

import pytest

torch = pytest.importorskip("torch")

from codemod.config import Settings  # noqa: E402
from codemod.engine.pipeline import process_source  # noqa: E402
from codemod.engine.project import build_index  # noqa: E402
from tests.programs import marked, proven_lines, run_program  # noqa: E402
from tests.programs import raises_proven as _real, runs_unproven as _safe  # noqa: E402


# ---------------------------------------------------------------- integer-dtype-scatter
PROBE = '''\
import torch


def int_probe(edge_index, num_nodes: int, index_dtype):
    min_neighbor = torch.full((num_nodes,), num_nodes, dtype=index_dtype)
    src = edge_index[0].to(dtype=index_dtype)
    tgt = edge_index[1].to(dtype=index_dtype)
    min_neighbor.scatter_reduce_(0, src, tgt, reduce="amin")  # MARK
    min_neighbor.scatter_reduce_(0, tgt, src, reduce="amin")  # MARK
    return min_neighbor


def main():
    edges = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 2]])
    for dtype in (torch.int32, torch.int64):
        out = int_probe(edges, 5, dtype)
        assert not out.requires_grad and out.tolist() == [1, 0, 0, 2, 3]
'''

DAGUA = '''\
import torch


def _min_neighbor(edge_index, weights, num_nodes: int, index_dtype):
    least = torch.full((num_nodes,), num_nodes, dtype=index_dtype)
    values = weights.to(dtype=index_dtype)
    least.scatter_reduce_(0, edge_index[0], values, reduce="amin")  # MARK
    least.scatter_reduce_(0, edge_index[1], values, reduce="amax")  # MARK
    return least


def coarsen(edge_index, weights, n: int):
    index_dtype = torch.int32 if n <= torch.iinfo(torch.int32).max else torch.long
    return _min_neighbor(edge_index, weights, n, index_dtype=index_dtype)


def main():
    edges = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 2]])
    out = coarsen(edges, torch.rand(5, requires_grad=True) * 9, 5)
    assert not out.requires_grad
'''

LOCAL = '''\
import torch


def count(edge_index, weights, n: int):
    dt = torch.long
    least = torch.zeros(n, dtype=dt)
    values = (weights * 4).to(dt)
    least.scatter_reduce_(0, edge_index[0], values, reduce="amin")  # MARK
    least.scatter_reduce_(0, edge_index[1], values, reduce="amax")  # MARK
    return least


def main():
    edges = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 2]])
    assert not count(edges, torch.rand(5, requires_grad=True), 5).requires_grad
'''


@pytest.mark.parametrize("source", [PROBE, DAGUA, LOCAL], ids=["index-source", "dtype-parameter", "dtype-name"])
def test_a_scatter_into_an_integral_tensor_is_not_proven(source):
    _safe(source)


FLOAT_CONTROL = '''\
import torch


def int_control(edge_index, values, num_nodes: int):
    out = torch.zeros((num_nodes,), dtype=values.dtype)
    out.scatter_reduce_(0, edge_index[0], values, reduce="amin")
    out.scatter_reduce_(0, edge_index[1], values, reduce="amin")  # MARK
    return out


def main():
    edges = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 4, 2]])
    int_control(edges, torch.rand(5, requires_grad=True), 5).sum().backward()
'''

# one call of the file passes a floating dtype: the parameter is not shown integral
FLOAT_CALLER = DAGUA.replace(
    "    return _min_neighbor(edge_index, weights, n, index_dtype=index_dtype)\n",
    "    _min_neighbor(edge_index, weights, n, index_dtype=index_dtype)\n"
    "    return _min_neighbor(edge_index, weights, n, index_dtype=torch.float32)\n").replace(
    "    out = coarsen(edges, torch.rand(5, requires_grad=True) * 9, 5)\n    assert not out.requires_grad\n",
    "    coarsen(edges, torch.rand(5, requires_grad=True) * 9, 5).sum().backward()\n").replace(
    'reduce="amin")  # MARK', 'reduce="amin")')

# the source is an index only in a branch that does not run: it is not shown integral (a float source)
BRANCH_INDEX = '''\
import torch


def spread(x, idx, flag: bool):
    out = x.exp()
    src = x * 2
    if flag:
        out.scatter_reduce_(0, src, src, reduce="amin")
    out.scatter_reduce_(0, idx, src, reduce="amin")  # MARK
    return out


def main():
    x = torch.rand(5, requires_grad=True)
    spread(x, torch.tensor([0, 1, 2, 3, 4]), False).sum().backward()
'''

# the source was an index before, but is rebound (to a float) since
REBOUND_SOURCE = '''\
import torch


def spread(x, edge_index):
    out = x.exp()
    src = edge_index[0]
    out.scatter_reduce_(0, src, x, reduce="amin")
    src = x * 2
    out.scatter_reduce_(0, edge_index[1], src, reduce="amin")  # MARK
    return out


def main():
    x = torch.rand(5, requires_grad=True)
    spread(x, torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])).sum().backward()
'''


@pytest.mark.parametrize("source", [FLOAT_CONTROL, FLOAT_CALLER, BRANCH_INDEX, REBOUND_SOURCE],
                         ids=["float-values", "float-caller", "index-in-a-branch", "source-rebound"])
def test_a_scatter_into_a_floating_tensor_stays_proven(source):
    _real(source)


# ---------------------------------------------------------------- advanced-index-read-as-view, the row form
DECODER = '''\
import torch


def min_sum(x, y):
    return torch.sign(x) * torch.sign(y) * torch.min(torch.abs(x), torch.abs(y))


class Decoder:
    def __init__(self):
        self.mask_dict = MASK

    def update(self, R, L):
        mask = self.mask_dict
        for i in range(2):
            R[:, i + 1, INDEX] = min_sum(R[:, i, INDEX], L[:, i + 1, INDEX])  # MARK
        return R

    def decode(self, llr):
        R = torch.zeros(llr.shape[0], 3, 4)
        L = torch.zeros_like(R)
        L[:, -1, :] = llr
        for _ in range(2):
            R = self.update(R, L)
        return R


def main():
    llr = torch.randn(2, 4, requires_grad=True)
    (Decoder().decode(llr) * torch.arange(24.0).reshape(2, 3, 4)).sum().backward()
    assert llr.grad is not None
'''


@pytest.mark.parametrize("mask, index", [
    ("torch.tensor([[0, 2], [1, 3]])", "mask[i]"),  # a row of an integer tensor (pykaira's mask_dict)
    ("torch.tensor([[0, 2], [1, 3]]).int() - 1 + 1", "mask[i]"),
    ("torch.tensor([0, 2])", "mask"),  # the tensor itself
    ("[[0, 2], [1, 3]]", "mask[i]"),  # a list of ints: a copying index too
])
def test_a_helper_reading_its_parameter_through_a_tensor_index_is_not_proven(mask, index):
    _safe(DECODER.replace("MASK", mask).replace("INDEX", index))


@pytest.mark.parametrize("mask, index", [
    ("None", "0:2"),  # a slice: a view of R that abs saves
    ("None", "1"),  # an int
    ("slice(1, 3)", "mask"),  # an attribute only its class sets, to a slice
])
def test_a_helper_reading_its_parameter_through_a_basic_index_stays_proven(mask, index):
    _real(DECODER.replace("MASK", mask).replace("INDEX", index))


# ---------------------------------------------------------------- comparison-only saver through a helper's result
OPS = '''\
import torch as th


def index_reduce(src, batch_indices, dim: int = 0, init_value: float = 0.0, out_size=None, out=None):
    output_size = list(src.shape)
    output_size[dim] = int(batch_indices.max()) + 1 if out_size is None else out_size
    out = th.full(output_size, init_value, dtype=src.dtype) if out is None else out.fill_(init_value)
    out.index_add_(dim, batch_indices, src)
    return out


def index_inner_product(u: th.Tensor, v: th.Tensor, dim: int, batch_indices: th.Tensor, out_size=None):
    w = u * v
    w = index_reduce(w, batch_indices, dim, init_value=0.0, out_size=out_size)
    return w


CACHE = []


def kept_inner(u: th.Tensor, v: th.Tensor, dim: int, batch_indices: th.Tensor, out_size=None):
    w = u * v
    CACHE.append(w)
    return index_reduce(w, batch_indices, dim, out_size=out_size)


def inner_into(u: th.Tensor, v: th.Tensor, dim: int, batch_indices: th.Tensor, out: th.Tensor):
    w = u * v
    return index_reduce(w, batch_indices, dim, out=out)
'''

ROTATE = '''\
import torch as th

from OPS import index_inner_product, index_reduce, kept_inner, inner_into  # noqa: F401
import OPS as ops


def rotate(x, idx, sel, steps: int):
    v = x * 2.0
    w = v.clone()
    for i in range(steps):
        abort = SAVER
        w_ = w.index_select(1, sel) * 0.5
        w.index_copy_(1, sel, w_)  # MARK
        if abort.all():
            break
    return AFTER


def main():
    x = th.rand(1, 6, 3, requires_grad=True)
    out = rotate(x, th.tensor([0, 0, 1, 1, 2, 2]), th.tensor([1, 4]), 2)
    LOSS
'''


_COUNTER = itertools.count()


def _two_files(case: str, ops: str, same_file: bool):
    """``case`` and its helpers' module: the helpers pasted into ``case`` (``same_file``) or written beside it as
    a module of the run; (the lines of ``case`` proven, a function running ``case.main``)."""
    name = f"prec57_ops_{next(_COUNTER)}"
    if same_file:
        case = case.replace("from OPS import index_inner_product, index_reduce, kept_inner, inner_into  # noqa: F401\n"
                            "import OPS as ops\n", ops.replace("import torch as th\n", ""))
        case = case.replace("ops.", "")
    else:
        case = case.replace("OPS", name)
    tmp = tempfile.mkdtemp()
    case_path, ops_path = pathlib.Path(tmp, "case.py"), pathlib.Path(tmp, f"{name}.py")
    case_path.write_text(case)
    ops_path.write_text(ops)
    index = build_index([str(case_path), str(ops_path)])
    result = process_source(case.encode(), "case.py", Settings(), project=index, module_name="case")
    assert result.error is None, result.error
    lines = {f.span.line for f in result.findings if f.code.startswith("IPF1")}

    def run():
        sys.path.insert(0, tmp)
        try:
            return run_program(case)
        finally:
            sys.path.remove(tmp)
            sys.modules.pop(name, None)

    return case, lines, run


@pytest.mark.parametrize("same_file", [False, True], ids=["other-file", "same-file"])
def test_a_helper_result_only_compared_is_not_proven(same_file):
    source = ROTATE.replace("SAVER", "th.sum(ops.index_inner_product(v, w, 1, idx, out_size=3), dim=-1) < 1.0e-7") \
        .replace("AFTER", "w").replace("LOSS", "out.sum().backward()")
    case, lines, run = _two_files(source, OPS, same_file)
    assert marked(case)
    run()
    assert not marked(case) & lines


@pytest.mark.parametrize("same_file", [False, True], ids=["other-file", "same-file"])
@pytest.mark.parametrize("saver, after, loss", [
    # the helper keeps its product in a module list, which a later backward runs through
    ("th.sum(ops.kept_inner(v, w, 1, idx, out_size=3), dim=-1) < 1.0e-7", "w", "(out.sum() + ops.CACHE[0].sum()).backward()"),
    # the helper writes its product into the caller's buffer, which the caller hands back
    ("th.sum(ops.inner_into(v, w, 1, idx, buf), dim=-1) < 1.0e-7", "w, buf", "(out[0].sum() + out[1].sum()).backward()"),
    # the helper's result is used, not only compared
    ("th.sum(ops.index_inner_product(v, w, 1, idx, out_size=3), dim=-1)", "w, abort", "(out[0].sum() + out[1].sum()).backward()"),
], ids=["kept-in-a-list", "written-into-an-argument", "result-used"])
def test_a_helper_whose_saved_product_is_reached_stays_proven(same_file, saver, after, loss):
    source = ROTATE.replace("SAVER", saver).replace("AFTER", after).replace("LOSS", loss)
    source = source.replace("    w = v.clone()\n", "    w = v.clone()\n    buf = th.zeros(1, 3, 3)\n")
    case, lines, run = _two_files(source, OPS, same_file)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run()
    assert marked(case) <= lines


def test_probe_files_hold_the_groups():
    """The fresh56 probes of both groups are not proven any more; their controls are."""
    probes = pathlib.Path(__file__).resolve().parents[1] / "bench" / "hazard_checks24" / "fresh56_probes.py"
    lines = proven_lines(probes.read_text())
    assert {19, 45} & lines == set()
    assert {26, 60} <= lines


# ---------------------------------------------------------------- a private helper handed a fresh tensor (lightnet)
FRAME = '''\
import torch
from torch import nn


def frame(array):
    return [list(row) for row in array]


class ToFrame(nn.Module):
    def __init__(self):
        super().__init__()
        self.buf = None

    def forward(self, boxes):
        if boxes.numel() == 0:
            return []
        boxes = boxes.clone()
        if boxes.shape[1] == 8:
            rows = self._transform_obb(boxes)
        else:
            rows = self._transform_hbb(boxes)
        RETURN

    def _transform_hbb(self, boxes):
        boxes[:, 1:3] -= boxes[:, 3:5] / 2
        return frame(boxes.detach().cpu().numpy())

    def _transform_obb(self, boxes):
        sin = boxes[:, 5].sin()
        cos = boxes[:, 5].cos()
        w2 = boxes[:, 3] / 2
        h2 = boxes[:, 4] / 2
        boxes[:, 1] += -h2 * sin - w2 * cos  # MARK
        boxes[:, 2] += -h2 * cos + w2 * sin  # MARK
        boxes = boxes.detach().cpu().numpy()
        rows = frame(boxes)
        return rows


def main():
    boxes = torch.rand(3, 8, requires_grad=True) * 2
    out = ToFrame()(boxes)
    LOSS
'''


def test_a_private_helper_handed_a_fresh_tensor_is_not_proven():
    _safe(FRAME.replace("RETURN", "return rows").replace("LOSS", "assert len(out) == 3\n    boxes.sum().backward()"))


@pytest.mark.parametrize("ret, loss", [
    # the caller reads the clone after the call, and a backward runs through it
    ("return rows, boxes", "out[1].sum().backward()"),
    # the helper hands the written tensor back undetached, and a backward runs through it
    ("return rows", "out.sum().backward()"),
], ids=["read-after", "handed-back"])
def test_a_private_helper_whose_tensor_is_reached_stays_proven(ret, loss):
    source = FRAME.replace("RETURN", ret).replace("LOSS", loss).replace("w2 * sin  # MARK", "w2 * sin")
    if ret == "return rows":
        source = source.replace("        boxes = boxes.detach().cpu().numpy()\n        rows = frame(boxes)\n        return rows\n",
                                "        return boxes\n")
    _real(source)


def test_the_index_records_which_functions_store_nothing(tmp_path):
    """``SummaryFact.stores_nothing`` as another file sees it, and through the cache's JSON unchanged."""
    from codemod.engine.summary_json import summary_from_json, summary_to_json
    ops = tmp_path / "opsmod.py"
    ops.write_text(OPS + "\n\ndef add_into(u: th.Tensor, v: th.Tensor):\n    v.add_(u * 2)\n    return v.sum()\n")
    case = tmp_path / "user.py"
    case.write_text("import opsmod\n\n\ndef f(a, b, i, o):\n    return (opsmod.index_inner_product(a, b, 1, i), opsmod.kept_inner(a, b, 1, i),\n"
                    "            opsmod.inner_into(a, b, 1, i, o), opsmod.add_into(a, b), opsmod.index_reduce(a, i))\n")
    index = build_index([str(case), str(ops)])
    facts = {name: index.summary(f"opsmod.{name}") for name in
             ("index_inner_product", "kept_inner", "inner_into", "add_into", "index_reduce")}
    assert all(f is not None for f in facts.values())
    assert {name for name, f in facts.items() if f.stores_nothing} == {"index_inner_product"}
    for f in facts.values():
        assert summary_from_json(summary_to_json(f)) == f
