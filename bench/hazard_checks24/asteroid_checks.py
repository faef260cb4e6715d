"""asteroid 0.7.0: the proven finding of `inplacefix check` (main at 4bb8c00, stop 35): the GEV
beamformer's `bf_vect /= torch.norm(bf_vect, ...)` (norm saves its input, the eigenvector written).
The path runs the beamformer with spatial covariance matrices that require grad (as when a mask
network estimates them, asteroid's use), then backward; the control the same with the line made out
of place."""

import _shim  # noqa: F401
import torch
from _check import attempt, expect_line
from _rewrite import replaced, rewritten
from asteroid.dsp.beamforming import GEVBeamformer

FINDING = "asteroid/dsp/beamforming.py:246:IPF101"
expect_line(GEVBeamformer.compute_beamforming_vector, 246, "bf_vect /= torch.norm(bf_vect, dim=-1, keepdim=True)")


def scm(batch, mics, freqs, frames, seed):
    """A Hermitian positive-definite covariance per frequency, (batch, mics, mics, freqs), from a
    complex STFT-like tensor that requires grad."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, mics, freqs, frames, dtype=torch.complex64, generator=gen).requires_grad_()
    cov = torch.einsum("bmft,bnft->bmnf", x, x.conj()) / frames
    return x, cov


def gev(edits=()):
    def run():
        mix = torch.randn(1, 3, 5, 7, dtype=torch.complex64)
        _, target = scm(1, 3, 5, 20, 0)
        _, noise = scm(1, 3, 5, 20, 1)
        cls = GEVBeamformer
        with replaced(cls, "compute_beamforming_vector", rewritten(cls.compute_beamforming_vector, edits)):
            out = cls()(mix, target, noise)
        out.abs().sum().backward()
    return run


attempt(FINDING, "path", "GEVBeamformer(mix, target and noise SCMs requiring grad), backward", gev())
attempt(FINDING, "control", "the same with `bf_vect = bf_vect / torch.norm(...)` (out of place)",
        gev([("bf_vect /= torch.norm(bf_vect, dim=-1, keepdim=True)",
              "bf_vect = bf_vect / torch.norm(bf_vect, dim=-1, keepdim=True)")]))
