"""neuromancer 1.5.6: the one proven finding of `inplacefix check` (2bba8c4 and branch prec45, stop
45): `APLU.forward` (modules/activations.py) starts from `y = F.relu(x)` and adds each segment in
place (`y += self.alpha[i] * F.relu(-x + self.beta[i])`, line 122): relu saved its result `y` for
its backward, which the `+=` writes. The path runs the activation as trained (x requiring grad,
alpha and beta parameters) and calls backward; the control has line 122 out of place
(`y = y + ...`). This is the module's own training use: it raises there. Run from the installed
file's source (`functions_from`: `import neuromancer` needs pydot, lightning and more), the method
called with a stand-in `self` holding the module's two parameters."""

import _shim  # noqa: F401

import importlib.util
import types

import torch
from _check import attempt, expect_line
from _rewrite import functions_from, rewritten

FINDING = "neuromancer/modules/activations.py:122:IPF101"
PATH = importlib.util.find_spec("neuromancer").submodule_search_locations[0] + "/modules/activations.py"
forward = functions_from(PATH, ["APLU.forward"])["APLU.forward"]
expect_line(forward, 120, "y = F.relu(x)")
expect_line(forward, 122, "y += self.alpha[i] * F.relu(-x + self.beta[i])")


def aplu(function):
    def run():
        torch.manual_seed(0)
        unit = types.SimpleNamespace(nsegments=2, alpha=torch.nn.Parameter(torch.rand(2)),
                                     beta=torch.nn.Parameter(torch.rand(2)))
        x = torch.randn(4, 3, requires_grad=True)
        function(unit, x).sum().backward()
    return run


attempt(FINDING, "path", "APLU.forward(x requiring grad), alpha and beta parameters, backward", aplu(forward))
attempt(FINDING, "control", "line 122 out of place (`y = y + ...`)",
        aplu(rewritten(forward, [("y += self.alpha[i]", "y = y + self.alpha[i]")])))
