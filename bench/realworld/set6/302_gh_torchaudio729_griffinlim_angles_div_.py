# source: https://github.com/pytorch/audio/issues/729
# pattern: inplace_method
# codemod_fixable: yes
# error: A
# ref_semantics: same
# torchaudio, functional.griffinlim (used by transforms.GriffinLim): each phase-update step computes
# `angles = rebuilt - tprev.mul_(...)` and then normalises it in place,
# `angles = angles.div_(complex_norm(angles).add_(1e-16).unsqueeze(-1).expand_as(angles))`; complex_norm
# (torch.norm) saved `angles` for backward, so a loss on the resynthesised waveform cannot be backpropagated to the
# model that predicted the spectrogram: "output 0 of SubBackward0, is at version 1; expected version 0" (issue #729,
# "torchaudio.transforms.GriffinLim does not allow backpropagation"). The fix, PR #730 ("Remove in-place operations
# from GriffinLim for backprop", closes #729): the updates written out of place (`tprev.mul(...)`,
# `angles.div(complex_norm(angles).add(1e-16)...)`); the PR diff is not shown in the stored thread, the reference
# writes out that change.
# The library module is 302helpers_torchaudio_functional.py (ref: 302helpers_torchaudio_functional_fixed.py).
# Stand-ins: the script with smaller sizes (1 x 800 samples, n_fft 64, hop 16, window 32, n_iter 8) and a
# seeded phase initialisation; the model output enters GriffinLim as `out.abs() + 1e-3` (the issue passes it raw,
# whose negative entries give NaN under `pow(1 / power)`); no optimizer step (the linear model's gradient is the result).
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
taf = importlib.import_module("302helpers_torchaudio_functional")


def compute():
    torch.manual_seed(0)
    x = torch.rand(1, 800)
    window = torch.hann_window(32)
    spec = torch.view_as_real(torch.stft(x, n_fft=64, hop_length=16, win_length=32, window=window,
                                         return_complex=True))
    mag = spec.pow(2).sum(-1).transpose(1, -1)
    model = torch.nn.Linear(33, 33)
    out = model(mag).transpose(1, -1)
    resyn = taf.GriffinLim(n_fft=64, hop_length=16, win_length=32, n_iter=8)
    wav = resyn(out.abs() + 1e-3)
    loss = torch.nn.functional.mse_loss(wav, x[:, :wav.shape[-1]])
    loss.backward()
    return {"weight": model.weight.grad, "bias": model.bias.grad}


if __name__ == "__main__":
    compute()
