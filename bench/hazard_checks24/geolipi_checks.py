"""geolipi 0.1.0 (geolipi/torch_compute/sdf_functions_2d.py:692 `sdf2d_moon`): the proven finding of `inplacefix
check` (stop 58, fresh58, end of stop). `option_2 = th.norm(points, dim=-1) - ra` (:691) saves points (norm saves its
input and output) and `points[..., 0] -= d` (:692) writes it: with query points that require grad (an SDF's gradient
in its points: normals, eikonal terms), backward raises. Real by this file's convention (points that require grad;
:684 `points[..., 1] = th.abs(points[..., 1])` writes the caller's points before, and is put on a fresh copy here so
that :692 raises alone). Out of place (`points = points - offset`), it runs. The function is compiled alone."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("geolipi/torch_compute/sdf_functions_2d.py")
assert linecache.getline(PATH, 684).strip() == "points[..., 1] = th.abs(points[..., 1])"
assert linecache.getline(PATH, 692).strip() == "points[..., 0] -= d"
FRESH_684 = "v = th.abs(points[..., 1]); points = points.clone(); points[..., 1] = v"


def run(shipped):
    replace = {684: FRESH_684}
    if not shipped:
        replace[692] = "points = points - th.stack([d + 0 * points[..., 0], 0 * points[..., 1]], -1)"
    ns = compile_alone(PATH, {"sdf2d_moon"}, {"th": torch, "EPSILON": 1e-9}, replace=replace)

    def go():
        q = torch.rand(16, 2, requires_grad=True)
        d, ra, rb = torch.tensor(0.3), torch.tensor(0.5), torch.tensor(0.4)
        sdf = ns["sdf2d_moon"](q * 2 - 1, d, ra, rb)
        sdf.sum().backward()
        assert q.grad is not None
    return go


FID = "geolipi/torch_compute/sdf_functions_2d.py:692:IPF104"
attempt(FID, "path", "sdf2d_moon(points, d, ra, rb) with query points that require grad (:684 on a fresh copy): the "
        "norm of :691 saved points, `points[..., 0] -= d` spoils it, backward raises", run(True))
attempt(FID, "control", "points = points - (d, 0): runs", run(False))
