"""cellpose 4.2.1.1 (denoise.py:115, :133, `add_noise`): the proven findings of `inplacefix check` on main 7911fb7
(stop 53, fresh53). add_noise is compiled alone from the shipped file and stopped right after the line checked.
- :133 `gfilt0 /= gfilt0.sum(...)` writes the output of `torch.exp` (:131), which exp saves. Blur widths (sigma0)
  requiring grad raise: real by this file's convention (the denoising trainer draws them at random, no grad).
- :115 `xr[ii] = torch.clip(xr[ii], 0.05, 1.5)`: `ii` is `torch.nonzero(ds > 1).flatten()`, an index tensor, so
  `xr[ii]` is an advanced-index copy, and clip saves that copy, not xr; the write into xr changes nothing saved.
  With gblur a tensor requiring grad (so that xr requires grad), backward from the blur widths runs: false in
  every use. Context: the same line with a basic slice (`xr[:2]`, a view) raises."""

import _shim  # noqa: F401
import linecache

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src, then

SRC = src("cellpose/denoise.py")
L115, L116, L133 = (linecache.getline(SRC, n).strip() for n in (115, 116, 133))
assert L115 == "xr[ii] = torch.clip(xr[ii], 0.05, 1.5)" and L133 == "gfilt0 /= gfilt0.sum(axis=-1, keepdims=True)"
assert L116 == "sigma0 = diams[iblur] / 30. * gblur * xr[iblur]"


def blur_widths(replace115=None, grad=True):
    def go():
        torch.manual_seed(0)
        np.random.seed(0)
        rep = {116: then(L116, "return sigma0")}
        if replace115:
            rep[115] = replace115
        ns = compile_alone(SRC, {"add_noise"}, {"torch": torch, "np": np}, replace=rep)
        gblur = torch.tensor(1.5, requires_grad=grad)
        sigma0 = ns["add_noise"](torch.rand(3, 1, 16, 16), blur=1.0, downsample=1.0, iso=False, gblur=gblur)
        if grad:
            sigma0.sum().backward()
    return go


def gaussian(replace133, grad=True):
    def go():
        ns = compile_alone(SRC, {"add_noise"}, {"torch": torch, "np": np}, replace={133: then(replace133, "return gfilt0")})
        sigma0 = torch.tensor([1.0, 2.0, 1.5], requires_grad=grad)
        gfilt0 = ns["add_noise"](torch.rand(3, 1, 16, 16), blur=1.0, downsample=0.0, sigma0=sigma0, sigma1=sigma0)
        if grad:
            gfilt0.sum().backward()
    return go


F115, F133 = "cellpose/denoise.py:115:IPF104", "cellpose/denoise.py:133:IPF101"
attempt(F115, "path", "iso=False, every image downsampled and blurred, gblur a tensor requiring grad (xr requires "
        "grad), backward from the blur widths: the clip saved a copy, runs", blur_widths())
attempt(F115, "context", "the same with :115 on a basic slice, `xr[:2] = torch.clip(xr[:2], 0.05, 1.5)`: raises",
        blur_widths("xr[:2] = torch.clip(xr[:2], 0.05, 1.5)"))
attempt(F133, "path", "blur widths sigma0 requiring grad, backward from the normalized filter", gaussian(L133))
attempt(F133, "control", ":133 out of place", gaussian("gfilt0 = gfilt0 / gfilt0.sum(axis=-1, keepdims=True)"))
attempt(F133, "context", "widths without grad (the trainer's random draws), as shipped", gaussian(L133, grad=False))
