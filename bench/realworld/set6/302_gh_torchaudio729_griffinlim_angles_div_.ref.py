# reference fix for 302: PR #730 in the library module (302helpers_torchaudio_functional_fixed.py): the phase update written out of place.
import importlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
taf = importlib.import_module("302helpers_torchaudio_functional_fixed")


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
