"""adfwi-torch 0.1.2 (ADFWI/fwi/acoustic_fwi.py:174, :175, fwi/elastic_fwi.py:158, :159, dip/dip_acoustic_fwi.py:169,
:170, each class's `calculate_loss`): the proven findings of `inplacefix check` (stop 58, fresh58, end of stop).
With an offset mute and a late-window mute on, `calculate_loss` first runs `mute_offset` (utils/offset_mute.py), which
writes `waveform[ishot] = waveform[ishot] * distance_mask_temp` into its argument and returns it, and then writes
`synthetic_waveform[i] = apply_mute(...)` / `observed_waveform[i] = apply_mute(...)` into the returned tensors. The
check reads the returned tensor as "the output of mute_offset's `*`, which autograd saves". But the other factor,
`torch.zeros_like(waveform[ishot])` filled with ones, can never require grad, so the product saves only that mask and
nothing of the waveform (and a product does not save its own output); nothing else saves the waveforms before the
writes. The library hands `syn_p = rcv_p * receiver_mask_3D` (a product with a data mask, nothing of syn_p saved) or a
zeros buffer filled row by row, and the observed data (no grad). So no use raises at these writes. False
(mutation-as-output-constant-factor: fresh58_probes.py). The context makes the mask require grad (not as shipped):
then the product saves the waveform row and the write raises. mute_offset, apply_mute (with mask, mute_arrival,
brutal_picker) and each class's calculate_loss are compiled alone from the shipped files, with a stand-in self
(offset mute 400 m, late window 0.2 s) and a stand-in Misfit (squared error)."""

import _shim  # noqa: F401
import linecache
import warnings

import numpy as np
import torch
from _check import attempt
from _fresh53 import compile_alone, src

warnings.simplefilter("ignore")
MUTE = src("ADFWI/utils/offset_mute.py")
PICK = src("ADFWI/utils/first_arrivel_picking.py")
UTILS = src("ADFWI/utils/utils.py")
CASES = [("ADFWI/fwi/acoustic_fwi.py", "AcousticFWI", 174, 175), ("ADFWI/fwi/elastic_fwi.py", "ElasticFWI", 158, 159),
         ("ADFWI/dip/dip_acoustic_fwi.py", "DIP_AcousticFWI", 169, 170)]
assert linecache.getline(MUTE, 16).strip() == "waveform[ishot] = waveform[ishot]*distance_mask_temp"
for rel, _, syn, obs in CASES:
    assert linecache.getline(src(rel), syn).strip().startswith("synthetic_waveform[i] = apply_mute("), rel
    assert linecache.getline(src(rel), obs).strip().startswith("observed_waveform[i]  = apply_mute("), rel


class Misfit:
    def forward(self, syn, obs):
        return ((syn - obs) ** 2).sum()


class Prop:
    dx, dt = 10.0, 0.001
    src_x = torch.tensor([5, 15])
    rcv_x = torch.arange(20)


class Self:
    waveform_mute_offset = 40.0
    waveform_mute_late_window = 0.2
    receiver_masks_2D = torch.ones(2, 20, dtype=torch.bool)
    propagator = Prop()


def run(rel, cls, mask_grad=False, fresh=None):
    ns = {"torch": torch, "np": np, "Misfit": Misfit, "Misfit_NIM": type("Misfit_NIM", (), {})}
    compile_alone(UTILS, {"tensor2numpy", "numpy2tensor"}, ns)
    replace = {}
    if mask_grad:
        replace[15] = "distance_mask_temp[:,distance_mask.tolist()] = 1; distance_mask_temp.requires_grad_(True)"
    compile_alone(MUTE, {"mute_offset"}, ns, replace=replace)
    compile_alone(PICK, {"brutal_picker", "mask", "mute_arrival", "apply_mute"}, ns)
    compile_alone(src(rel), {f"{cls}.calculate_loss"}, ns, replace=fresh or {})

    def go():
        torch.manual_seed(0)
        theta = torch.rand(2, 300, 20, requires_grad=True)
        mask3d = (torch.rand(2, 300, 20) > 0.1).float()
        syn = theta * mask3d  # the library's syn_p = rcv_p * receiver_mask_3D
        obs = torch.rand(2, 300, 20)
        loss = ns["calculate_loss"](Self(), syn, obs, False, Misfit(), None, 0.001, np.arange(2))
        loss.backward()
        assert theta.grad is not None
    return go


for rel, cls, syn_line, obs_line in CASES:
    for line, name in ((syn_line, "synthetic"), (obs_line, "observed")):
        fid = f"{rel}:{line}:IPF104"
        attempt(fid, "path", f"{cls}.calculate_loss(syn_p, obs, ...) with the offset and late-window mutes on, syn_p = "
                f"rcv_p * receiver_mask_3D (rcv_p requires grad) as the library builds it: the {name} row writes run "
                "and backward runs (mute_offset's product saves only its zeros/ones mask)", run(rel, cls))
        attempt(fid, "context", "the offset mask made to require grad (not as shipped): the product then saves the "
                "waveform row, and mute_offset's own write of that row (:16) spoils it first: what the check models "
                "can only raise inside mute_offset, never at the row writes of calculate_loss", run(rel, cls, mask_grad=True))
        fresh = {syn_line: "v = apply_mute(self.waveform_mute_late_window, synthetic_waveform_temp[i], "
                 "self.propagator.dt); synthetic_waveform = synthetic_waveform.clone(); synthetic_waveform[i] = v",
                 obs_line: "v = apply_mute(self.waveform_mute_late_window, observed_waveform_temp[i], "
                 "self.propagator.dt); observed_waveform = observed_waveform.clone(); observed_waveform[i] = v"}
        attempt(fid, "control", "both row writes of calculate_loss on fresh copies, as the library builds syn_p: runs",
                run(rel, cls, fresh=fresh))
