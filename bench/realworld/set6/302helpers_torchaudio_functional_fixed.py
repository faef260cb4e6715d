# helper for case 302 (reference): PR #730 applied to torchaudio/functional.py (griffinlim, complex_norm) and torchaudio/transforms.py (GriffinLim) of
# pytorch/audio as of issue #729 (June 2020, before PR #730). Stand-ins: torch.stft / istft of that time took and
# returned real tensors with a trailing (real, imag) dimension of size 2; current torch wants complex tensors, so
# `_stft` / `istft` below convert with view_as_real / view_as_complex around today's torch.stft / torch.istft.
import math

import torch


def _stft(inverse, n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided):
    # stand-in for torch.stft(..., return_complex=False) of torch 1.5
    return torch.view_as_real(torch.stft(inverse, n_fft, hop_length, win_length, window, center, pad_mode,
                                         normalized, onesided, return_complex=True))


def istft(stft_matrix, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode='reflect',
          normalized=False, onesided=True, length=None):
    # stand-in for torchaudio.functional.istft on a (..., freq, time, 2) tensor
    return torch.istft(torch.view_as_complex(stft_matrix.contiguous()), n_fft, hop_length, win_length, window,
                       center, normalized, onesided, length)


def complex_norm(complex_tensor, power=1.0):
    r"""Compute the norm of complex tensor input (shape `(*, complex=2)`)."""
    if power == 1.0:
        return torch.norm(complex_tensor, 2, -1)
    return torch.norm(complex_tensor, 2, -1).pow(power)


def griffinlim(specgram, window, n_fft, hop_length, win_length, power, normalized, n_iter, momentum, length,
               rand_init):
    r"""Compute waveform from a linear scale magnitude spectrogram using the Griffin-Lim transformation."""
    assert momentum < 1, 'momentum=%s > 1 can be unstable' % momentum
    assert momentum > 0, 'momentum=%s < 0' % momentum

    # pack batch
    shape = specgram.size()
    specgram = specgram.reshape([-1] + list(shape[-2:]))

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
        angles = rebuilt - tprev.mul(momentum / (1 + momentum))
        angles = angles.div(complex_norm(angles).add(1e-16).unsqueeze(-1).expand_as(angles))

    # Return the final phase estimates
    waveform = istft(specgram * angles,
                     n_fft=n_fft,
                     hop_length=hop_length,
                     win_length=win_length,
                     window=window,
                     length=length)

    # unpack batch
    waveform = waveform.reshape(shape[:-2] + waveform.shape[-1:])

    return waveform


class GriffinLim(torch.nn.Module):
    r"""Compute waveform from a linear scale magnitude spectrogram using the Griffin-Lim transformation."""
    __constants__ = ['n_fft', 'n_iter', 'win_length', 'hop_length', 'power', 'normalized',
                     'length', 'momentum', 'rand_init']

    def __init__(self, n_fft=400, n_iter=32, win_length=None, hop_length=None, window_fn=torch.hann_window,
                 power=2., normalized=False, wkwargs=None, momentum=0.99, length=None, rand_init=True):
        super(GriffinLim, self).__init__()

        assert momentum < 1, 'momentum=%s > 1 can be unstable' % momentum
        assert momentum > 0, 'momentum=%s < 0' % momentum

        self.n_fft = n_fft
        self.n_iter = n_iter
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        window = window_fn(self.win_length) if wkwargs is None else window_fn(self.win_length, **wkwargs)
        self.register_buffer('window', window)
        self.normalized = normalized
        self.length = length
        self.power = power
        self.momentum = momentum
        self.rand_init = rand_init

    def forward(self, specgram):
        return griffinlim(specgram, self.window, self.n_fft, self.hop_length, self.win_length, self.power,
                          self.normalized, self.n_iter, self.momentum, self.length, self.rand_init)
