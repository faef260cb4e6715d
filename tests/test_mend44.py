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
