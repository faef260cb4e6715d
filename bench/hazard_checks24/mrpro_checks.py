"""mrpro 0.261015 (mrpro/algorithms/csm/inati.py:61, :64, :68 `inati`, mrpro/algorithms/csm/walsh.py:64 `walsh`,
mrpro/phantoms/EllipsePhantom.py:71 `EllipsePhantom.kspace`): the proven findings of `inplacefix check` (stop 56,
fresh56, end of stop). Run with /work/venvs/real/bin/python (torch 2.13.0 CPU and einops; nothing of mrpro
installed): csm/inati.py and csm/walsh.py are imported from the unpacked wheel as bare packages (mrpro's __init__
files, which import h5py and the data classes, are not run); `EllipsePhantom.kspace` is compiled alone from the
shipped file with stand-in ellipses. Controls rewrite lines with `_rewrite.rewritten`.

- inati.py:61, :64: the power iteration normalises in place, `singular_vector /= singular_vector.norm(...) + eps`,
  the vector that norm saved; :68 `phase /= phase.abs() + eps` writes what abs saved. Coil images that require grad
  (a coil-sensitivity estimate inside a differentiable, learned reconstruction), backward of the maps: raises; each
  line isolated by the other two made out of place, the control all three.
- walsh.py:64: `v /= v.norm(dim=0)` in the same kind of power iteration: raises; out of place runs.
- EllipsePhantom.py:71: `arg[arg < 1e-6] = 1e-6` writes the output of `torch.sqrt` (:70), which sqrt saves.
  k-space positions that require grad (trajectory optimisation against the analytic phantom), backward of the
  k-space data: raises; torch.where runs.

Real by this file's convention (inputs that require grad; mrpro's own recon calls hand measured data)."""

import _shim  # noqa: F401
import linecache
import os
import sys
import types

import torch
from _check import attempt
from _fresh53 import ROOT, compile_alone, src
from _rewrite import rewritten

_base = os.path.join(ROOT, "mrpro")
for name in ("mrpro", "mrpro.algorithms", "mrpro.algorithms.csm", "mrpro.data", "mrpro.utils", "mrpro.phantoms"):
    pkg = types.ModuleType(name)
    pkg.__path__ = [os.path.join(_base, *name.split("."))]
    sys.modules[name] = pkg
import mrpro.algorithms.csm.inati as inati  # noqa: E402
import mrpro.algorithms.csm.walsh as walsh  # noqa: E402

INATI = {61: "singular_vector /= singular_vector.norm(dim=-1, keepdim=True) + eps",
         64: "singular_vector /= singular_vector.norm(dim=-1, keepdim=True) + eps",
         68: "phase /= phase.abs() + eps"}
for n, text in INATI.items():
    assert linecache.getline(inati.__file__, n).strip() == text, n
assert linecache.getline(walsh.__file__, 64).strip() == "v /= v.norm(dim=0)"
PHANTOM = src("mrpro/phantoms/EllipsePhantom.py")
assert linecache.getline(PHANTOM, 71).strip() == "arg[arg < 1e-6] = 1e-6  # avoid zeros"

OOP = {61: ("    singular_vector /= singular_vector.norm(dim=-1, keepdim=True) + eps\n    for",
            "    singular_vector = singular_vector / (singular_vector.norm(dim=-1, keepdim=True) + eps)\n    for"),
       64: ("        singular_vector /= singular_vector.norm(dim=-1, keepdim=True) + eps",
            "        singular_vector = singular_vector / (singular_vector.norm(dim=-1, keepdim=True) + eps)"),
       68: ("phase /= phase.abs() + eps", "phase = phase / (phase.abs() + eps)")}


def coil_images():
    torch.manual_seed(0)
    return torch.randn(4, 1, 8, 8, dtype=torch.complex64, requires_grad=True)


def run_inati(shipped):
    fn = rewritten(inati.inati, [OOP[n] for n in OOP if n != shipped])

    def go():
        x = coil_images()
        fn(x * 1.0, 3).abs().sum().backward()
        assert x.grad is not None
    return go


def run_walsh(control):
    fn = rewritten(walsh.walsh, [("v /= v.norm(dim=0)", "v = v / v.norm(dim=0)")]) if control else walsh.walsh

    def go():
        x = coil_images()
        fn(x * 1.0, 3).abs().sum().backward()
        assert x.grad is not None
    return go


def run_phantom(control):
    ns = compile_alone(PHANTOM, {"EllipsePhantom.kspace"}, {"torch": torch}, replace={
        71: "arg = torch.where(arg < 1e-6, torch.full_like(arg, 1e-6), arg)"} if control else {})

    def go():
        ellipses = [types.SimpleNamespace(center_x=0.1, center_y=-0.1, radius_x=0.3, radius_y=0.2, intensity=1.0),
                    types.SimpleNamespace(center_x=-0.2, center_y=0.0, radius_x=0.1, radius_y=0.25, intensity=0.5)]
        this = types.SimpleNamespace(ellipses=ellipses)
        ky = torch.linspace(-8.0, 8.0, 5).view(-1, 1).repeat(1, 5).requires_grad_(True)
        kx = torch.linspace(-8.0, 8.0, 5).view(1, -1).repeat(5, 1)
        ns["kspace"](this, ky, kx).abs().sum().backward()
        assert ky.grad is not None
    return go


for n in INATI:
    FID = f"mrpro/algorithms/csm/inati.py:{n}:IPF101"
    attempt(FID, "path", f"inati on 4 coil images (8x8) that require grad, smoothing 3, :{n} as shipped, the other two "
            "out of place, backward of the maps: raises", run_inati(n))
    attempt(FID, "control", "all three out of place: runs", run_inati(None))
FID = "mrpro/algorithms/csm/walsh.py:64:IPF101"
attempt(FID, "path", "walsh on 4 coil images that require grad, smoothing 3, backward of the maps: raises",
        run_walsh(False))
attempt(FID, "control", "the same with :64 out of place: runs", run_walsh(True))
FID = "mrpro/phantoms/EllipsePhantom.py:71:IPF104"
attempt(FID, "path", "kspace of two ellipses on a 5x5 grid including k = 0, ky that requires grad: raises",
        run_phantom(False))
attempt(FID, "control", "the same with :71 out of place (torch.where): runs", run_phantom(True))
