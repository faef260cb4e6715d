"""Stop 44 (issue 24, precision re-landed): stop 43's "for whose gradient" facts without its losses.

Group ``saved-for-a-tensor-operand``: a recurrent state written in place (``state += kv[t]``) after
an op that saved it for the gradient of its other operand, an argument of the function (the
query of recurrent linear attention, as fast-transformers' issue describes it). Where the op
takes tensors only (``torch.matmul``, ``mm``, ``bmm``, ``F.linear``, ``einsum``), that operand is a
tensor: the save is made as soon as it requires grad, as on main (proven). Stop 43 asked it to be
known as a tensor, as for ``state * w`` (where ``w`` may be a Python number), and lost the fixture
``hazards/linear_attention_state_update`` (recall 38 -> 37).

Look-alikes that stay unproven: the op takes a Python number for that operand (``torch.mul(state,
w)``, ``state * w``, with ``w`` of unknown kind: the call below passes 0.5 and runs).

Per case, the program is run with torch and the static check is asked (nothing imported, nothing run).
"""

from __future__ import annotations

import torch

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


TENSOR_ONLY = """\
import torch
import torch.nn.functional as F


def attend_matmul(q, kv):
    state = torch.zeros(4, 4)
    outs = []
    for t in range(3):
        state += kv[t]  # write
        outs.append(torch.matmul(q[t], state))
    return torch.stack(outs)


def attend_mm_method(q, kv):
    state = torch.zeros(4, 4)
    outs = []
    for t in range(3):
        state += kv[t]  # write
        outs.append(q[t].mm(state))
    return torch.stack(outs)


def attend_linear(q, kv):
    state = torch.zeros(4, 4)
    outs = []
    for t in range(3):
        state.add_(kv[t])  # write
        outs.append(F.linear(q[t], state))
    return torch.stack(outs)


def attend_bmm(q, kv):
    state = torch.zeros(1, 4, 4)
    outs = []
    for t in range(3):
        state += kv[t]  # write
        outs.append(torch.bmm(q[t].unsqueeze(0), state))
    return torch.stack(outs)
"""


def _attend_cases(ns):
    return [ns[name] for name in ("attend_matmul", "attend_mm_method", "attend_linear", "attend_bmm")]


def test_states_saved_for_a_tensor_operand_raise():
    for fn in _attend_cases(_defined(TENSOR_ONLY)):
        q = torch.randn(3, 4, 4, requires_grad=True)
        kv = torch.randn(3, 4, 4, requires_grad=True)
        assert raises_at_backward(lambda: fn(q, kv).sum().backward()), fn.__name__


def test_states_saved_for_a_tensor_operand_stay_proven():
    proven = {line for _, line in _proven(TENSOR_ONLY)}
    assert set(_writes(TENSOR_ONLY)) <= proven, sorted(set(_writes(TENSOR_ONLY)) - proven)


MAY_BE_A_NUMBER = """\
import torch


def decay_mul(w, kv):
    state = torch.zeros(4, 4)
    outs = []
    for t in range(3):
        state += kv[t]  # write
        outs.append(torch.mul(state, w))
    return torch.stack(outs)


def decay_operator(w, kv):
    state = torch.zeros(4, 4)
    outs = []
    for t in range(3):
        state += kv[t]  # write
        outs.append(state * w)
    return torch.stack(outs)
"""


def test_states_scaled_by_a_number_run():
    ns = _defined(MAY_BE_A_NUMBER)
    for fn in (ns["decay_mul"], ns["decay_operator"]):
        kv = torch.randn(3, 4, 4, requires_grad=True)
        assert not raises_at_backward(lambda: fn(0.5, kv).sum().backward()), fn.__name__


def test_states_scaled_by_what_may_be_a_number_are_not_proven():
    assert _proven(MAY_BE_A_NUMBER) == []


# ------------------------------------------------------------------ a fresh sample from the file's own callee
# Group ``own-callee-fresh`` (speechbrain's AddNoise, time_domain.py:178, described: the noise is
# drawn by a method of the module from what it was handed only for its sizes, then scaled in place
# to the clean signal's amplitude). The amplitude helper saves its input for that input's own
# gradient (``abs``): nothing is saved of a sample that requires no grad, and the program runs. The
# method is the file's own: what it returns is read (a fresh sample), not its first argument.
FRESH_FROM_OWN = """\
import torch


def energy(w):
    return torch.sum(torch.abs(w), dim=1, keepdim=True)


def sample_like(lengths, n):
    white = torch.randn(lengths.shape[0], n)
    return white * 0.1


class Mixer(torch.nn.Module):
    def forward(self, x, lengths):
        clean = energy(x)
        noise = self._draw(lengths, x.shape[1])
        noise *= clean / (energy(noise) + 1e-8)  # write
        return x + noise

    def _draw(self, lengths, n):
        rows = len(lengths)
        return torch.rand(rows, n, device=lengths.device) * 2 - 1


class PairMixer(torch.nn.Module):
    def forward(self, x, lengths):
        clean = energy(x)
        noise, noise_len = self._draw(lengths, x.shape[1])
        noise *= clean / (energy(noise) + 1e-8)  # write
        return x + noise, noise_len

    def _draw(self, lengths, n):
        batch = torch.randn(len(lengths), n)
        if batch.shape[0] > 1:
            batch = batch[: len(lengths)]
        return batch, lengths.clone()


class FunctionMixer(torch.nn.Module):
    def forward(self, x, lengths):
        clean = energy(x)
        noise = sample_like(lengths, x.shape[1])
        noise *= clean / (energy(noise) + 1e-8)  # write
        return x + noise
"""


def _mixers(source: str):
    ns = _defined(source)
    return [ns[name]() for name in ("Mixer", "PairMixer", "FunctionMixer")]


def _out(result):
    return result[0] if isinstance(result, tuple) else result


def test_fresh_samples_from_own_callees_run():
    for mixer in _mixers(FRESH_FROM_OWN):
        x = torch.randn(3, 20, requires_grad=True)
        lengths = torch.full((3, 1), 20.0, requires_grad=True)
        assert not raises_at_backward(lambda: _out(mixer(x, lengths)).sum().backward()), type(mixer).__name__


def test_fresh_samples_from_own_callees_are_not_proven():
    assert _proven(FRESH_FROM_OWN) == []


# Look-alikes: the callee computes what it returns from its argument (directly, as the tuple's
# element the caller writes, or through two helpers of the file and dtype conversions, as
# asteroid's generalized_eigenvalue_decomposition does): the argument requires grad, the sample
# does, abs saves it, the write breaks it.
DERIVED_FROM_OWN = FRESH_FROM_OWN.replace(
    "        return torch.rand(rows, n, device=lengths.device) * 2 - 1\n",
    "        return lengths.expand(rows, n) * 0.01\n").replace(
    "        batch = torch.randn(len(lengths), n)\n", "        batch = lengths.expand(-1, n) * 0.01\n").replace(
    "    white = torch.randn(lengths.shape[0], n)\n    return white * 0.1\n",
    "    e_val, e_vec = _scaled(lengths.expand(-1, n).to(torch.float64))\n"
    "    return e_val.to(lengths.dtype), e_vec.to(lengths.dtype)\n\n\n"
    "def _scaled(a):\n    e_val, e_vec = a * 0.1, a * 0.01\n    return e_val, e_vec[..., :]\n").replace(
    "        noise = sample_like(lengths, x.shape[1])\n", "        _, noise = sample_like(lengths, x.shape[1])\n")


def test_samples_computed_from_the_argument_raise():
    assert DERIVED_FROM_OWN != FRESH_FROM_OWN and "_scaled" in DERIVED_FROM_OWN
    for mixer in _mixers(DERIVED_FROM_OWN):
        x = torch.randn(3, 20, requires_grad=True)
        lengths = torch.full((3, 1), 20.0, requires_grad=True)
        assert raises_at_backward(lambda: _out(mixer(x, lengths)).sum().backward()), type(mixer).__name__


def test_samples_computed_from_the_argument_stay_proven():
    proven = {line for _, line in _proven(DERIVED_FROM_OWN)}
    assert set(_writes(DERIVED_FROM_OWN)) <= proven, sorted(set(_writes(DERIVED_FROM_OWN)) - proven)


# Look-alike: the own callee draws a sample and passes it through a module with parameters (a
# generator the module does not own): not computed from the argument, yet it requires grad, abs saves it, the write breaks it.
GENERATED = """\
import torch


def energy(w):
    return torch.sum(torch.abs(w), dim=1, keepdim=True)


GEN = torch.nn.Linear(4, 20)


class Generated(torch.nn.Module):
    def forward(self, x, lengths):
        clean = energy(x)
        fake = self._generate(lengths)
        fake *= clean / (energy(fake) + 1e-8)  # write
        return x + fake

    def _generate(self, lengths):
        z = torch.randn(len(lengths), 4)
        return GEN(z)
"""


def test_a_generated_sample_raises_and_stays_proven():
    mixer = _defined(GENERATED)["Generated"]()
    x = torch.randn(3, 20, requires_grad=True)
    assert raises_at_backward(lambda: mixer(x, torch.full((3, 1), 20.0)).sum().backward())
    assert set(_writes(GENERATED)) <= {line for _, line in _proven(GENERATED)}
