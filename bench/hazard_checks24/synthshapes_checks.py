"""synthshapes 0.1.5 (SynthShapes/blending.py:61 `Blender.forward`): the proven finding of `inplacefix check`
(stop 54, fresh54b, end of stop). `background /= background.std()` writes the background that `std` (same line)
saved. `Blender` blends synthetic shapes into an intensity image for augmentation (no grad in its own use): real by
this file's convention (a background that requires grad). `Blender.forward` is compiled alone from the shipped file
(stand-in self: fixed alpha and intensity shift instead of cornucopia samplers; nothing of SynthShapes imported)."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("SynthShapes/blending.py")
assert linecache.getline(PATH, 61).strip() == "background /= background.std()"


def run(control=False):
    replace = {61: "background = background / background.std()"} if control else {}
    ns = compile_alone(PATH, {"Blender.forward"}, {"torch": torch}, replace=replace)

    def go():
        me = types.SimpleNamespace(alpha=lambda: 2.0, intensity_shift=lambda: 1.0)
        leaf = torch.rand(1, 8, 8, 8, requires_grad=True)
        fg = torch.zeros(1, 8, 8, 8)
        fg[:, 2:5, 2:5, 2:5] = torch.rand(3, 3, 3)
        out = ns["forward"](me, fg, leaf * 1.0, fg > 0)
        out.sum().backward()
    return go


FID = "SynthShapes/blending.py:61:IPF101"
attempt(FID, "path", "Blender.forward with a background that requires grad: raises", run())
attempt(FID, "control", "the same with :61 out of place: runs", run(control=True))
