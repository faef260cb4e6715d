"""Stop 42 (issue 24, precision on code bases never measured before): the false proven hazard found
on pytorch-lightning 2.6.6 (``StochasticWeightAveraging.update_parameters``,
stochastic_weight_avg.py:332; label by running in bench/hazard_checks24/pytorch_lightning_checks.py),
written from scratch in the shape of the code that showed it, with its group.

Group ``detached-alias``: a name bound to ``t.detach()`` of a leaf that requires grad (a parameter
from ``.parameters()``, an ``nn.Parameter`` attribute, a tensor made with ``requires_grad=True``)
was taken for a *view* of the leaf, and a write into it for one PyTorch refuses ("a leaf Variable
that requires grad is being used in an in-place operation"). ``detach()`` returns a tensor that
requires no grad: PyTorch lets one write into it (weight averaging, EMA and re-initialisation code
do so on purpose). It still shares the version counter, so a write into the detached copy of a
tensor autograd saved does raise at backward: that look-alike stays proven, as do real views of a
leaf and a detached copy made a leaf again (``.detach().requires_grad_()``).

Per case, one test runs the program with torch and one asks the static check (nothing imported,
nothing run).
"""

from __future__ import annotations

import copy

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


def _leaf_refused(fn) -> bool:
    """True where ``fn`` dies with PyTorch's refusal of an in-place write into a leaf (or a view of one)."""
    try:
        fn()
    except RuntimeError as error:
        return "a leaf Variable that requires grad" in str(error)
    return False


# ------------------------------------------------------------------ writes into detached copies
DETACHED = """\
import torch
from torch import nn


def blend_into(average, model, count):
    for kept, live in zip(average.parameters(), model.parameters()):
        kept_ = kept.detach()
        fresh = live.detach()
        kept_.copy_(fresh if count == 0 else kept_ + (fresh - kept_) / (count + 1))


def shrink(model):
    for p in model.parameters():
        flat = p.detach()
        flat = flat.view(-1)
        flat.mul_(0.5)


def zeroed_copy():
    w = torch.randn(3, requires_grad=True)
    d = w.detach()
    d.zero_()
    return w


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.bias = nn.Parameter(torch.zeros(4))

    def open_first(self):
        b = self.bias.detach()
        b[0] = 1.0

    def forward(self, x):
        return x + self.bias
"""


def test_writes_into_detached_copies_of_leaves_run():
    ns = _defined(DETACHED)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    average = copy.deepcopy(model)
    with torch.enable_grad():
        ns["blend_into"](average, model, 0)
        ns["blend_into"](average, model, 1)
        ns["shrink"](average)
        average(torch.randn(2, 3)).sum().backward()
        w = ns["zeroed_copy"]()
        assert w.requires_grad and torch.equal(w.detach(), torch.zeros(3))
        gate = ns["Gate"]()
        gate.open_first()
        gate(torch.randn(2, 4)).sum().backward()
    assert gate.bias[0].item() == 1.0
    assert torch.allclose(average[0].weight, model[0].weight * 0.5)


def test_writes_into_detached_copies_of_leaves_are_not_proven():
    assert _proven(DETACHED) == []


# Look-alikes: a real view of a parameter (what the report took `detach()` for), a detached copy
# made a leaf again, and a write into the detached copy of a tensor autograd saved (`exp` saves its
# output; the copy shares its version counter).
LOOK_ALIKES = """\
import torch
from torch import nn


def blend_view(average, model):
    for kept, live in zip(average.parameters(), model.parameters()):
        kept_ = kept.view_as(kept)
        kept_.copy_(live.detach())


def relearn():
    w = torch.randn(3, requires_grad=True)
    d = w.detach().requires_grad_()
    d.zero_()
    return d


def through_detached(x):
    y = torch.exp(x)
    d = y.detach()
    d.zero_()
    return y.sum()
"""


def test_look_alikes_raise():
    ns = _defined(LOOK_ALIKES)
    model = torch.nn.Linear(3, 2)
    average = copy.deepcopy(model)
    with torch.enable_grad():
        assert _leaf_refused(lambda: ns["blend_view"](average, model))
        assert _leaf_refused(ns["relearn"])
        x = torch.randn(4, requires_grad=True)
        assert raises_at_backward(lambda: ns["through_detached"](x).backward())


def test_look_alikes_stay_proven():
    found = _proven(LOOK_ALIKES)
    assert {line for _, line in found} == {8, 14, 21}
    assert ("IPF105", 8) in found and ("IPF105", 14) in found  # the leaf error, through a view / a new leaf
    assert ("IPF103", 21) in found  # exp saved `y`; `d` shares its version counter


# ------------------------------------------------------------------ a mask from a helper
# Stop 35's false group op-saves-nothing (audiocraft snr_mixer, sound_dataset.py:247) in the shape
# the library has it: the boolean mask comes from a helper of the file, `(abs(audio) > t).any(1)`
# with the builtin `abs`. Indexing with a boolean tensor reads a copy, so what `/` saves is that
# copy, not `out`; the analysis knew masks built in place (`(out.abs() > 1).any(1)`) only.
MASK_HELPER = """\
import torch


def is_loud(audio: torch.Tensor, threshold: float = 0.99) -> torch.Tensor:
    return (abs(audio) > threshold).any(1)


def limit_peaks(signal, gain):
    out = signal * (gain / signal.std(1)).unsqueeze(1)
    clipped = is_loud(out)
    if clipped.any():
        peak = out[clipped].max(1)[0].abs().unsqueeze(1)
        out[clipped] = out[clipped] / peak
    return out


def limit_inline(signal, gain):
    out = signal * (gain / signal.std(1)).unsqueeze(1)
    clipped = (abs(out) > 0.99).any(1)
    peak = out[clipped].max(1)[0].abs().unsqueeze(1)
    out[clipped] = out[clipped] / peak
    return out
"""


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def test_masks_from_a_helper_or_builtin_abs_read_copies_backward_runs():
    ns = _defined(MASK_HELPER)
    for name in ("limit_peaks", "limit_inline"):
        torch.manual_seed(0)
        signal = torch.randn(4, 50, requires_grad=True)
        gain = torch.tensor(3.0, requires_grad=True)
        with torch.enable_grad():
            out = ns[name](signal, gain)
            assert bool((out.abs() >= 0.99).any(1).all())  # the clipping branch wrote every row
            assert not raises_at_backward(lambda: out.sum().backward())
        assert gain.grad is not None


def test_masks_from_a_helper_or_builtin_abs_are_not_proven():
    assert _proven(MASK_HELPER) == []


# Look-alikes: a helper that may return an int (a basic index: the read is a view and `/` saves
# `out` itself), and one whose mask is made from what may not be a tensor.
MASK_LOOK_ALIKES = """\
import torch


def pick(audio, loud_only):
    if loud_only:
        return (abs(audio) > 0.99).any(1)
    return 0


def limit_first(signal, gain):
    out = signal * (gain / signal.std(1)).unsqueeze(1)
    row = pick(out, False)
    out[row] = out[row] / out[row].abs().max()
    return out
"""


def test_mask_look_alikes_raise():
    limit_first = _defined(MASK_LOOK_ALIKES)["limit_first"]
    signal = torch.randn(4, 50, requires_grad=True)
    with torch.enable_grad():
        assert raises_at_backward(lambda: limit_first(signal, torch.tensor(3.0, requires_grad=True)).sum().backward())


def test_mask_look_alikes_stay_reported():
    """``row = pick(out, False)`` is ``0`` here; ``pick`` may also hand back a boolean mask (an advanced
    index: a copy, nothing of ``out`` saved), but only under ``if loud_only:``, which this call's literal
    ``False`` rules out (stop 57, prec57b: a helper read at the call's literal arguments). Stop 56 (prec56b)
    had left it possible; it is proven again. With an argument that is not a literal it stays possible."""
    line = _line_of(MASK_LOOK_ALIKES, "out[row] =")
    assert ("IPF104", line) in _proven(MASK_LOOK_ALIKES)
    unknown = MASK_LOOK_ALIKES.replace("pick(out, False)", "pick(out, gain.numel() > 1)")
    assert ("IPF104", line) not in _proven(unknown)
    result = process_source(unknown.encode(), "case.py", Settings(select=("IPF",)))
    assert ("IPF204", line) in [(f.code, f.span.line) for f in result.findings]


# ------------------------------------------------------------------ an own-gradient save in a helper
# Stop 35's false group nothing-requires-grad as speechbrain has it (AddNoise.forward,
# time_domain.py:178; the noise_funct form is fixed, tests/test_precision35.py): the helper saves
# its first argument only for that argument's own gradient (`abs`), and the call passes a fresh
# sample (no grad) with a second operand that is an argument of the forward. The analysis takes
# the call as one op that also reads that argument, so it counts as evidence that the save is
# made. Fixed at stop 43 (tests/test_precision43.py): a summary records for whose gradient each
# input is saved (`saved_for`), so an own-gradient save needs evidence of grad on that input.
OWN_IN_HELPER = """\
import torch


def amplitude(w, lengths):
    s = torch.sum(torch.abs(w), dim=1, keepdim=True)
    return s / lengths


class AddNoise(torch.nn.Module):
    def forward(self, waveforms, lengths):
        clean = amplitude(waveforms, lengths)
        noise = torch.randn_like(waveforms)
        noise_amp = amplitude(noise, lengths)
        noise *= clean / (noise_amp + 1e-14)
        return waveforms + noise
"""


def test_own_gradient_save_of_a_fresh_sample_in_a_helper_runs():
    add = _defined(OWN_IN_HELPER)["AddNoise"]()
    waveforms = torch.randn(3, 20, requires_grad=True)
    lengths = torch.full((3, 1), 20.0, requires_grad=True)
    with torch.enable_grad():
        assert not raises_at_backward(lambda: add(waveforms, lengths).sum().backward())
        # the look-alike: the same write into the tensor that requires grad raises
        source = OWN_IN_HELPER.replace("noise = torch.randn_like(waveforms)", "noise = waveforms * 1.0")
        add2 = _defined(source)["AddNoise"]()
        assert raises_at_backward(lambda: add2(waveforms, lengths).sum().backward())
        assert ("IPF101", _line_of(source, "noise *=")) in _proven(source)


def test_own_gradient_save_of_a_fresh_sample_in_a_helper_is_not_proven():
    assert ("IPF101", _line_of(OWN_IN_HELPER, "noise *=")) not in _proven(OWN_IN_HELPER)
