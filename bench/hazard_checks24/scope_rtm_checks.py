"""scope-rtm 0.4.13 (scope/biochem/leaf.py:1224 `LeafBiochemistryModel._compute_assimilation`,
scope/canopy/foursail.py:605 `FourSAILModel._hotspot_terms`, scope/canopy/layered_rt.py:169, :170
`LayeredCanopyTransportModel.build`): the proven findings of `inplacefix check` (stop 56, fresh56, end of stop).
scope-rtm is a PyTorch SCOPE written for autograd (its comments rebuild other sweeps "as lists" because in-place
slice writes are "autograd-hostile"), so canopy and leaf parameters that require grad are its own use (retrieval by
gradient descent).

- leaf.py:1224: with a finite mesophyll conductance, `CO2_per_electron[finite_gm] = ...` writes the CO2_per_electron
  that `Ve = Je * CO2_per_electron` (:1200) saved for Je's gradient. An electron transport rate Je that requires
  grad, backward of the net assimilation A: raises; the write on a fresh copy runs.
- foursail.py:605: with a hotspot parameter > 0, `tsstoo[active] = f1` writes the output of `torch.exp(-ks * lai)`
  (:567), which exp saves. FourSAIL with an LAI that requires grad, backward of the canopy reflectances: raises; the
  write on a fresh copy runs.
- layered_rt.py:169, :170: `Ps[:, :nlayers] = Ps[:, :nlayers] * ...` (and Po) write the outputs of the gap
  probability exps (:167, :168), which exp saves (and the slice that the same line's product saved). The layered
  transport built with an LAI that requires grad, backward of Ps (or Po): raises; each isolated by writing the other
  on a fresh copy.

The package is imported from the unpacked wheel ($FRESH53_SITE/scope_rtm) as a bare package (its __init__, which
reads the installed version, is not run) with empty stand-ins for scipy.io, xarray and pandas (input readers only);
lines are rewritten with `_rewrite.rewritten` for the controls."""

import _shim  # noqa: F401
import linecache
import os
import sys
import types

import torch
from _check import attempt
from _fresh53 import ROOT
from _rewrite import replaced, rewritten

for name in ("scipy", "scipy.io", "xarray", "pandas"):
    sys.modules.setdefault(name, types.ModuleType(name))
sys.modules["scipy.io"].loadmat = None
_pkg = types.ModuleType("scope")
_pkg.__path__ = [os.path.join(ROOT, "scope_rtm", "scope")]
sys.modules["scope"] = _pkg
import scope.biochem.leaf as leaf  # noqa: E402
import scope.canopy.foursail as foursail  # noqa: E402
import scope.canopy.layered_rt as layered  # noqa: E402

assert linecache.getline(leaf.__file__, 1224).strip() == "CO2_per_electron[finite_gm] = Ve[finite_gm] / je.clamp(min=1e-12)"
assert linecache.getline(foursail.__file__, 605).strip() == "tsstoo[active] = f1"
assert linecache.getline(layered.__file__, 169).strip().startswith("Ps[:, :nlayers] = Ps[:, :nlayers] *")
assert linecache.getline(layered.__file__, 170).strip().startswith("Po[:, :nlayers] = Po[:, :nlayers] *")
torch.set_default_dtype(torch.float64)


def assimilation(control=False):
    model = leaf.LeafBiochemistryModel()
    fn = leaf.LeafBiochemistryModel._compute_assimilation
    if control:
        fn = rewritten(fn, [("CO2_per_electron[finite_gm] = Ve", "CO2_per_electron = CO2_per_electron.clone(); "
                             "CO2_per_electron[finite_gm] = Ve")])

    def go():
        n = 4
        je = torch.full((n,), 120e-6, requires_grad=True)
        one = torch.ones(n)
        out = fn(model, Ci=300e-6 * one, canopy_type="C3", g_m=torch.full((n,), 0.3), Vs_C3=50e-6 * one,
                 MM_consts=600e-6 * one, Rd=1e-6 * one, Vcmax=60e-6 * one, Gamma_star=40e-6 * one, Je=je * 1.0,
                 effcon=0.2 * one, Ke=one)
        out["A"].sum().backward()
        assert je.grad is not None
    return go


def sail(control=False):
    method = foursail.FourSAILModel._hotspot_terms
    if control:
        method = rewritten(method, [("tsstoo[active] = f1", "tsstoo = tsstoo.clone(); tsstoo[active] = f1")])

    def go():
        nwl = 5
        lai = torch.tensor([3.0, 1.5], requires_grad=True)
        with replaced(foursail.FourSAILModel, "_hotspot_terms", method):
            model = foursail.FourSAILModel(lidf=foursail.campbell_lidf(57.0))
            res = model(torch.full((2, nwl), 0.4), torch.full((2, nwl), 0.45), torch.full((2, nwl), 0.2), lai,
                        torch.tensor(0.2), torch.tensor(30.0), torch.tensor(10.0), torch.tensor(0.0))
        (res.rso.sum() + res.rdot.sum()).backward()
        assert lai.grad is not None
    return go


# The fresh-copy form: the value first (its product saves the slice it reads), then written on a copy.
PS = ("Ps[:, :nlayers] = Ps[:, :nlayers] * self._finite_layer_average(ks, lai, dx).unsqueeze(-1)",
      "_v = Ps[:, :nlayers] * self._finite_layer_average(ks, lai, dx).unsqueeze(-1); Ps = Ps.clone(); "
      "Ps[:, :nlayers] = _v")
PO = ("Po[:, :nlayers] = Po[:, :nlayers] * self._finite_layer_average(ko, lai, dx).unsqueeze(-1)",
      "_v = Po[:, :nlayers] * self._finite_layer_average(ko, lai, dx).unsqueeze(-1); Po = Po.clone(); "
      "Po[:, :nlayers] = _v")


def build(edits, field):
    method = rewritten(layered.LayeredCanopyTransportModel.build, edits) if edits else \
        layered.LayeredCanopyTransportModel.build

    def go():
        nwl = 5
        lai = torch.tensor([3.0, 1.5], requires_grad=True)
        with replaced(layered.LayeredCanopyTransportModel, "build", method):
            sail_model = foursail.FourSAILModel(lidf=foursail.campbell_lidf(57.0))
            model = layered.LayeredCanopyTransportModel(sail_model)
            out = model.build(torch.full((2, nwl), 0.4), torch.full((2, nwl), 0.45), torch.full((2, nwl), 0.2),
                              lai, torch.tensor(30.0), torch.tensor(10.0), torch.tensor(0.0),
                              hotspot=torch.tensor(0.2), nlayers=10)
        getattr(out, field).sum().backward()
        assert lai.grad is not None
    return go


FID = "scope/biochem/leaf.py:1224:IPF104"
attempt(FID, "path", "C3 assimilation with a finite mesophyll conductance, Je that requires grad, backward of A: "
        "raises", assimilation())
attempt(FID, "control", "the same with :1224 on a fresh copy: runs", assimilation(control=True))
FID = "scope/canopy/foursail.py:605:IPF104"
attempt(FID, "path", "FourSAIL (Campbell 57 deg, hotspot 0.2) with an LAI that requires grad, backward of rso and "
        "rdot: raises", sail())
attempt(FID, "control", "the same with :605 on a fresh copy: runs", sail(control=True))
FID = "scope/canopy/layered_rt.py:169:IPF104"
attempt(FID, "path", "layered transport (10 layers) built with an LAI that requires grad, :170 on a fresh copy, "
        "backward of Ps: raises", build([PO], "Ps"))
attempt(FID, "control", "both on a fresh copy: runs", build([PS, PO], "Ps"))
FID = "scope/canopy/layered_rt.py:170:IPF104"
attempt(FID, "path", "the same, :169 on a fresh copy, backward of Po: raises", build([PS], "Po"))
attempt(FID, "control", "both on a fresh copy: runs", build([PS, PO], "Po"))
