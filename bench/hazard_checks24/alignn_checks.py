"""alignn (md/integrators.py): the one proven finding of `inplacefix check` on main d1b4fd6 (stop 51, prec51b):
`maxwell_boltzmann(masses, T)` draws `v = torch.randn(...) * sigma` (sigma from masses) then removes the drift in
place, `v -= (masses.unsqueeze(-1) * v).sum(dim=0, keepdim=True) / masses.sum()` (line 55: the product saves v for
masses' gradient). The module imports only torch and the standard library: loaded as shipped from its file (the package's
__init__ needs ase). Path: masses
requiring grad (a differentiable mass parameter), backward through the velocities: raises. Control: line 55 as
`v = v - (...)`: runs. Context: alignn's MD draws velocities from fixed atomic masses (no grad): runs; real by
this file's convention (an input requiring grad raises)."""

import _shim  # noqa: F401
import os

import torch
from _check import attempt
from _prec51b import PK2, compile_alone

import importlib.util  # noqa: E402
_spec = importlib.util.spec_from_file_location("integrators", os.path.join(PK2, "alignn/md/integrators.py"))
integrators = importlib.util.module_from_spec(_spec)
import sys  # noqa: E402
sys.modules["integrators"] = integrators
_spec.loader.exec_module(integrators)

SRC = integrators.__file__
FINDING = "alignn/md/integrators.py:55:IPF101"
LINE = "v -= (masses.unsqueeze(-1) * v).sum(dim=0, keepdim=True) / masses.sum()"
import linecache  # noqa: E402
assert LINE in linecache.getline(SRC, 55)


def run(control, grad=True):
    def go():
        fn = integrators.maxwell_boltzmann
        if control:
            ns = compile_alone(SRC, {"maxwell_boltzmann", "kinetic_energy", "instantaneous_temperature"},
                               dict(vars(integrators)), replace={55: LINE.replace("v -= ", "v = v - ")})
            fn = ns["maxwell_boltzmann"]
        torch.manual_seed(0)
        masses = torch.tensor([12.0, 1.0, 1.0, 16.0], dtype=torch.float64, requires_grad=grad)
        v = fn(masses, 300.0)
        if grad:
            (v ** 2).sum().backward()
    return go


attempt(FINDING, "path", "maxwell_boltzmann(masses requiring grad, 300 K), backward", run(False))
attempt(FINDING, "control", "line 55 out of place (v = v - ...)", run(True))
attempt(FINDING, "context", "fixed masses (alignn's MD): no grad", run(False, grad=False))
