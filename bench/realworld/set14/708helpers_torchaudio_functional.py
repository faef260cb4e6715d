# torchaudio/functional.py (pytorch/audio, mid-2020, before PR #730), reduced to griffinlim() and complex_norm() as
# released. Stand-ins for this torch: the old real-valued (..., 2) STFT format is kept, so `torch.stft(..., True,
# 'reflect', False, True)` becomes _stft() (view_as_real of the complex STFT) and the library's own istft() of a
# (..., 2) tensor becomes istft() over torch.istft (view_as_complex). The phase-update lines are unchanged.
import math

import torch
from torch import Tensor


def _stft(input, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided):
    # stand-in for the positional torch.stft call of 2020, which returned a real (..., 2) tensor
    return torch.view_as_real(torch.stft(input, n_fft, hop_length, win_length, window, center, pad_mode,
                                         normalized, onesided, return_complex=True))


def istft(stft_matrix, n_fft, hop_length=None, win_length=None, window=None, length=None):
    # stand-in for torchaudio.functional.istft of a real (..., freq, frames, 2) tensor
    return torch.istft(torch.view_as_complex(stft_matrix.contiguous()), n_fft, hop_length, win_length, window,
                       center=True, length=length)


def griffinlim(
        specgram: Tensor,
        window: Tensor,
        n_fft: int,
        hop_length: int,
        win_length: int,
        power: float,
        normalized: bool,
        n_iter: int,
        momentum: float,
        length,
        rand_init: bool
) -> Tensor:
    r"""Compute waveform from a linear scale magnitude spectrogram using the Griffin-Lim transformation."""
    assert momentum < 1, 'momentum=%s > 1 can be unstable' % momentum
    assert momentum > 0, 'momentum=%s < 0' % momentum

    # pack batch
    shape = specgram.size()
    specgram = specgram.view([-1] + list(shape[-2:]))

    specgram = specgram.pow(1 / power)

    # randomly initialize the phase
    batch, freq, frames = specgram.size()
    if rand_init:
        angles = 2 * math.pi * torch.rand(batch, freq, frames)
    else:
        angles = torch.zeros(batch, freq, frames)
    angles = torch.stack([angles.cos(), angles.sin()], dim=-1) \
        .to(dtype=specgram.dtype, device=specgram.device)
    specgram = specgram.unsqueeze(-1).expand_as(angles)

    # And initialize the previous iterate to 0
    rebuilt = torch.tensor(0.)

    for _ in range(n_iter):
        # Store the previous iterate
        tprev = rebuilt

        # Invert with our current estimate of the phases
        inverse = istft(specgram * angles,
                        n_fft=n_fft,
                        hop_length=hop_length,
                        win_length=win_length,
                        window=window,
                        length=length).float()

        # Rebuild the spectrogram
        rebuilt = _stft(inverse, n_fft, hop_length, win_length, window,
                        True, 'reflect', False, True)

        # Update our phase estimates
        angles = rebuilt - tprev.mul_(momentum / (1 + momentum))
        angles = angles.div_(complex_norm(angles).add_(1e-16).unsqueeze(-1).expand_as(angles))

    # Return the final phase estimates
    waveform = istft(specgram * angles,
                     n_fft=n_fft,
                     hop_length=hop_length,
                     win_length=win_length,
                     window=window,
                     length=length)

    # unpack batch
    waveform = waveform.view(shape[:-2] + waveform.shape[-1:])

    return waveform


def complex_norm(
        complex_tensor: Tensor,
        power: float = 1.0
) -> Tensor:
    r"""Compute the norm of complex tensor input."""
    if power == 1.0:
        return torch.norm(complex_tensor, 2, -1)
    return torch.norm(complex_tensor, 2, -1).pow(power)
