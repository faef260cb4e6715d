"""omnivoice 0.2.1 (scripts/extract_audio_tokens_add_noise.py:284 `_apply_rir`): the proven finding of `inplacefix
check` (stop 53, fresh53b, end of stop). `power_after = torch.sum(augmented**2)` saves `augmented` (pow saves its
base), then `augmented *= torch.sqrt(power_before / power_after)` writes it. The script applies the reverb to audio
read from disk (no grad); real by this file's convention (audio or an impulse response that requires grad).
`_apply_rir` and `_convolve1d` are compiled alone from the shipped file (nothing of omnivoice imported)."""

import _shim  # noqa: F401
import linecache

import torch
import torch.nn.functional as F
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("omnivoice/scripts/extract_audio_tokens_add_noise.py")
assert linecache.getline(PATH, 284).strip() == "augmented *= torch.sqrt(power_before / power_after)"


def run(control=False, grad=True):
    replace = {284: "augmented = augmented * torch.sqrt(power_before / power_after)"} if control else {}
    ns = compile_alone(PATH, {"_apply_rir", "_convolve1d"}, {"torch": torch, "F": F}, replace=replace)

    def go():
        audio = torch.randn(1, 64, requires_grad=grad)
        rir = torch.zeros(1, 16)
        rir[0, 3] = 2.0 ** 15
        rir[0, 5:] = 0.1 * 2.0 ** 15
        out = ns["_apply_rir"](audio, rir, 0.5)
        if grad:
            out.sum().backward()
    return go


FID = "omnivoice/scripts/extract_audio_tokens_add_noise.py:284:IPF101"
attempt(FID, "path", "_apply_rir on audio that requires grad (a stand-in impulse response): raises", run())
attempt(FID, "control", "the same with :284 out of place: runs", run(control=True))
attempt(FID, "context", "as the script runs it (audio from disk, no grad): nothing to differentiate", run(grad=False))
