"""graph-pes 1.0.2 (graph_pes/models/eddp.py:358, `EDDP.pre_fit`): the proven finding of `inplacefix check` on
main 97a004a (stop 52, fresh52). `_std = X.std(dim=0)` (std saves its output), then `_std[torch.isnan(_std) |
(_std < 1e-6)] = 1`. But what leaves the written tensor is only `self.scales.data = _std` (line 360): a `.data`
assignment, which carries no history, so no backward can ever reach std's node. False.
`EDDP.pre_fit` is compiled alone from the shipped file (graph-pes imports ase and its own graph types) and called
with a stand-in `self`: `featurise` returns features computed from positions requiring grad (graph-pes takes
forces as the gradient of the energy with respect to positions), `shifts`/`scales` Parameters as `__init__`
builds them. After pre_fit, the model's own use of the fitted parameters, `(f - self.shifts) / self.scales`
(line 346) on fresh features, is backpropagated."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh52 import compile_alone, src

SRC = src("graph_pes/models/eddp.py")
assert linecache.getline(SRC, 356).strip() == "_std = X.std(dim=0)"
assert linecache.getline(SRC, 358).strip() == "_std[torch.isnan(_std) | (_std < 1e-6)] = 1"
assert linecache.getline(SRC, 360).strip() == "self.scales.data = _std"
assert linecache.getline(SRC, 346).strip() == "f = (f - self.shifts) / self.scales"


def run(replace):
    def go():
        ns = compile_alone(SRC, {"EDDP.pre_fit"}, {"torch": torch}, replace=replace)
        torch.manual_seed(0)
        pos = torch.randn(6, 3, requires_grad=True)
        w = torch.randn(3, 4)
        featurise = lambda graphs: torch.cat([(pos @ w).tanh(), torch.ones(6, 1)], dim=1)  # noqa: E731
        me = types.SimpleNamespace(featurise=featurise, shifts=torch.nn.Parameter(torch.zeros(5)),
                                   scales=torch.nn.Parameter(torch.ones(5)))
        ns["pre_fit"](me, None)
        f = (featurise(None) - me.shifts) / me.scales
        f.pow(2).sum().backward()
    return go


F358 = "graph_pes/models/eddp.py:358:IPF104"
attempt(F358, "path", "pre_fit on features from positions requiring grad (a constant column: its std is "
        "replaced), then the fitted model's features backpropagated", run({}))
attempt(F358, "context", "line 360 as `self.scales = _std` (the written std output reaches the loss): raises",
        run({360: "self.scales = _std"}))
