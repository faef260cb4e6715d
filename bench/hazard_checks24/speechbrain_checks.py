"""speechbrain 1.1.2: the proven finding of `inplacefix check` (main at 4bb8c00, stop 35): AddNoise's
`noise_waveform *= new_noise_amplitude / (noise_amplitude + 1e-14)`, where `noise_amplitude` is
`compute_amplitude(noise_waveform)` (torch.abs saves its input). The noise is
`self.noise_funct(waveforms)`: torch.randn_like by default, or speechbrain's pink_noise_like, or noise
loaded from a csv: a fresh sample that requires no grad, so abs saved nothing. Paths: the clean
waveforms require grad, backward (default noise, pink noise); control: the line made out of place;
context: a noise function that returns something computed from the waveform (not what the library
ships or documents), which does raise, so the scenario can see the error where it exists.

torchaudio has no wheel for this torch: speechbrain.augment.time_domain imports it but AddNoise's
white/pink-noise path does not use it; an empty module stands in."""

import sys
import types

import _shim  # noqa: F401
import torch

sys.modules.setdefault("torchaudio", types.ModuleType("torchaudio"))
from _check import attempt, expect_line  # noqa: E402
from _rewrite import replaced, rewritten  # noqa: E402
from speechbrain.augment.time_domain import AddNoise, pink_noise_like  # noqa: E402

FINDING = "speechbrain/augment/time_domain.py:178:IPF101"
LINE = "noise_waveform *= new_noise_amplitude / (noise_amplitude + 1e-14)"
expect_line(AddNoise.forward, 178, LINE)


def add_noise(edits=(), **kwargs):
    def run():
        torch.manual_seed(0)
        waveforms = torch.randn(2, 200, requires_grad=True)
        with replaced(AddNoise, "forward", rewritten(AddNoise.forward, edits)):
            AddNoise(snr_low=0, snr_high=10, **kwargs)(waveforms, torch.ones(2)).sum().backward()
    return run


attempt(FINDING, "path", "AddNoise() (white noise, torch.randn_like), waveforms requiring grad, backward", add_noise())
attempt(FINDING, "path", "AddNoise(noise_funct=pink_noise_like), waveforms requiring grad, backward",
        add_noise(noise_funct=pink_noise_like))
attempt(FINDING, "control", "AddNoise() with the line made out of place",
        add_noise([(LINE, LINE.replace("noise_waveform *=", "noise_waveform = noise_waveform *"))]))
attempt(FINDING, "context", "a noise function computed from the waveform (w.flip(1) * 0.1): not shipped",
        add_noise(noise_funct=lambda w: w.flip(1) * 0.1))
