"""pytorch-concepts 1.0.0a7 (torch_concepts/data/scalers/standard.py:39 `zeros_to_one_`): the proven finding of
`inplacefix check` (stop 55, fresh55, end of stop). `StandardScaler.fit` sets `self.std = zeros_to_one_(x.std(...))`
and `zeros_to_one_` writes its argument (`scale.masked_fill_(zeros, 1.0)`), the output of `std`, which std saves.
Fitting the scaler on data that requires grad and differentiating the scaled data raises: real by this file's
convention (an input that requires grad; the scaler is fitted on training data without grad). `zeros_to_one_` and
`StandardScaler` are compiled alone from the shipped file (the `Scaler` base replaced by `object`)."""

import _shim  # noqa: F401
import linecache

import torch
from torch import Tensor
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("torch_concepts/data/scalers/standard.py")
assert linecache.getline(PATH, 39).strip() == "scale.masked_fill_(zeros, 1.0)"


def run(control=False):
    replace = {39: "scale = scale.masked_fill(zeros, 1.0)"} if control else {}
    ns = compile_alone(PATH, {"zeros_to_one_", "StandardScaler"}, {"torch": torch, "Tensor": Tensor},
                       replace=replace, bases={"StandardScaler": ["object"]})

    def go():
        x = torch.randn(50, 4, requires_grad=True)
        scaler = ns["StandardScaler"](axis=0).fit(x)
        scaler.transform(x).square().sum().backward()
    return go


FID = "torch_concepts/data/scalers/standard.py:39:IPF103"
attempt(FID, "path", "StandardScaler(axis=0).fit on data that requires grad, backward of the scaled data: raises",
        run())
attempt(FID, "control", "the same with :39 out of place: runs", run(control=True))
