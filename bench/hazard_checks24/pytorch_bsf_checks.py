"""pytorch-bsf 0.22.0 (torch_bsf/preprocessing.py:141 `StdScaler.fit`): the proven finding of `inplacefix check`
(stop 56, fresh56, end of stop). `self.stds[~(self.stds > 0.0)] = 1.0` writes the standard deviation that
`torch.std_mean` (:140) returns and saves for backward. `fit_transform` on values that require grad (data that comes
out of a differentiable step), then backward of the standardized values, raises: real by this file's convention (an
input that requires grad; the library fits Bezier simplices to data tensors without grad), the kind of
pytorch-concepts' StandardScaler.fit (fresh55). `StdScaler` is compiled alone from the shipped file."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("torch_bsf/preprocessing.py")
assert linecache.getline(PATH, 141).strip().startswith("self.stds[~(self.stds > 0.0)] = 1.0")
OOP = "self.stds = torch.where(self.stds > 0.0, self.stds, torch.ones_like(self.stds))"


def run(control=False):
    ns = compile_alone(PATH, {"StdScaler"}, {"torch": torch}, replace={141: OOP} if control else {})

    def go():
        torch.manual_seed(0)
        x = torch.randn(20, 3, requires_grad=True)
        values = torch.cat([x * 2.0, torch.ones(20, 1)], dim=1)  # one constant feature: std 0
        ns["StdScaler"]().fit_transform(values).square().sum().backward()
        assert x.grad is not None
    return go


FID = "torch_bsf/preprocessing.py:141:IPF104"
attempt(FID, "path", "StdScaler().fit_transform on values that require grad (one constant feature), backward: raises",
        run())
attempt(FID, "control", "the same with :141 out of place (torch.where): runs", run(control=True))
