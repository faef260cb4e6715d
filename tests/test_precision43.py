"""Stop 43 (issue 24, precision): for whose gradient an input is saved.

Group ``saved-for-another``: an op may save its input ``a`` only to compute the gradient of its
other input ``b`` (``a @ b``, ``F.linear(a, w)``, ``torch.einsum(eq, a, b)``, ``torch.addmm(c, a,
b)``...). When ``b`` requires no grad (a fresh sample, a constant), nothing of ``a`` is saved and a
later in-place write into ``a`` cannot raise, even though ``a`` itself requires grad. Which inputs
need which is measured from torch (``torch_api.SAVED_FOR``, ``scripts/gen_torch_api.py``). The same
holds inside a helper of the file: its summary records for whose gradient each input is saved, so
that a call passing a constant for the other operand saves nothing of the first, and a helper that
saves an input only for that input's own gradient (``abs``, ``** 2``: speechbrain's
``compute_amplitude``, time_domain.py:178) saves nothing of a fresh sample handed to it, whatever the
call's other arguments are.

Look-alikes stay proven: the other operand requires grad (``requires_grad=True``, an
``nn.Parameter``), or the helper's own
gradient save runs on what requires grad.

Per case, one test runs the program with torch and one asks the static check (nothing imported,
nothing run).
"""

from __future__ import annotations

import pytest
import torch

from codemod import torch_api
from codemod.config import Settings
from codemod.engine.pipeline import process_source

from .backward import raises_at_backward


def _proven(source: str):
    result = process_source(source.encode(), "case.py", Settings(select=("IPF1",)))
    assert result.error is None, result.error
    return [(f.code, f.span.line) for f in result.findings]


def _defined(source: str) -> dict:
    namespace: dict = {"__name__": "case"}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _writes(source: str):
    """The lines of the in-place writes checked (marked ``# write``)."""
    return [i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith("# write")]


# ------------------------------------------------------------------ saved only for a constant's gradient
FOR_A_CONSTANT = """\
import torch
import torch.nn.functional as F


def project(x):
    basis = torch.randn(3, 3)
    y = torch.matmul(x, basis)
    x.add_(1)  # write
    return y


def project_method(x):
    basis = torch.randn(3, 3)
    y = x.mm(basis)
    x.mul_(2)  # write
    return y


def fixed_linear(x):
    weight = torch.randn(4, 3)
    y = F.linear(x, weight)
    x.clamp_(-1, 1)  # write
    return y


def mix(x):
    rotation = torch.eye(3) * 0.5
    y = torch.einsum("ij,jk->ik", x, rotation)
    x.zero_()  # write
    return y


def batched(x):
    table = torch.ones(2, 3, 3)
    y = torch.bmm(x.unsqueeze(0).expand(2, 3, 3), table)
    x.add_(1)  # write
    return y


def shifted(x):
    bias = torch.zeros(3, 3)
    y = torch.addmm(bias, x, torch.rand(3, 3))
    x.sub_(1)  # write
    return y


def scale(a, b):
    return a * b


def scaled(x):
    mask = torch.rand(3, 3)
    y = scale(x, mask)
    x.add_(1)  # write
    return y
"""


def _cases(ns):
    return [ns[name] for name in ("project", "project_method", "fixed_linear", "mix", "batched", "shifted", "scaled")]


def test_saved_only_for_a_constant_runs():
    ns = _defined(FOR_A_CONSTANT)
    for case in _cases(ns):
        x = torch.randn(3, 3, requires_grad=True)
        with torch.enable_grad():
            assert not raises_at_backward(lambda: case(x * 1.0).sum().backward()), case.__name__
        assert x.grad is not None


def test_saved_only_for_a_constant_is_not_proven():
    assert len(_writes(FOR_A_CONSTANT)) == 7
    assert _proven(FOR_A_CONSTANT) == []


# Look-alikes: the other operand requires grad (made so, or a parameter).
FOR_A_GRAD = """\
import torch
import torch.nn.functional as F
from torch import nn


def project(x):
    basis = torch.randn(3, 3, requires_grad=True)
    y = torch.matmul(x, basis)
    x.add_(1)  # write
    return y


def project_method(x):
    basis = torch.randn(3, 3, requires_grad=True)
    y = x.mm(basis)
    x.mul_(2)  # write
    return y


class Fixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(4, 3))

    def forward(self, x):
        y = F.linear(x, self.weight)
        x.clamp_(-1, 1)  # write
        return y


def mix(x):
    rotation = nn.Parameter(torch.randn(3, 3))
    y = torch.einsum("ij,jk->ik", x, rotation)
    x.zero_()  # write
    return y


def scale(a, b):
    return a * b


def scaled(x):
    mask = torch.rand(3, 3).requires_grad_()
    y = scale(x, mask)
    x.add_(1)  # write
    return y
"""


def test_saved_for_a_grad_raises():
    ns = _defined(FOR_A_GRAD)
    with torch.enable_grad():
        for run in (ns["project"], ns["project_method"], ns["Fixed"](), ns["mix"], ns["scaled"]):
            x = torch.randn(3, 3, requires_grad=True)
            assert raises_at_backward(lambda: run(x * 1.0).sum().backward())


def test_saved_for_a_grad_stays_proven():
    found = {line for _, line in _proven(FOR_A_GRAD)}
    assert set(_writes(FOR_A_GRAD)) <= found


# ------------------------------------------------------------------ own-gradient saves in a helper
# speechbrain's AddNoise (time_domain.py:178) as the public description has it: a helper that
# saves its first input only for that input's own gradient (`abs`, `** 2`), called on a fresh
# sample with a second operand (lengths) that is an argument of the forward.
OWN_SAVES = """\
import torch


def amplitude(w, lengths, kind="avg"):
    if kind == "avg":
        total = torch.sum(torch.abs(w), dim=1, keepdim=True)
    else:
        total = torch.sum(torch.pow(w, 2), dim=1, keepdim=True)
    return total / lengths


def add_noise(waveforms, lengths):
    clean = amplitude(waveforms, lengths)
    noise = torch.randn_like(waveforms)
    noise_amp = amplitude(noise, lengths, kind="rms")
    noise *= clean / (noise_amp + 1e-14)  # write
    return waveforms + noise


def add_noise_kw(waveforms, lengths):
    noise = torch.rand(3, 20)
    noise_amp = amplitude(noise, lengths=lengths)
    noise /= noise_amp  # write
    return waveforms + noise
"""


def test_own_gradient_saves_of_a_sample_run():
    ns = _defined(OWN_SAVES)
    for name in ("add_noise", "add_noise_kw"):
        waveforms = torch.randn(3, 20, requires_grad=True)
        lengths = torch.full((3, 1), 20.0, requires_grad=True)
        with torch.enable_grad():
            assert not raises_at_backward(lambda: ns[name](waveforms, lengths).sum().backward())
        assert lengths.grad is not None


def test_own_gradient_saves_of_a_sample_are_not_proven():
    assert _proven(OWN_SAVES) == []


# Look-alike: the helper's own-gradient save runs on what requires grad (an argument).
OWN_SAVES_GRAD = OWN_SAVES.replace("noise = torch.randn_like(waveforms)", "noise = waveforms * 1.0") \
    .replace("noise = torch.rand(3, 20)", "noise = waveforms[:, :20] * 1.0")


def test_own_gradient_saves_of_a_grad_raise():
    ns = _defined(OWN_SAVES_GRAD)
    for name in ("add_noise", "add_noise_kw"):
        waveforms = torch.randn(3, 20, requires_grad=True)
        lengths = torch.full((3, 1), 20.0)
        with torch.enable_grad():
            assert raises_at_backward(lambda: ns[name](waveforms, lengths).sum().backward())


def test_own_gradient_saves_of_a_grad_stay_proven():
    found = {line for _, line in _proven(OWN_SAVES_GRAD)}
    assert set(_writes(OWN_SAVES_GRAD)) <= found


# ------------------------------------------------------------------ the measured fact
@pytest.mark.parametrize("op,saved,users", [
    ("matmul", "input0", ("input1",)), ("linear", "input0", ("input1",)), ("mm", "input1", ("input0",)),
    ("addmm", "input1", ("input2",)), ("einsum", "input1", ("input0",)), ("mul", "input0", ("input1",)),
])
def test_saved_for_is_measured(op, saved, users):
    assert torch_api.SAVED_FOR[op][saved] == users


# speechbrain's AddNoise has a second source of noise: a method of the class that loads it
# (`noise, noise_len = self._load_noise(lengths, n)`), handed the forward's `lengths` first. The
# analysis takes the first argument of a call it does not look into as what the result is computed
# from (evidence that the own-gradient save is made); the method is the file's own, and its
# returns say what the result is computed from. Fixed at stop 44 (tests/test_mend44.py): the returns
# are read, and only a search that sees everything they are computed from (no op it does not know,
# no callable it was handed) may conclude "from no argument" (asteroid's GEV beamformer stays proven).
LOADED_NOISE = """\
import torch


def amplitude(w, lengths):
    return torch.sum(torch.abs(w), dim=1, keepdim=True) / lengths


class AddNoise(torch.nn.Module):
    def __init__(self, loader=None):
        super().__init__()
        self.loader = loader

    def forward(self, waveforms, lengths):
        clean = amplitude(waveforms, lengths)
        if self.loader is None:
            noise = torch.randn_like(waveforms)
        else:
            noise, noise_len = self._load_noise(lengths, waveforms.shape[1])
        noise_amp = amplitude(noise, lengths)
        noise *= clean / (noise_amp + 1e-14)  # write
        return waveforms + noise

    def _load_noise(self, lengths, max_length):
        lengths = lengths.long().squeeze(1)
        if not hasattr(self, "noise_data"):
            self.noise_data = iter(self.loader)
        batch = next(self.noise_data)[: len(lengths), :max_length]
        batch_len = torch.full((len(lengths), 1), float(max_length))
        return batch, batch_len
"""


def test_noise_from_an_own_loader_runs():
    AddNoise = _defined(LOADED_NOISE)["AddNoise"]
    for loader in (None, [torch.randn(8, 40)]):
        add = AddNoise(loader)
        waveforms = torch.randn(3, 20, requires_grad=True)
        lengths = torch.full((3, 1), 20.0, requires_grad=True)
        with torch.enable_grad():
            assert not raises_at_backward(lambda: add(waveforms, lengths).sum().backward())


def test_noise_from_an_own_loader_is_not_proven():
    assert _proven(LOADED_NOISE) == []


# Look-alike: the loader computes the noise from what it is handed (it requires grad).
LOADED_FROM_INPUT = LOADED_NOISE.replace('noise, noise_len = self._load_noise(lengths, waveforms.shape[1])',
                                         'noise, noise_len = self._load_noise(waveforms, waveforms.shape[1])') \
    .replace("batch = next(self.noise_data)[: len(lengths), :max_length]", "batch = lengths[:, :max_length] * 0.5") \
    .replace("lengths = lengths.long().squeeze(1)", "lengths = lengths.squeeze(1)")


def test_noise_from_the_input_raises_and_stays_proven():
    add = _defined(LOADED_FROM_INPUT)["AddNoise"]([torch.randn(8, 40)])
    waveforms = torch.randn(3, 20, requires_grad=True)
    with torch.enable_grad():
        assert raises_at_backward(lambda: add(waveforms, torch.full((3, 1), 20.0)).sum().backward())
    assert set(_writes(LOADED_FROM_INPUT)) <= {line for _, line in _proven(LOADED_FROM_INPUT)}


# Look-alike (SPSA's `linf_clamp_` in torchattacks and advertorch, as their docstrings describe
# it: the perturbation is clamped and changed in place so that the optimizer keeps tracking it).
# The helper writes into the input it saved for its own gradient (`dx += x_adv - x - dx`), with
# a value computed from `x`: where `x` requires grad, `dx` does after the first call, and the
# next call's write breaks what its clamp saved. A summary ties no save of an input it writes
# into to what the caller passes for it (a write may give it grad).
CLAMPED_IN_PLACE = """\
import torch


def clamp_step(dx, x, eps):
    dx_clamped = torch.clamp(dx, min=-eps, max=eps)
    x_adv = torch.clamp(x + dx_clamped, min=0, max=1)
    dx += x_adv - x - dx  # write
    return dx


def perturb(x, steps, eps):
    dx = torch.zeros_like(x)
    dx.grad = torch.zeros_like(dx)
    optimizer = torch.optim.Adam([dx], lr=0.01)
    for _ in range(steps):
        optimizer.zero_grad()
        dx.grad = torch.sign(torch.randn_like(x))
        optimizer.step()
        dx = clamp_step(dx, x, eps)
    return x + dx
"""


def test_a_clamped_perturbation_of_an_input_that_requires_grad_raises_and_stays_proven():
    perturb = _defined(CLAMPED_IN_PLACE)["perturb"]
    x = torch.rand(2, 3, requires_grad=True)
    with torch.enable_grad():
        assert raises_at_backward(lambda: perturb(x, 3, 0.1).sum().backward())
    assert set(_writes(CLAMPED_IN_PLACE)) <= {line for _, line in _proven(CLAMPED_IN_PLACE)}


# ------------------------------------------------------------------ parameters switched off
# Group ``frozen-copy`` (pytorch-ignite's EMAHandler, ema_handler.py:194): an averaged copy of a
# model whose parameters the class switches off when it makes it (`param.detach_()`,
# `requires_grad_(False)`, `requires_grad = False`, over `copy.parameters()`, or the copy's
# `requires_grad_(False)`), then updated in place in a loop over `copy.parameters()`. The loop
# variable was taken for a parameter that requires grad; those parameters require none, and
# PyTorch lets one write into them.
FROZEN_COPIES = """\
import copy

import torch
from torch import nn


class Detached:
    def __init__(self, model: nn.Module, momentum: float = 0.5):
        self.model = model
        self.momentum = momentum
        self.ema_model = copy.deepcopy(self.model)
        for param in self.ema_model.parameters():
            param.detach_()

    def update(self):
        for ema_p, model_p in zip(self.ema_model.parameters(), self.model.parameters()):
            ema_p.mul_(1.0 - self.momentum).add_(model_p.data, alpha=self.momentum)  # write


class Switched:
    def __init__(self, model: nn.Module, momentum: float = 0.5):
        self.model = model
        self.momentum = momentum
        self.shadow = copy.deepcopy(model)
        for p in self.shadow.parameters():
            p.requires_grad_(False)

    def update(self):
        for s, p in zip(self.shadow.parameters(), self.model.parameters()):
            s.lerp_(p.detach(), self.momentum)  # write


class Flagged:
    def __init__(self, model: nn.Module, momentum: float = 0.5):
        self.model = model
        self.momentum = momentum
        self.average = copy.deepcopy(model)
        for name, p in self.average.named_parameters():
            p.requires_grad = False

    def update(self):
        for a, p in zip(self.average.parameters(), self.model.parameters()):
            a.copy_(a * (1 - self.momentum) + p.detach() * self.momentum)  # write


class Whole:
    def __init__(self, model: nn.Module, momentum: float = 0.5):
        self.model = model
        self.momentum = momentum
        self.ema = copy.deepcopy(model)
        self.ema.requires_grad_(False)

    def update(self):
        for e, p in zip(self.ema.parameters(), self.model.parameters()):
            e.sub_((e - p.detach()) * self.momentum)  # write
"""


def test_updates_of_frozen_copies_run():
    ns = _defined(FROZEN_COPIES)
    for name in ("Detached", "Switched", "Flagged", "Whole"):
        model = torch.nn.Linear(3, 2)
        ema = ns[name](model)
        with torch.enable_grad():
            ema.update()
            ema.update()
            model(torch.randn(4, 3)).sum().backward()
        assert model.weight.grad is not None


def test_updates_of_frozen_copies_are_not_proven():
    assert len(_writes(FROZEN_COPIES)) == 4
    assert _proven(FROZEN_COPIES) == []


# Look-alikes: a copy nothing switches off, and one where the class switches off another
# module's parameters (the teacher's), not the copy's.
LIVE_COPIES = """\
import copy

import torch
from torch import nn


class Live:
    def __init__(self, model: nn.Module, momentum: float = 0.5):
        self.model = model
        self.momentum = momentum
        self.ema_model = copy.deepcopy(self.model)

    def update(self):
        for ema_p, model_p in zip(self.ema_model.parameters(), self.model.parameters()):
            ema_p.mul_(1.0 - self.momentum).add_(model_p.data, alpha=self.momentum)  # write


class OtherFrozen:
    def __init__(self, model: nn.Module, teacher: nn.Module, momentum: float = 0.5):
        self.model = model
        self.teacher = teacher
        self.momentum = momentum
        self.ema_model = copy.deepcopy(self.model)
        for param in self.teacher.parameters():
            param.detach_()

    def update(self):
        for ema_p, model_p in zip(self.ema_model.parameters(), self.model.parameters()):
            ema_p.mul_(1.0 - self.momentum).add_(model_p.data, alpha=self.momentum)  # write
"""


def test_updates_of_live_copies_raise_and_stay_proven():
    ns = _defined(LIVE_COPIES)
    for make in (lambda m: ns["Live"](m), lambda m: ns["OtherFrozen"](m, torch.nn.Linear(2, 2))):
        ema = make(torch.nn.Linear(3, 2))
        with torch.enable_grad():
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
                ema.update()
    assert set(_writes(LIVE_COPIES)) <= {line for _, line in _proven(LIVE_COPIES)}


# ------------------------------------------------------------------ open groups (stop 43's new code bases)
# Group ``backward-before-write`` (torchattacks EADEN/EADL1 `adjust_constant`, eaden.py/eadl1.py:
# 261, 265, 266): a binary search over a constant that a loss multiplies (`const * f`, saved for
# `f`'s gradient); each loss is backpropagated (`cost.backward()`) before the search writes the
# constant in place, and the next step builds a new graph. The graph that saved it is gone when
# the write runs: nothing can raise. Open: the analysis does not see a backward consume a graph.
BINARY_SEARCH = """\
import torch


class Search:
    def loss(self, out, const):
        return torch.sum(const * out.sum(1))

    def adjust(self, out, const):
        mask = out.sum(1) > 0
        const[mask] = const[mask] * 10  # write

    def run(self, model, x, steps):
        const = torch.ones(x.shape[0])
        for _ in range(steps):
            for _ in range(3):
                out = model(x)
                cost = self.loss(out, const)
                cost.backward()
            self.adjust(out.detach(), const)
        return const
"""


def test_a_constant_written_after_backward_runs():
    search = _defined(BINARY_SEARCH)["Search"]()
    model = torch.nn.Linear(3, 2)
    with torch.enable_grad():
        const = search.run(model, torch.randn(4, 3), 3)
    assert const.shape == (4,)


def test_a_constant_written_after_backward_is_not_proven():
    assert _proven(BINARY_SEARCH) == []
