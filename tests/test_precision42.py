"""Stop 42 (issue 24, precision): the false proven hazard left on allennlp (bench/hazard_checks24/
labels.tsv: pretrained_transformer_embedder.py:391), and the form of audiocraft's mask helper
(sound_dataset.py:247) that tests/test_real42.py does not cover, written from scratch in the
shape of the library code. Both hinge on an op of a helper whose result is only compared: it saves
the helper's argument for a node backward never reaches (`torch.max(indices) >= size` in a range
check; `audio.abs() > t` in a mask helper). The builtin-`abs` helper and inline forms of the mask
are tests/test_real42.py's.

Per shape, one test runs the program with torch (backward runs: the label is false; a look-alike
that does break backward raises, so the label test can fail), one asks the static check (the
default report, nothing run): not proven. Negative controls: the same shapes where the index is a
basic slice, or where the helper's op is returned and not only compared, stay proven.
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


def _line_of(source: str, start: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip().startswith(start))


# ------------------------------------------------------------------ a mask from a helper of the file
# `clipped = is_clipped(out)` where the helper returns `(abs(audio) > t).any(1)`: a boolean mask,
# so `out[clipped]` is a copy and what `/` saves is that copy, not `out`.
CLIP_BY_A_HELPER = """\
import torch


def is_clipped(audio: torch.Tensor, threshold: float = 0.99) -> torch.Tensor:
    return (abs(audio) > threshold).any(1)


def limit_peaks(signal, gain):
    out = signal * (gain / signal.std(1)).unsqueeze(1)
    clipped = is_clipped(out)
    if clipped.any():
        peak = out[clipped].max(1)[0].abs().unsqueeze(1)
        out[clipped] = out[clipped] / peak
    return out
"""
# the helper through the tensor method: `audio.abs()` saves the argument, only to be compared
CLIP_BY_A_METHOD_HELPER = CLIP_BY_A_HELPER.replace("(abs(audio) > threshold)", "(audio.abs() > threshold)")
# negative control: the helper hands back a basic slice, so `out[rows]` is a view and `/` saves `out`
CLIP_BY_A_SLICE_HELPER = CLIP_BY_A_HELPER.replace(
    "    return (abs(audio) > threshold).any(1)", "    return slice(0, 2)").replace(
    "    if clipped.any():\n", "    if True:\n")
MASKS = {"method-helper": CLIP_BY_A_METHOD_HELPER}


def _limit_peaks(source: str):
    limit_peaks = _defined(source)["limit_peaks"]

    def go():
        torch.manual_seed(0)
        signal = torch.randn(4, 50, requires_grad=True)
        gain = torch.tensor(3.0, requires_grad=True)
        out = limit_peaks(signal, gain)
        out.sum().backward()
    return go


@pytest.mark.parametrize("name", sorted(MASKS))
def test_a_mask_from_a_helper_or_builtin_abs_runs_backward(name):
    source = MASKS[name]
    assert source != CLIP_BY_A_HELPER
    assert not raises_at_backward(_limit_peaks(source))


@pytest.mark.parametrize("name", sorted(MASKS))
def test_a_mask_from_a_helper_or_builtin_abs_is_not_proven(name):
    source = MASKS[name]
    assert ("IPF104", _line_of(source, "out[clipped] =")) not in _proven(source)


def test_a_slice_from_a_helper_is_a_view_stays_proven():
    source = CLIP_BY_A_SLICE_HELPER
    assert "return slice(0, 2)" in source
    assert raises_at_backward(_limit_peaks(source))
    assert ("IPF104", _line_of(source, "out[clipped] =")) in _proven(source)


# ------------------------------------------------------------------ an op a helper only compares
# `torch.max(indices) >= size` in a range check saves `indices` for a node backward never reaches
# (its result is only compared): a later write into the caller's tensor breaks nothing.
RANGE_CHECKED = """\
import torch


def check_range(indices, size):
    if torch.max(indices) >= size or torch.min(indices) < 0:
        raise ValueError("index out of range")
    return indices + 1


def run(n):
    weights = torch.rand(n, requires_grad=True)
    scores = weights * 2.0
    shifted = check_range(scores, 100)
    scores -= 1.0
    return shifted
"""
# negative control: the helper also returns what `torch.max` computed, so the save is reached
RANGE_RETURNED = RANGE_CHECKED.replace("    return indices + 1", "    return torch.max(indices)")


def _run(source: str):
    run = _defined(source)["run"]

    def go():
        torch.manual_seed(0)
        run(5).sum().backward()
    return go


def test_an_op_only_compared_in_a_helper_runs_backward():
    assert not raises_at_backward(_run(RANGE_CHECKED))
    assert raises_at_backward(_run(RANGE_RETURNED))


def test_an_op_only_compared_in_a_helper_is_not_proven():
    assert ("IPF101", _line_of(RANGE_CHECKED, "scores -=")) not in _proven(RANGE_CHECKED)


def test_an_op_a_helper_returns_stays_proven():
    assert RANGE_RETURNED != RANGE_CHECKED
    assert ("IPF101", _line_of(RANGE_RETURNED, "scores -=")) in _proven(RANGE_RETURNED)
