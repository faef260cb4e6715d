"""bioelectrics 0.3.0 (ionic/model.py:209 `IonicTissue.with_vmem`): the proven finding of `inplacefix check`
(stop 53, fresh53b, end of stop). `x[:, k] = x[:, k] + (v - self.vmem(x[:, : self.n_ions])) / gain` writes x, and
the check reads `vmem`'s `c_in * self._bcast(self._z, ndim)` (line 181) as saving the view of x. It saves `c_in`
only for the gradient of the other operand, `self._z = self.profile.z`, and `IonProfile.z` is a property that
builds `torch.tensor([...])` of ion valences: never requires grad. So nothing saves x, and the write is fine with a
state and a potential that require grad: false. `with_vmem`, `vmem` and `_bcast` are compiled alone from the shipped
file (stand-in self: the mammal profile's five ions and valences as `IonProfile.z` builds them, a unit geometry);
the run stops right after :209 (`return x`) and differentiates x. Context: `_z` requiring grad (never so in
bioelectrics) makes the same line raise."""

import _shim  # noqa: F401
import linecache
import types

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("bioelectrics/ionic/model.py")
assert linecache.getline(PATH, 209).strip() == \
    "x[:, k] = x[:, k] + (v - self.vmem(x[:, : self.n_ions])) / gain"
assert linecache.getline(PATH, 181).strip() == "rho = (c_in * self._bcast(self._z, ndim)).sum(dim=1)"
PROFILES = src("bioelectrics/ionic/profiles.py")
assert "return torch.tensor([SPECIES[n][0] for n in self.ions], dtype=DTYPE)" in open(PROFILES).read()


def run(z_grad=False, control=False):
    replace = {210: "return x"}
    if control:
        replace[209] = "x = torch.cat([x[:, :k], (x[:, k] + (v - self.vmem(x[:, : self.n_ions])) / gain)" \
                       ".unsqueeze(1), x[:, k + 1:]], dim=1)"
    ns = compile_alone(PATH, {"IonicTissue.with_vmem", "IonicTissue.vmem", "IonicTissue._bcast"},
                       {"torch": torch, "F": 96485.33212, "IonicState": object}, replace=replace)

    def go():
        z = torch.tensor([1.0, 1.0, -1.0, 2.0, -1.0], dtype=torch.float64)  # Na K Cl Ca M, as IonProfile.z builds it
        if z_grad:
            z.requires_grad_(True)
        me = types.SimpleNamespace(_z=z, _ion={"Na": 0, "K": 1, "Cl": 2, "Ca": 3, "M": 4}, n_ions=5, c_m=0.01,
                                   geometry=types.SimpleNamespace(volume=1e-15, area=1e-9))
        me._bcast = lambda vec, nd: ns["_bcast"](me, vec, nd)
        me.vmem = lambda c: ns["vmem"](me, c)
        leaf = torch.rand(1, 9, 4, dtype=torch.float64, requires_grad=True)  # 5 ions + 2 gates x 2 channels, 4 cells
        v = torch.full((1, 4), -0.05, dtype=torch.float64, requires_grad=True)
        x = ns["with_vmem"](me, types.SimpleNamespace(x=leaf * 1.0), v)
        x.sum().backward()
    return go


FID = "bioelectrics/ionic/model.py:209:IPF104"
attempt(FID, "path", "with_vmem up to :209 (return x), state and potential requiring grad, valences as "
        "IonProfile.z builds them (no grad): runs", run())
attempt(FID, "context", "the same with valences that require grad (never in bioelectrics): raises", run(z_grad=True))
attempt(FID, "control", "valences requiring grad, :209 out of place (torch.cat): runs", run(z_grad=True, control=True))
