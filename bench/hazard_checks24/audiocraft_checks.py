"""audiocraft 1.3.0: the proven findings of `inplacefix check` (main at 4bb8c00, stop 35), in the
noise-mixing augmentation of audiocraft/data/sound_dataset.py:

- lines 193 and 195, `mix_pair` writing the noise into `src[:, start:...]`: `src` is `clean` of
  `snr_mixer`, which `rms_f(clean)` (`clean ** 2`) saved at line 221 before the write at line 232;
- line 247, `noisyspeech[clipped] = noisyspeech[clipped] / ...` (only when the mix clips).

The package's imports need xformers, torchaudio and av (no wheels for this torch); the functions
checked use only torch, numpy and random, so they are run from the installed file's own source
(`functions_from`: names and line numbers kept), not copied."""

import random

import _shim  # noqa: F401
import numpy as np
import torch
from _check import attempt, expect_line, stop_after
from _rewrite import functions_from, rewritten

import importlib.util

PATH = str(importlib.util.find_spec("audiocraft").submodule_search_locations[0]) + "/data/sound_dataset.py"
LIB = functions_from(PATH, ["EPS", "TARGET_LEVEL_LOWER", "TARGET_LEVEL_UPPER", "rms_f", "normalize",
                            "is_clipped", "mix_pair", "snr_mixer"])
ORIGINAL_MIX_PAIR = LIB["mix_pair"]
expect_line(LIB["mix_pair"], 193, "src[:, start:] = src[:, start:] + dst[:, :remainder]")
expect_line(LIB["mix_pair"], 195, "src[:, start:start+dst.shape[1]] = src[:, start:start+dst.shape[1]] + dst")
expect_line(LIB["snr_mixer"], 247, "noisyspeech[clipped] = noisyspeech[clipped] / noisyspeech_maxamplevel")
# mix_pair made out of place: it writes into a copy of src (nothing saved the copy)
MIX_PAIR_OUT_OF_PLACE = [("    start = random.randint", "    src = src.clone(); start = random.randint")]


def signals(clean_grad, noise_grad, spiky=False):
    gen = torch.Generator().manual_seed(0)
    length = 8000 if spiky else 400
    clean = torch.randn(2, length, generator=gen) * (0.001 if spiky else 0.1)
    if spiky:  # a peak ~90 times the RMS: the mix clips after the RMS normalisation (line 245's branch)
        clean[:, 10] = 1.0
    noise = torch.randn(2, length, generator=gen)
    return clean.requires_grad_(clean_grad), noise.requires_grad_(noise_grad)


def mixing(line, min_overlap, clean_grad=True, noise_grad=False, edits=(), mixer_edits=(), spiky=False):
    """snr_mixer (with ``mixer_edits``; mix_pair with ``edits``), stopped right after ``line`` ran;
    backward from what that line wrote."""
    def run():
        random.seed(1)
        np.random.seed(0)
        LIB["mix_pair"] = rewritten(ORIGINAL_MIX_PAIR, edits) if edits else ORIGINAL_MIX_PAIR
        mixer = rewritten(LIB["snr_mixer"], mixer_edits) if mixer_edits else LIB["snr_mixer"]
        clean, noise = signals(clean_grad, noise_grad, spiky)
        target = LIB["mix_pair"] if line in (193, 195) else mixer
        try:
            loc = stop_after(target, line, lambda: mixer(clean, noise, 30 if spiky else 5, min_overlap))
        finally:
            LIB["mix_pair"] = ORIGINAL_MIX_PAIR
        (loc["src"] if line in (193, 195) else loc["noisyspeech"]).sum().backward()
    return run


for line, overlap, how in ((193, 0.5, "noise overlapping the end (start > 0)"), (195, 1.0, "full overlap (start 0)")):
    finding = f"audiocraft/data/sound_dataset.py:{line}:IPF104"
    attempt(finding, "path", f"snr_mixer, clean requiring grad, {how}, stopped after line {line}, backward",
            mixing(line, overlap))
    attempt(finding, "control", f"the same with mix_pair writing into a copy of src (out of place)",
            mixing(line, overlap, edits=MIX_PAIR_OUT_OF_PLACE))

FINDING = "audiocraft/data/sound_dataset.py:247:IPF104"
attempt(FINDING, "path", "snr_mixer clipping, noise requiring grad (clean not: mix_pair's write saves nothing), "
        "stopped after line 247, backward", mixing(247, 1.0, clean_grad=False, noise_grad=True, spiky=True))
attempt(FINDING, "path", "snr_mixer clipping, clean and noise requiring grad, mix_pair out of place, "
        "stopped after line 247, backward",
        mixing(247, 1.0, noise_grad=True, edits=MIX_PAIR_OUT_OF_PLACE, spiky=True))
attempt(FINDING, "control", "as the first path, with line 247 writing into a copy (out of place)",
        mixing(247, 1.0, clean_grad=False, noise_grad=True, spiky=True, mixer_edits=[(
            "        noisyspeech[clipped] = noisyspeech[clipped]",
            "        noisyspeech = noisyspeech.clone(); noisyspeech[clipped] = noisyspeech[clipped]")]))
