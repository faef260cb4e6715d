"""spikingjelly 2.0.0 (spikingjelly/activation_based/examples/speech_commands.py:302 `Rescale.__call__`): the proven
finding of `inplacefix check` (stop 54, fresh54b, end of stop). `std.masked_fill_(std == 0, 1)` writes the output of
`torch.std` (:299), which autograd saves for the std's backward. The example applies it as a dataset transform to
mel spectrograms of audio from disk (no grad): real by this file's convention (a spectrogram that requires grad).
`Rescale` is compiled alone from the shipped file (the example imports torchvision, scipy and sklearn; nothing of
it is imported)."""

import _shim  # noqa: F401
import linecache

import torch
from _check import attempt
from _fresh53 import compile_alone, src

PATH = src("spikingjelly/activation_based/examples/speech_commands.py")
assert linecache.getline(PATH, 302).strip() == "std.masked_fill_(std == 0, 1)"


def run(control=False, grad=True):
    replace = {302: "std = std.masked_fill(std == 0, 1)"} if control else {}
    ns = compile_alone(PATH, {"Rescale"}, {"torch": torch}, replace=replace)

    def go():
        spec = torch.rand(1, 40, 32, requires_grad=grad)  # (channel, mel, frame), as MelScaleDelta hands it on
        out = ns["Rescale"]()(spec)
        if grad:
            out.sum().backward()
    return go


FID = "spikingjelly/activation_based/examples/speech_commands.py:302:IPF103"
attempt(FID, "path", "Rescale() on a spectrogram that requires grad: raises", run())
attempt(FID, "control", "the same with :302 out of place (masked_fill): runs", run(control=True))
attempt(FID, "context", "as the example's dataset transform runs it (no grad): nothing to differentiate",
        run(grad=False))
