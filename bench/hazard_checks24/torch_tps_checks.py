"""torch-tps 1.2.2 (torch_tps/thin_plate_spline.py:230 `ThinPlateSpline._radial_distance`): the proven finding of
`inplacefix check` (stop 56, fresh56, end of stop). For an even power (the TPS kernel r^2 log r of 2-D points),
`dist[dist == 0] = 1` writes the output of `torch.cdist` (:217), which cdist saves for backward. Transforming points
that require grad (a warp whose query points come from a network, or fitting control points by gradient) makes
backward raise: real by this file's convention (an input that requires grad). The package needs only torch and is
imported from the unpacked wheel (as a bare package: its __init__ reads the installed version); the control rewrites
:230 out of place with `_rewrite.rewritten`."""

import _shim  # noqa: F401
import linecache
import os
import sys
import types

import torch
from _check import attempt
from _fresh53 import ROOT
from _rewrite import replaced, rewritten

_pkg = types.ModuleType("torch_tps")  # a bare package: its __init__ reads the installed version
_pkg.__path__ = [os.path.join(ROOT, "torch_tps", "torch_tps")]
sys.modules["torch_tps"] = _pkg
import torch_tps.thin_plate_spline as tps  # noqa: E402

assert linecache.getline(tps.__file__, 230).strip() == "dist[dist == 0] = 1  # phi(r) = r^power log(r) ->  (phi(0) = 0)"
OOP = ("dist[dist == 0] = 1", "dist = torch.where(dist == 0, torch.ones_like(dist), dist)")


def run(control=False, fit_grad=False):
    method = rewritten(tps.ThinPlateSpline._radial_distance, [OOP]) if control else \
        tps.ThinPlateSpline._radial_distance

    def go():
        torch.manual_seed(0)
        src_pts = torch.rand(6, 2)
        dst_pts = src_pts + 0.05 * torch.randn(6, 2)
        query = torch.rand(4, 2)
        with replaced(tps.ThinPlateSpline, "_radial_distance", method):
            spline = tps.ThinPlateSpline(alpha=0.1)
            if fit_grad:
                src_pts.requires_grad_(True)
                out = spline.fit(src_pts, dst_pts).transform(query)
                leaf = src_pts
            else:
                query.requires_grad_(True)
                out = spline.fit(src_pts, dst_pts).transform(query)
                leaf = query
        out.sum().backward()
        assert leaf.grad is not None
    return go


FID = "torch_tps/thin_plate_spline.py:230:IPF104"
attempt(FID, "path", "2-D TPS fitted on 6 control points, transform of query points that require grad, backward: "
        "raises", run())
attempt(FID, "control", "the same with :230 out of place (torch.where): runs", run(control=True))
attempt(FID, "path", "control points that require grad, fit and transform, backward: raises", run(fit_grad=True))
attempt(FID, "control", "the same with :230 out of place: runs", run(control=True, fit_grad=True))
