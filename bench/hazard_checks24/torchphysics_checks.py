"""torchphysics 1.1.2: the two proven findings of `inplacefix check` (2bba8c4 and branch prec45,
stop 45): the boundary samplers of the parallelogram and the triangle (domains/domain2D) walk each
side with `_scale_points_on_side`: `scale = torch.clamp(bound_location / side_length, 0, 1)` saves
`bound_location` (for the gradient of `side_length`, and clamp's input), then
`bound_location -= side_length` (parallelogram.py:219, triangle.py:248) writes it; the next side's
call saves and writes it again. The path runs `_transform_interval_to_boundary` as the samplers do,
with side directions that require grad (a domain whose corners are parameters being learnt:
torchphysics' `params`), and calls backward from the points; the control has the flagged line out
of place. Run from the installed files' source (`import torchphysics` needs matplotlib, scipy and
more), the two methods called with a stand-in `self`."""

import _shim  # noqa: F401

import importlib.util
import types

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten

ROOT = importlib.util.find_spec("torchphysics").submodule_search_locations[0] + "/problem/domains/domain2D/"
CASES = (("parallelogram.py", "ParallelogramBoundary", 219, 2), ("triangle.py", "TriangleBoundary", 248, 3))


def walk(transform, scale, sides):
    def run():
        torch.manual_seed(0)
        corners = torch.randn(1, sides, 2, requires_grad=True)
        dirs = [corners[:, i] * 1.0 for i in range(sides)]
        lengths = [torch.linalg.norm(d, dim=1).view(-1, 1, 1) for d in dirs]
        total = sum(lengths)
        points = torch.zeros((1, 6, 2))
        bound_location = torch.rand((1, 6, 1)) * total
        this = types.SimpleNamespace()
        this._scale_points_on_side = lambda *args: scale(this, *args)
        if sides == 2:
            transform(this, dirs[0], dirs[1], lengths[0], lengths[1], points, bound_location)
        else:
            transform(this, *dirs, *lengths, points, bound_location)
        points.sum().backward()
    return run


for name, cls, line, sides in CASES:
    found = functions_from(ROOT + name, [f"{cls}._transform_interval_to_boundary", f"{cls}._scale_points_on_side"])
    transform, scale = found[f"{cls}._transform_interval_to_boundary"], found[f"{cls}._scale_points_on_side"]
    expect_line(scale, line, "bound_location -= side_length")
    finding = f"torchphysics/problem/domains/domain2D/{name}:{line}:IPF101"
    attempt(finding, "path", f"{cls}._transform_interval_to_boundary, side directions requiring grad, backward from "
            "the points", walk(transform, scale, sides))
    attempt(finding, "control", f"line {line} out of place",
            walk(transform, rewritten(scale, [("bound_location -= side_length",
                                                "bound_location = bound_location - side_length")]), sides))
