"""neuroreg 0.12.0 (neuroreg/bbreg/optimize.py:518 `BBRModel._params_to_matrix`): the proven finding of `inplacefix
check` (stop 55, fresh55, end of stop). With 9 degrees of freedom, `mat[:3, :3] = mat[:3, :3] * scale.unsqueeze(0)`
writes the block of `mat` that the same line's `*` saved for the gradient of `scale` (exp of the optimised
parameters). `BBRModel.forward` builds the matrix from `self.transform_params`, an `nn.Parameter` the registration
optimises, so the library's own use raises (dof 9). `BBRModel._params_to_matrix` is compiled alone from the shipped
file (stand-in self: the parameters, dof, cpu); the matrix is differentiated as forward's cost would be."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("neuroreg/bbreg/optimize.py")
LINE = "mat[:3, :3] = mat[:3, :3] * scale.unsqueeze(0)"
assert linecache.getline(PATH, 518).strip() == LINE


def run(dof=9, control=False):
    replace = {518: "mat = torch.cat([torch.cat([mat[:3, :3] * scale.unsqueeze(0), mat[:3, 3:]], 1), mat[3:]], 0)"} \
        if control else {}
    ns = compile_alone(PATH, {"BBRModel._params_to_matrix"}, {"torch": torch}, replace=replace)

    def go():
        params = torch.nn.Parameter(torch.randn(dof) * 0.1)
        me = types.SimpleNamespace(transform_params=params, dof=dof, device="cpu")
        mat = ns["_params_to_matrix"](me)
        (mat @ torch.randn(4, 5)).square().sum().backward()
        assert params.grad is not None
    return go


FID = "neuroreg/bbreg/optimize.py:518:IPF104"
attempt(FID, "path", "_params_to_matrix with dof 9 (rotation, translation, scale), parameters that require grad "
        "(as BBRModel optimises them), backward of a cost on the matrix: raises", run())
attempt(FID, "control", "the same with :518 out of place (the scaled block concatenated): runs", run(control=True))
attempt(FID, "context", "dof 6 (no scaling, :518 not reached): runs", run(dof=6))
