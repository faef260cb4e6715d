"""pipablepytorch3d 0.7.6 (`pytorch3d`, implicitron/models/renderer/ray_tracing.py:296, :304,
`RayTracing.sphere_tracing`): the proven findings of `inplacefix check` on main 7911fb7 (stop 53, fresh53). Each
tracing step computes `cam_loc + acc_start_dis.reshape(...) * ray_directions` (:271/:275, again at :300/:308): the
product saves the reshaped view of acc_start_dis / acc_end_dis when the ray directions require grad; the backward
line-search step then writes `acc_start_dis[not_projected_start] -= ...` (:296) and `acc_end_dis[...] += ...`
(:304). sphere_tracing is compiled alone from the shipped file with a stand-in self carrying the class defaults
(sdf_threshold 5e-5, line_search_step 0.5, line_step_iters 1, sphere_tracing_iters 10). Scene: rays from z=-2
along +z (slightly spread) through the unit bounding sphere, and an SDF twice the true distance to a sphere of
radius 0.5 (an overestimating SDF overshoots, so the line search runs). Ray directions requiring grad raise: real
by this file's convention (implicitron's SDF renderer calls the tracer under torch.no_grad(),
sdf_renderer.py:114). Each line is run with the other
out of place (index_put)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

SRC = src("pytorch3d/implicitron/models/renderer/ray_tracing.py")
assert linecache.getline(SRC, 296).strip() == "acc_start_dis[not_projected_start] -= ("
assert linecache.getline(SRC, 304).strip() == "acc_end_dis[not_projected_end] += ("
OUT296 = ("acc_start_dis = acc_start_dis.index_put((not_projected_start,), acc_start_dis[not_projected_start] - "
          "((1 - self.line_search_step) / (2**not_proj_iters)) * curr_sdf_start[not_projected_start])")
OUT304 = ("acc_end_dis = acc_end_dis.index_put((not_projected_end,), acc_end_dis[not_projected_end] + "
          "((1 - self.line_search_step) / (2**not_proj_iters)) * curr_sdf_end[not_projected_end])")
SELF = types.SimpleNamespace(sdf_threshold=5e-5, line_search_step=0.5, line_step_iters=1, sphere_tracing_iters=10)


def run(replace, grad=True):
    def go():
        ns = compile_alone(SRC, {"RayTracing.sphere_tracing"}, {"torch": torch}, replace=replace)
        n = 6
        cam_loc = torch.tensor([[[0.0, 0.0, -2.0]]])
        xy = torch.linspace(-0.2, 0.2, n)
        dirs = torch.nn.functional.normalize(torch.stack([xy, xy.flip(0), torch.ones(n)], -1), dim=-1)[None]
        dirs = dirs.detach().requires_grad_(grad)
        # entry/exit distances of each ray through the unit sphere (|c + t d| = 1)
        b = (cam_loc * dirs).sum(-1)
        disc = (b ** 2 - ((cam_loc ** 2).sum(-1) - 1)).clamp_min(0).sqrt()
        inter = torch.stack([-b - disc, -b + disc], -1).detach()
        sdf = lambda p: 2 * (p.norm(dim=-1) - 0.5)
        out = ns["sphere_tracing"](SELF, 1, n, sdf, cam_loc, dirs, torch.ones(1, n, dtype=torch.bool), inter)
        if grad:
            (out[0].sum() + out[2].sum() + out[3].sum()).backward()
    return go


F296 = "pytorch3d/implicitron/models/renderer/ray_tracing.py:296:IPF104"
F304 = "pytorch3d/implicitron/models/renderer/ray_tracing.py:304:IPF104"
attempt(F296, "path", "ray directions requiring grad, :304 out of place, backward from the traced points and distances",
        run({304: OUT304}))
attempt(F296, "control", ":296 and :304 out of place", run({296: OUT296, 304: OUT304}))
attempt(F304, "path", "ray directions requiring grad, :296 out of place, :304 as shipped", run({296: OUT296}))
attempt(F304, "control", ":296 and :304 out of place", run({296: OUT296, 304: OUT304}))
attempt(F296, "context", "rays without grad, as shipped", run({}, grad=False))
