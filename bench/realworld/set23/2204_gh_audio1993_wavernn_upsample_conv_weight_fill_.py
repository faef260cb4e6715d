# source: https://github.com/pytorch/audio/pull/1993
# pattern: inplace_method
# codemod_fixable: yes
# error: B
# ref_semantics: same
# torchaudio WaveRNN, `UpsampleNetwork.__init__` (torchaudio/models/wavernn.py, the line the PR thread points at,
# wavernn.py#L177): the constructor sets each upsampling conv's kernel to a box filter with
# `conv.weight.data.fill_(1. / (scale * 2 + 1))`. In PR #1993 (replacing legacy `.data` initialisation) the author
# reported that dropping `.data` -- `conv.weight.fill_(...)` -- raises "a leaf Variable that requires grad is being
# used in an in-place operation" (his REPL line used the value 1; here the statement keeps the constructor's value),
# and the reviewer (nateanl) answered: use `torch.nn.init.constant_(tensor, val)` to initialise `conv.weight`.
# The failing program is the constructor with that statement; the reference (.ref.py) is the reviewer's fix.
# Classes ResBlock, MelResNet, Stretch2d, UpsampleNetwork are copied from torchaudio/models/wavernn.py (docstrings
# shortened). Harness (stand-in, not from the thread): a small network (upsample_scales=[2, 2], n_res_block=1,
# 8 frequency bins / channels), a random spectrogram, one backward of a squared-output loss; compute() returns every
# parameter's gradient and the upsampling kernels (the state the constructor sets).
from typing import List, Tuple

import torch
from torch import Tensor
from torch import nn


class ResBlock(nn.Module):
    r"""ResNet block based on *Efficient Neural Audio Synthesis*."""

    def __init__(self, n_freq: int = 128) -> None:
        super().__init__()

        self.resblock_model = nn.Sequential(
            nn.Conv1d(in_channels=n_freq, out_channels=n_freq, kernel_size=1, bias=False),
            nn.BatchNorm1d(n_freq),
            nn.ReLU(inplace=True),
            nn.Conv1d(in_channels=n_freq, out_channels=n_freq, kernel_size=1, bias=False),
            nn.BatchNorm1d(n_freq)
        )

    def forward(self, specgram: Tensor) -> Tensor:
        return self.resblock_model(specgram) + specgram


class MelResNet(nn.Module):
    r"""MelResNet layer uses a stack of ResBlocks on spectrogram."""

    def __init__(self,
                 n_res_block: int = 10,
                 n_freq: int = 128,
                 n_hidden: int = 128,
                 n_output: int = 128,
                 kernel_size: int = 5) -> None:
        super().__init__()

        ResBlocks = [ResBlock(n_hidden) for _ in range(n_res_block)]

        self.melresnet_model = nn.Sequential(
            nn.Conv1d(in_channels=n_freq, out_channels=n_hidden, kernel_size=kernel_size, bias=False),
            nn.BatchNorm1d(n_hidden),
            nn.ReLU(inplace=True),
            *ResBlocks,
            nn.Conv1d(in_channels=n_hidden, out_channels=n_output, kernel_size=1)
        )

    def forward(self, specgram: Tensor) -> Tensor:
        return self.melresnet_model(specgram)


class Stretch2d(nn.Module):
    r"""Upscale the frequency and time dimensions of a spectrogram."""

    def __init__(self,
                 time_scale: int,
                 freq_scale: int) -> None:
        super().__init__()

        self.freq_scale = freq_scale
        self.time_scale = time_scale

    def forward(self, specgram: Tensor) -> Tensor:
        return specgram.repeat_interleave(self.freq_scale, -2).repeat_interleave(self.time_scale, -1)


class UpsampleNetwork(nn.Module):
    r"""Upscale the dimensions of a spectrogram."""

    def __init__(self,
                 upsample_scales: List[int],
                 n_res_block: int = 10,
                 n_freq: int = 128,
                 n_hidden: int = 128,
                 n_output: int = 128,
                 kernel_size: int = 5) -> None:
        super().__init__()

        total_scale = 1
        for upsample_scale in upsample_scales:
            total_scale *= upsample_scale
        self.total_scale: int = total_scale

        self.indent = (kernel_size - 1) // 2 * total_scale
        self.resnet = MelResNet(n_res_block, n_freq, n_hidden, n_output, kernel_size)
        self.resnet_stretch = Stretch2d(total_scale, 1)

        up_layers = []
        for scale in upsample_scales:
            stretch = Stretch2d(scale, 1)
            conv = nn.Conv2d(in_channels=1,
                             out_channels=1,
                             kernel_size=(1, scale * 2 + 1),
                             padding=(0, scale),
                             bias=False)
            conv.weight.fill_(1. / (scale * 2 + 1))
            up_layers.append(stretch)
            up_layers.append(conv)
        self.upsample_layers = nn.Sequential(*up_layers)

    def forward(self, specgram: Tensor) -> Tuple[Tensor, Tensor]:
        resnet_output = self.resnet(specgram).unsqueeze(1)
        resnet_output = self.resnet_stretch(resnet_output)
        resnet_output = resnet_output.squeeze(1)

        specgram = specgram.unsqueeze(1)
        upsampling_output = self.upsample_layers(specgram)
        upsampling_output = upsampling_output.squeeze(1)[:, :, self.indent:-self.indent]

        return upsampling_output, resnet_output


def compute():
    torch.manual_seed(0)
    net = UpsampleNetwork(upsample_scales=[2, 2], n_res_block=1, n_freq=8, n_hidden=8, n_output=8, kernel_size=5)
    specgram = torch.rand(2, 8, 10)  # stand-in spectrogram (n_batch, n_freq, n_time)
    upsampling_output, resnet_output = net(specgram)
    loss = upsampling_output.pow(2).mean() + resnet_output.pow(2).mean()
    loss.backward()
    out = {"grad." + n: p.grad.clone() for n, p in net.named_parameters()}
    out.update({"kernel." + n: p.detach().clone() for n, p in net.upsample_layers.named_parameters()})
    return out
