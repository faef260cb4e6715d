"""Stop 35 (issue 24, precision): false proven hazards found on code bases never measured before,
each written from scratch in the shape of the library code that showed it (labels by running in
bench/hazard_checks24/: speechbrain_checks.py, audiocraft_checks.py, allennlp_checks.py).

Per case, one test runs the program with torch: with inputs that require grad, backward runs (the
label: false), and a variant where the flagged write does break backward raises (so the label test
can fail). A second test asks the static check (no library imported, nothing run): it reports a
proven hazard before stop 35; it must not now (group not-differentiable since stop 36: tests/test_index_use.py). Each group also has negative controls: a real hazard
of the same shape (its label checked by running) that stays proven.
"""

from __future__ import annotations

import pytest
import torch

from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward


def _proven(source: str):
    """The default report (proven tier): (code, line) of each finding."""
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def _defined(source: str) -> dict:
    namespace: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


# ------------------------------------------------------------------ nothing requires grad
# The written tensor comes from a callable held in an attribute (`self.noise_funct`, by default
# torch.randn_like): a fresh sample that requires no grad, so `amplitude(noise)` (abs) saved
# nothing. The analysis takes the first argument of a call it cannot see into as passing its grad
# through (speechbrain AddNoise.forward).
NOISE = """\
import torch


def amplitude(x):
    return torch.abs(x).mean(dim=1, keepdim=True)


class AddNoise(torch.nn.Module):
    def __init__(self, noise_funct=torch.randn_like):
        super().__init__()
        self.noise_funct = noise_funct

    def forward(self, waveforms):
        clean_amplitude = amplitude(waveforms)
        noise = self.noise_funct(waveforms)
        noise_amplitude = amplitude(noise)
        noise *= clean_amplitude / (noise_amplitude + 1e-14)
        return waveforms + noise
"""
NOISE_WRITE = 17  # `noise *= ...`


def test_noise_drawn_by_an_attribute_callable_runs_backward():
    add_noise = _defined(NOISE)["AddNoise"]

    def run(noise_funct):
        def go():
            waveforms = torch.randn(2, 50, requires_grad=True)
            add_noise(noise_funct)(waveforms).sum().backward()
        return go

    assert NOISE.splitlines()[NOISE_WRITE - 1].strip().startswith("noise *=")
    assert not raises_at_backward(run(torch.randn_like))
    # noise computed from the waveform (which the class does not ship) does raise
    assert raises_at_backward(run(lambda w: w.flip(1) * 0.1))


def test_noise_drawn_by_an_attribute_callable_is_not_proven():
    assert ("IPF101", NOISE_WRITE) not in _proven(NOISE)


# ------------------------------------------------------------------ op saves nothing of it
# `out[clipped] / peak` with a boolean mask: the read is a copy (advanced indexing), so what `/`
# saves is that copy, not `out`; the write `out[clipped] = ...` modifies nothing saved
# (audiocraft/data/sound_dataset.py:247, snr_mixer's clipping branch).
CLIP = """\
import torch


def limit_peaks(signal, gain):
    out = signal * (gain / signal.std(1)).unsqueeze(1)
    clipped = (out.abs() > 1.0).any(1)
    peak = out[clipped].max(1)[0].abs().unsqueeze(1)
    out[clipped] = out[clipped] / peak
    return out
"""
CLIP_WRITE = 8  # `out[clipped] = out[clipped] / peak`


def test_a_boolean_mask_read_is_a_copy_backward_runs():
    limit_peaks = _defined(CLIP)["limit_peaks"]

    def run(basic_slice):
        def go():
            torch.manual_seed(0)
            signal = torch.randn(4, 50, requires_grad=True)
            gain = torch.tensor(3.0, requires_grad=True)
            if basic_slice:  # a basic slice is a view: the division saves `out` itself, and then it raises
                out = signal * (gain / signal.std(1)).unsqueeze(1)
                out[:2] = out[:2] / out[:2].abs().amax(1, keepdim=True)
                out.sum().backward()
                return
            out = limit_peaks(signal, gain)
            assert bool((out.abs() >= 0.999).any(1).all())  # the clipping branch wrote every row
            out.sum().backward()
        return go

    assert CLIP.splitlines()[CLIP_WRITE - 1].strip().startswith("out[clipped] =")
    assert not raises_at_backward(run(basic_slice=False))
    assert raises_at_backward(run(basic_slice=True))


def test_a_boolean_mask_read_is_not_proven_saved():
    assert ("IPF104", CLIP_WRITE) not in _proven(CLIP)


# ------------------------------------------------------------------ not differentiable
# `end` is an integer tensor (lengths from a boolean mask minus an arange): it never requires grad,
# `torch.max(indices)` of it records nothing, and index_select saves `indices + offsets`, a fresh
# tensor (allennlp PretrainedTransformerEmbedder._unfold_long_sequences, line 391).
INDICES = """\
import torch


def select(target, indices):
    if torch.max(indices) >= target.size(1):
        raise ValueError("index out of range")
    offsets = torch.arange(indices.size(0)).unsqueeze(1) * target.size(1)
    flat = (indices + offsets).view(-1)
    return target.reshape(-1, target.size(-1)).index_select(0, flat).view(*indices.size(), -1)


def unfold(embeddings, mask, shift):
    lengths = mask.sum(-1)
    end = lengths.unsqueeze(-1) - torch.arange(1) - 1
    end_embeddings = select(embeddings, end)
    end -= shift
    return end_embeddings, end
"""
INDICES_WRITE = 16  # `end -= shift`


def test_an_integer_index_tensor_written_after_use_runs_backward():
    unfold = _defined(INDICES)["unfold"]

    def go():
        embeddings = torch.randn(2, 5, 3, requires_grad=True)
        mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
        picked, end = unfold(embeddings, mask, 1)
        assert end.dtype == torch.long and not end.requires_grad
        picked.sum().backward()

    def saved_index_written():  # where the index tensor itself is saved (index_select's index), it raises
        embeddings = torch.randn(5, 3, requires_grad=True)
        index = torch.tensor([0, 2])
        picked = embeddings.index_select(0, index)
        index += 1
        picked.sum().backward()

    assert INDICES.splitlines()[INDICES_WRITE - 1].strip() == "end -= shift"
    assert not raises_at_backward(go)
    assert raises_at_backward(saved_index_written)


def test_an_integer_index_tensor_is_not_proven_saved():
    assert ("IPF101", INDICES_WRITE) not in _proven(INDICES)


# ------------------------------------------------------------------ negative controls (stay proven)
# Same shapes where the hazard is real: the analysis sees what makes the value require grad (a
# layer built in the class, a method of it), a basic slice (a view), a float tensor through a
# helper whose saving op also takes integral tensors.
_HELD = ("    def __init__(self, noise_funct=torch.randn_like):\n        super().__init__()\n"
         "        self.noise_funct = noise_funct\n")
NOISE_BY_A_LAYER = NOISE.replace(_HELD, "    def __init__(self):\n        super().__init__()\n"
                                 "        self.noise_funct = torch.nn.Linear(50, 50)\n")
NOISE_BY_A_METHOD = NOISE.replace(_HELD, "    def noise_funct(self, w):\n        return w.flip(1) * 0.1\n")
CLIP_BY_A_SLICE = CLIP.replace("out[clipped]", "out[:2]")
PEAK_OF_FLOATS = """\
import torch


def peak(values):
    if torch.max(values) > 1e3:
        raise ValueError("too large")
    return torch.max(values)


def run(n):
    weights = torch.randn(n, requires_grad=True)
    scores = weights * 2.0
    top = peak(scores)
    scores -= 1.0
    return top
"""


def _line_of(source: str, start: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip().startswith(start))


@pytest.mark.parametrize("source", [NOISE_BY_A_LAYER, NOISE_BY_A_METHOD], ids=["layer", "method"])
def test_noise_a_layer_or_a_method_computes_stays_proven(source):
    assert source != NOISE
    add_noise = _defined(source)["AddNoise"]

    def go():
        add_noise()(torch.randn(2, 50, requires_grad=True)).sum().backward()

    assert raises_at_backward(go)
    assert ("IPF101", _line_of(source, "noise *=")) in _proven(source)


def test_a_basic_slice_read_is_a_view_stays_proven():
    assert CLIP_BY_A_SLICE != CLIP
    limit_peaks = _defined(CLIP_BY_A_SLICE)["limit_peaks"]

    def go():
        limit_peaks(torch.randn(4, 50, requires_grad=True), torch.tensor(3.0, requires_grad=True)).sum().backward()

    assert raises_at_backward(go)
    assert ("IPF104", CLIP_WRITE) in _proven(CLIP_BY_A_SLICE)


def test_a_float_tensor_through_an_integral_ok_helper_stays_proven():
    run = _defined(PEAK_OF_FLOATS)["run"]
    assert raises_at_backward(lambda: run(5).backward())
    assert ("IPF101", _line_of(PEAK_OF_FLOATS, "scores -=")) in _proven(PEAK_OF_FLOATS)


@pytest.mark.parametrize("mask", ["(out.abs() > 1.0).any(1)", "~(out.abs() <= 1.0).all(1)",
                                  "torch.isnan(out).any(1) | (out.abs() > 1.0).any(1)"])
def test_boolean_masks_built_other_ways_read_copies(mask):
    """Masks built in other ways (a reduction, ``~``, ``|`` of masks): the read is a copy, and
    backward runs."""
    source = CLIP.replace("(out.abs() > 1.0).any(1)", mask)
    assert mask in source
    limit_peaks = _defined(source)["limit_peaks"]
    assert not raises_at_backward(
        lambda: limit_peaks(torch.randn(4, 50, requires_grad=True), torch.tensor(3.0, requires_grad=True)).sum().backward())
    assert ("IPF104", CLIP_WRITE) not in _proven(source)


def test_boolean_tensor_indexing_copies_whatever_its_dims():
    """What the analysis relies on (dtype.boolean_tensor): a boolean index tensor, 0-d included,
    makes a copy; a basic slice makes a view."""
    x = torch.randn(3, 4)
    for mask in (x > 0, (x > 0).any(1), (x > 0).all(), ~(x > 0).any(1) | (x.sum(1) > 0)):
        assert mask.dtype == torch.bool
        assert not x[mask]._is_view() and x[mask]._base is None
    assert x[:2]._is_view() and x[:2]._base is x
