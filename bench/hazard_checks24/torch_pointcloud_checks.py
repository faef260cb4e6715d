"""torch-pointcloud 0.0.18 (losses/centerpoint.py:297 `_assign_sparse_scene`; models/pointgpt.py:57 `morton_sort`):
the proven findings of `inplacefix check` on main 7911fb7 (stop 53, fresh53). The functions are compiled alone from
the shipped files (with `_voxel_gaussians` and ops/heatmap.py's `gaussian_radius`).
- centerpoint :297: `heatmap.scatter_reduce_(..., reduce="amax")` twice; the first (:296) saves its result (amax's
  backward reads it), which the second writes. Boxes requiring grad (the splat values are Gaussians of the box
  centres) raise: real by this file's convention (CenterPoint builds targets from ground-truth boxes, no grad).
- pointgpt :57: `dist = torch.cdist(center, center)` (cdist saves its output), then `dist.masked_fill_(...)`. dist
  only feeds argmin; morton_sort returns the long `order`, so no backward can reach cdist's node: false in every
  use. Context: the same function returning dist as well raises when dist is differentiated."""

import _shim  # noqa: F401
import linecache
from typing import Sequence, Tuple

import torch
from torch import Tensor
from _check import attempt
from _fresh53 import compile_alone, src

CP, GPT = src("torch_pointcloud/losses/centerpoint.py"), src("torch_pointcloud/models/pointgpt.py")
HEAT = src("torch_pointcloud/ops/heatmap.py")
L297 = linecache.getline(CP, 297).strip()
assert L297.startswith("heatmap.scatter_reduce_(0, rows, _voxel_gaussians(dist_nearest[valid]")
assert linecache.getline(GPT, 57).strip() == 'dist.masked_fill_(eye.unsqueeze(0), float("inf"))'
OUT297 = "heatmap = " + L297.replace("heatmap.scatter_reduce_(", "heatmap.scatter_reduce(")


def scene(replace, grad=True):
    def go():
        ns = {"torch": torch, "Tensor": Tensor, "Sequence": Sequence, "Tuple": Tuple}
        compile_alone(HEAT, {"gaussian_radius"}, ns)
        compile_alone(CP, {"_assign_sparse_scene", "_voxel_gaussians"}, ns, replace=replace)
        boxes = torch.tensor([[2.0, 3.0, 0.0, 4.0, 3.0, 1.5, 0.1], [6.0, 5.0, 0.0, 2.0, 5.0, 1.5, 0.3]],
                             requires_grad=grad)
        spatial_xy = torch.tensor([[x, y] for x in range(8) for y in range(8)], dtype=torch.float)
        heat, reg, _, _ = ns["_assign_sparse_scene"](
            boxes, torch.tensor([0, 0]), 2, spatial_xy, (8, 8), (1.0, 1.0, 1.0), (0.0, 0.0, -2.0, 8.0, 8.0, 2.0), 1,
            num_max_objs=4, gaussian_overlap=0.1, min_radius=1)
        if grad:
            (heat.sum() + reg.sum()).backward()
    return go


def morton(replace, grad=True, with_dist=False):
    def go():
        rep = dict(replace)
        if with_dist:
            rep[69] = "return order, dist"
        ns = compile_alone(GPT, {"morton_sort"}, {"torch": torch, "Tensor": Tensor}, replace=rep)
        center = torch.randn(2, 6, 3, requires_grad=grad)
        out = ns["morton_sort"](center)
        if with_dist:
            out[1][torch.isfinite(out[1])].sum().backward()
        else:
            assert out.dtype == torch.long and not out.requires_grad  # nothing to differentiate
    return go


assert linecache.getline(GPT, 69).strip() == "return order"
F297, F57 = "torch_pointcloud/losses/centerpoint.py:297:IPF103", "torch_pointcloud/models/pointgpt.py:57:IPF103"
attempt(F297, "path", "two boxes of one class requiring grad, backward from the heatmap and regression targets", scene({}))
attempt(F297, "control", ":297 as an out-of-place scatter_reduce", scene({297: OUT297}))
attempt(F297, "context", "ground-truth boxes without grad (CenterPoint's targets), as shipped", scene({}, grad=False))
attempt(F57, "path", "centres requiring grad, grad on: morton_sort returns only the long order, no backward reaches "
        "cdist", morton({}))
attempt(F57, "context", "morton_sort made to return dist too, differentiated: raises", morton({}, with_dist=True))
attempt(F57, "control", "that, with :57 as masked_fill out of place: runs",
        morton({57: 'dist = dist.masked_fill(eye.unsqueeze(0), float("inf"))'}, with_dist=True))
