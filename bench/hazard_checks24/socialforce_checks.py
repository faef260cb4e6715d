"""socialforce 0.2.3 (socialforce/stateutils.py:16 `desired_directions`): the proven finding of `inplacefix check`
(stop 55, fresh55, end of stop). `norm_factors[norm_factors == 0.0] = 1.0` writes the output of
`torch.linalg.norm` (:15), which the vector norm saves for backward. The pedestrian state (positions, velocities,
destinations) that requires grad, as when the differentiable simulator is trained through its states, makes
backward of the desired directions raise: real by this file's convention (an input that requires grad; the
simulator's own training differentiates the potentials' parameters). `desired_directions` is compiled alone from
the shipped file."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("socialforce/stateutils.py")
assert linecache.getline(PATH, 16).strip() == "norm_factors[norm_factors == 0.0] = 1.0"


def run(control=False):
    replace = {16: "norm_factors = torch.where(norm_factors == 0.0, torch.ones_like(norm_factors), norm_factors)"} \
        if control else {}
    ns = compile_alone(PATH, {"desired_directions"}, {"torch": torch}, replace=replace)

    def go():
        state = torch.randn(5, 10, requires_grad=True)
        ns["desired_directions"](state * 1.0).sum().backward()
    return go


FID = "socialforce/stateutils.py:16:IPF104"
attempt(FID, "path", "desired_directions on 5 pedestrians' states that require grad: raises", run())
attempt(FID, "control", "the same with :16 out of place (torch.where): runs", run(control=True))
