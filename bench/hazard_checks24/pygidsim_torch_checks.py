"""pygidsim-torch 0.1.3 (pygidsim_torch/utils.py:70 `calculate_volume`): the proven finding of `inplacefix check`
(stop 56, fresh56, end of stop). `unit_volume[torch.isnan(unit_volume)] = 0` writes the output of
`calculate_unit_volume`'s `torch.sqrt` (:87), which sqrt saves for backward. Lattice parameters that require grad
(fitting a unit cell to a measured GIWAXS pattern through the differentiable simulator) make backward of the volume
raise: real by this file's convention (an input that requires grad; the library builds its crystals from numbers).
The three functions are compiled alone from the shipped file."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("pygidsim_torch/utils.py")
assert linecache.getline(PATH, 70).strip() == "unit_volume[torch.isnan(unit_volume)] = 0"
NAMES = {"calculate_volume", "calculate_unit_volume", "convert_angles_to_radians"}
OOP = "unit_volume = torch.where(torch.isnan(unit_volume), torch.zeros_like(unit_volume), unit_volume)"


DATA71 = "unit_volume.data[unit_volume < min_unit_volume] = 0"


def run(control=False, isolate=True):
    from math import pi
    replace = {70: OOP} if control else {}
    if isolate:
        replace[71] = DATA71
    ns = compile_alone(PATH, NAMES, {"torch": torch, "Tensor": torch.Tensor, "pi": pi}, replace=replace)

    def go():
        lat = torch.tensor([[4.0, 5.0, 6.0, 90.0, 95.0, 100.0], [3.0, 3.0, 8.0, 90.0, 90.0, 120.0]],
                           requires_grad=True)
        ns["calculate_volume"](lat).sum().backward()
        assert lat.grad is not None
    return go


FID = "pygidsim_torch/utils.py:70:IPF104"
attempt(FID, "path", "calculate_volume of two cells whose lattice parameters require grad, :71 through .data: raises",
        run())
attempt(FID, "control", "the same with :70 out of place (torch.where): runs", run(control=True))
attempt(FID, "context", "as shipped: raises", run(isolate=False))
attempt(FID, "control", "as shipped but :70 out of place (:71 then writes where's output, which nothing saved): runs",
        run(control=True, isolate=False))
