"""yaapt-torch 1.0.0 (sdist; yaapt_torch/yaapt.py:526 `dynamic5`): the proven finding of `inplacefix check` (stop 54,
fresh54b, end of stop). `trans[:, :, 1:] = 0.05*trans[:, :, 1:] + trans[:, :, 1:]**2` writes trans, whose slice the
`**2` of the same line saved. But trans (the transition costs) only feeds `path1`, which keeps `torch.argmin` indices
(long) and returns the path P; `dynamic5` returns `pitch_array[path, ...]`, which depends on trans only through
those integer indices. No backward from anything `dynamic5` returns reaches the pow's node: false
(non-differentiable-sink, the argmin form). `dynamic5` and `path1` are compiled alone from the shipped file.
Context: stopped right after :526 handing trans back, differentiating it raises."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("yaapt_torch/yaapt.py")
assert linecache.getline(PATH, 526).strip() == "trans[:, :, 1:] = 0.05*trans[:, :, 1:] + trans[:, :, 1:]**2"
assert linecache.getline(PATH, 533).strip() == "return final_pitch"


def run(stop=False, control=False):
    replace = {}
    if stop:
        replace[528] = "return trans"
    if control:
        replace[526] = "trans = torch.cat([trans[:, :, :1], 0.05*trans[:, :, 1:] + trans[:, :, 1:]**2], dim=2)"
    ns = compile_alone(PATH, {"dynamic5", "path1"}, {"torch": torch}, replace=replace)

    def go():
        torch.manual_seed(0)
        pitch = (100.0 + 100.0 * torch.rand(4, 12)).requires_grad_(True)  # 4 candidates, 12 frames
        merit = torch.rand(4, 12, requires_grad=True)
        out = ns["dynamic5"](pitch, merit, 0.5, 60.0)
        (out.sum() * 1.0).backward()
    return go


FID = "yaapt_torch/yaapt.py:526:IPF104"
attempt(FID, "path", "dynamic5 on candidate pitches and merits that require grad, backward from the returned pitch "
        "track: runs", run())
attempt(FID, "context", "stopped right after :526 (return trans), differentiating trans: raises", run(stop=True))
attempt(FID, "context", "the same with :526 out of place (torch.cat): runs", run(stop=True, control=True))
