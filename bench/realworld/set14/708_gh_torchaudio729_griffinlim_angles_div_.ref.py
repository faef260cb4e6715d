# reference fix for 708: the merged PR #730 (708helpers_torchaudio_functional_fixed.py): out-of-place div/add in the
# phase update.
import os
import sys
from importlib import import_module

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # sibling helper module
F = import_module("708helpers_torchaudio_functional_fixed")


class GriffinLim(torch.nn.Module):
    r"""Compute waveform from a linear scale magnitude spectrogram using the Griffin-Lim transformation."""
    __constants__ = ['n_fft', 'n_iter', 'win_length', 'hop_length', 'power', 'normalized',
                     'length', 'momentum', 'rand_init']

    def __init__(self, n_fft=400, n_iter=32, win_length=None, hop_length=None,
                 window_fn=torch.hann_window, power=2., normalized=False, wkwargs=None,
                 momentum=0.99, length=None, rand_init=True):
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
        self.momentum = momentum / (1 + momentum)
        self.rand_init = rand_init

    def forward(self, specgram):
        return F.griffinlim(specgram, self.window, self.n_fft, self.hop_length, self.win_length, self.power,
                            self.normalized, self.n_iter, self.momentum, self.length, self.rand_init)


def compute():
    torch.manual_seed(0)
    x = torch.rand(1, 400)
    spec = torch.view_as_real(torch.stft(x, n_fft=64, hop_length=16, win_length=32,
                                         window=torch.hann_window(32), return_complex=True))
    mag = spec.pow(2).sum(-1).transpose(1, -1)
    model = torch.nn.Linear(33, 33)
    out = model(mag).transpose(1, -1)
    resyn = GriffinLim(n_fft=64, hop_length=16, win_length=32, n_iter=6, power=1., length=400)
    wav = resyn(out)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0001)
    loss = torch.nn.functional.mse_loss(wav, x)
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    optimizer.step()
    grads.update({"after_step." + n: p.detach().clone() for n, p in model.named_parameters()})
    return grads


if __name__ == "__main__":
    compute()
