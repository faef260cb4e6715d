"""pointtorch 1.1.0 (operations/torch/_neighbor_search.py:93, `neighbor_search_cdist`): the proven finding of
`inplacefix check` on main 7911fb7 (stop 53, fresh53). `dists = torch.cdist(...)` (cdist saves its output), then
`dists[dists.isnan()] = torch.inf` writes it (an all-false mask still bumps the version); the function returns the
neighbour distances (topk of dists), so a backward from them runs through cdist. neighbor_search_cdist and
pack_batch are compiled alone from the shipped files. Coordinates requiring grad raise: real by this file's
convention. Every scenario runs :111 and :117 out of place: they write topk's indices output, which topk saves
(a miss, see precision.md)."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

SRC = src("pointtorch/operations/torch/_neighbor_search.py")
assert linecache.getline(SRC, 93).strip() == "dists[dists.isnan()] = torch.inf"
OUT = "dists = dists.masked_fill(dists.isnan(), torch.inf)"
assert linecache.getline(SRC, 111).strip() == "neighbor_indices += batch_start_index"
assert linecache.getline(SRC, 117).strip() == "neighbor_indices[invalid_neighbor_mask] = invalid_neighbor_index"
# a miss: topk saves its indices output, which :111 and :117 write; every scenario runs them out of place
IDX = {111: "neighbor_indices = neighbor_indices + batch_start_index",
       117: "neighbor_indices = neighbor_indices.masked_fill(invalid_neighbor_mask, invalid_neighbor_index)"}


def run(replace, grad=True):
    def go():
        ns = {"torch": torch}
        compile_alone(src("pointtorch/operations/torch/_pack_batch.py"), {"pack_batch"}, ns)
        compile_alone(SRC, {"neighbor_search_cdist"}, ns, replace={**IDX, **replace})
        torch.manual_seed(0)
        support = torch.randn(7, 3, requires_grad=grad)
        query = torch.randn(5, 3, requires_grad=grad)
        _, dist = ns["neighbor_search_cdist"](support, query, torch.tensor([4, 3]), torch.tensor([3, 2]), radius=2.0)
        if grad:
            dist[torch.isfinite(dist)].sum().backward()
    return go


F = "pointtorch/operations/torch/_neighbor_search.py:93:IPF104"
attempt(F, "path", "support and query coordinates requiring grad, radius 2, backward from the finite neighbour "
        "distances", run({}))
attempt(F, "control", ":93 as masked_fill out of place", run({93: OUT}))
attempt(F, "context", "coordinates without grad, as shipped", run({}, grad=False))


def miss():
    ns = {"torch": torch}
    compile_alone(src("pointtorch/operations/torch/_pack_batch.py"), {"pack_batch"}, ns)
    compile_alone(SRC, {"neighbor_search_cdist"}, ns, replace={93: OUT})
    support, query = torch.randn(7, 3, requires_grad=True), torch.randn(5, 3, requires_grad=True)
    _, dist = ns["neighbor_search_cdist"](support, query, torch.tensor([4, 3]), torch.tensor([3, 2]), radius=2.0)
    dist[torch.isfinite(dist)].sum().backward()


attempt(F, "context", "only :93 out of place, :111/:117 as shipped: raises on topk's saved indices (a miss)", miss)
