"""lightly 1.6.0: the proven finding of `inplacefix check` (main at 4bb8c00, stop 35):
AmplitudeRescaleTransform (`amplitude *= p` after `amplitude = torch.sqrt(...)`, sqrt saves its
result). The path runs the transform on a Fourier spectrum that requires grad, then backward; the
control the same with the line made out of place; the context how the library uses it (a data
augmentation of an image's spectrum: nothing requires grad)."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from _rewrite import replaced, rewritten
from lightly.transforms.amplitude_rescale_transform import AmplitudeRescaleTransform

FINDING = "lightly/transforms/amplitude_rescale_transform.py:28:IPF101"
expect_line(AmplitudeRescaleTransform.__call__, 28, "amplitude *= p.unsqueeze(0)")


def rescale(grad, edits=()):
    def run():
        torch.manual_seed(0)
        image = torch.rand(3, 8, 8, requires_grad=grad)
        spectrum = torch.fft.fft2(image)
        cls = AmplitudeRescaleTransform
        with replaced(cls, "__call__", rewritten(cls.__call__, edits)):
            out = cls()(spectrum)
        if grad:
            torch.fft.ifft2(out).real.sum().backward()
    return run


attempt(FINDING, "path", "the transform on the spectrum of an image requiring grad, backward", rescale(True))
attempt(FINDING, "control", "the same with `amplitude = amplitude * p.unsqueeze(0)` (out of place)",
        rescale(True, [("amplitude *= p.unsqueeze(0)", "amplitude = amplitude * p.unsqueeze(0)")]))
attempt(FINDING, "context", "as an augmentation: the spectrum of a data image (no grad)", rescale(False))
