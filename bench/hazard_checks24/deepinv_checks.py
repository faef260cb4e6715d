"""deepinv 0.5.0: the two proven findings of `inplacefix check` (main at 3c26737, stop 43).

- `ThinPlateSpline._radial_distance` (deepinv/physics/functional/interp.py): `dist = torch.cdist(X,
  control_points)` (line 200; cdist saves its output) then `dist[dist == 0] = 1` (line 203). The
  path calls it with points requiring grad and calls backward; the control the same with the write
  into a copy (`dist = dist.clone(); dist[dist == 0] = 1`, one line).
- `RAM.forward` (deepinv/models/ram.py:387): `for yi in y: yi /= ...` inside
  `if isinstance(y, TensorList):`, reported as a write into a view from iterating a tensor (the
  error PyTorch raises for `unbind` views). A TensorList is deepinv's list of tensors: iterating
  it hands out its tensors, not views. The path runs `RAM(pretrained=False).forward` on a
  TensorList of activations with grad on, stopped right after line 387 ran (the write raises
  there, at once, if it raises at all)."""

import _shim  # noqa: F401

import torch
from _check import attempt, expect_line, run_through
from _rewrite import rewritten
from deepinv.models import RAM
from deepinv.physics.functional.interp import ThinPlateSpline
from deepinv.utils import TensorList

TPS = "deepinv/physics/functional/interp.py:203:IPF104"
RAM_ID = "deepinv/models/ram.py:387:IPF106"
expect_line(ThinPlateSpline._radial_distance, 203, "dist[dist == 0] = 1")
expect_line(RAM.forward, 387, "yi /= rescale_val.view([yi.shape[0]] + [1] * (yi.ndim - 1))")


def radial(edits=()):
    def run():
        torch.manual_seed(0)
        spline = ThinPlateSpline(alpha=0.0)
        spline.control_points = torch.rand(5, 2)
        function = rewritten(ThinPlateSpline._radial_distance, edits) if edits else ThinPlateSpline._radial_distance
        x = torch.rand(6, 2, requires_grad=True)
        function(spline, x * 1.0).sum().backward()
    return run


attempt(TPS, "path", "ThinPlateSpline._radial_distance(X), X requiring grad, backward", radial())
attempt(TPS, "control", "the same with `dist = dist.clone(); dist[dist == 0] = 1`",
        radial([("dist[dist == 0] = 1", "dist = dist.clone(); dist[dist == 0] = 1")]))


def ram():
    torch.manual_seed(0)
    model = RAM(pretrained=False)
    y = TensorList([torch.rand(1, 3, 32, 32, requires_grad=True) * 1.0, torch.rand(1, 3, 32, 32, requires_grad=True) * 1.0])
    run_through(model.forward, 387, y, sigma=0.1)


attempt(RAM_ID, "path", "RAM(pretrained=False).forward(TensorList of two activations, sigma=0.1) with grad on, "
        "stopped after line 387 ran", ram)
