"""Family A: recurrent state handed back and passed again (issue 24, stop 42).

A step function takes its state as a parameter, updates it in place, reads it with an op that
saves it, and returns it; the caller's loop passes the returned state to the next call
(``y, state = step(x[t], state)``). The next call's in-place update modifies what the previous
call saved (``analysis.carried``, ``hazard.CarriedState``). Proven only where the save after the
write is proven, both run on every call, every ``return`` hands the state back at the place the
caller's loop rebinds it from, nothing else binds it in the loop, no backward runs inside the
loop, and the loop is seen to turn at least twice. The programs are bench/probes/stA42 (new
programs written from the public description of recurrent steps, no corpus case); each original
dies in backward where the hazard is proven, each look-alike runs.
"""

from __future__ import annotations

import pathlib

import pytest
import torch

from codemod.analysis.hazard import ONE_DTYPE
from codemod.config import Settings
from tests.programs import process_in_project, raises_inplace, run_program

PROBES = pathlib.Path(__file__).resolve().parent.parent / "bench" / "probes" / "stA42"


def _read(name: str) -> str:
    return (PROBES / f"{name}.py").read_text()


def _codes(source: str) -> list:
    return [(f.code, f.span.line) for f in process_in_project(source, Settings()).findings]


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip() == text)


def test_linear_attention_sums_updated_in_place_and_handed_back_are_proven():
    """p1: ``S, Z = state``; the einsum with the floating ``elu(q) + 1`` shows ``S`` and ``Z``
    are floating (einsum refuses mixed dtypes), so its save of them is proven."""
    source = _read("p1_linear_attention_state")
    assert raises_inplace(source, "compute")
    codes = _codes(source)
    assert ("IPF101", _line(source, 'S += torch.einsum("bd,bm->bdm", k, v)')) in codes
    assert ("IPF101", _line(source, "Z += k")) in codes


def _one_dtype_call(op: str, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    if op == "einsum":
        return torch.einsum("ij,jk->ik", a, b)
    if op in ("matmul", "@"):
        return a @ b
    if op in ("bmm", "baddbmm"):
        a3, b3 = a[None], b[None]
        return torch.bmm(a3, b3) if op == "bmm" else torch.baddbmm(a3, a3, b3)
    return torch.mm(a, b) if op == "mm" else torch.addmm(a, a, b)


@pytest.mark.parametrize("op", sorted(ONE_DTYPE))
def test_one_dtype_ops_refuse_an_integral_operand_next_to_a_floating_one(op):
    floating, integral = torch.randn(3, 3), torch.ones(3, 3, dtype=torch.long)
    for a, b in ((floating, integral), (integral, floating)):
        with pytest.raises(RuntimeError):
            _one_dtype_call(op, a, b)
    assert _one_dtype_call(op, floating, floating).dtype == torch.float32


def test_a_promoting_op_is_not_one_dtype():
    assert (torch.randn(3) * torch.ones(3, dtype=torch.long)).dtype == torch.float32
    assert "mul" not in ONE_DTYPE and "*" not in ONE_DTYPE and "outer" not in ONE_DTYPE


def test_a_conv_window_stepped_in_place_and_handed_back_is_proven():
    source = _read("p2_conv_state_step")
    assert raises_inplace(source, "compute")
    codes = _codes(source)
    assert ("IPF103", _line(source, "window.copy_(torch.roll(window, shifts=-1, dims=-1))")) in codes
    assert ("IPF104", _line(source, "window[:, :, -1] = x")) in codes


@pytest.mark.parametrize("name", ["p3_hidden_inplace_cell", "p4_memory_keyword_method"])
def test_unproven_parts_stay_unproven(name):
    """p3: the matrix product saves the state for a parameter's gradient that only the caller
    shows requires grad; p4: the loop runs over a tensor, whose length the analysis cannot see
    (one turn would run): both raise, neither is proven (possible tier under --select ALL)."""
    source = _read(name)
    assert raises_inplace(source, "compute")
    assert not [c for c in _codes(source) if c[0].startswith("IPF1")]


@pytest.mark.parametrize("name", ["n1_fresh_state_each_call", "n2_out_of_place_state", "n3_backward_every_step",
                                  "n4_no_grad_rollout", "n5_save_before_write"])
def test_look_alikes_run_and_stay_unflagged(name):
    source = _read(name)
    run_program(source, "compute")  # runs: nothing the previous call saved is written
    assert _codes(source) == []


def test_a_rebinding_in_the_loop_or_a_return_without_the_state_is_not_proven():
    source = _read("p2_conv_state_step")
    rebound = source.replace("        outs.append(y)\n", "        outs.append(y)\n        window = torch.zeros(2, 4, 3)\n")
    run_program(rebound, "compute")
    assert _codes(rebound) == []
    other_return = source.replace("        y = torch.sum(window * self.weight, dim=-1)\n",
                                  "        y = torch.sum(window * self.weight, dim=-1)\n"
                                  "        if x.sum() > 1e9:\n            return y, window.clone()\n")
    assert not [c for c in _codes(other_return) if c[0].startswith("IPF1")]


def test_an_unrolled_cell_with_a_pair_of_states_is_proven():
    """p5 (written after the change): ``h, c = state`` ... ``return h, (h, c)``, called as
    ``y, state = self.cell(xs[t], state)`` in its model's forward."""
    source = _read("p5_unrolled_cell_tuple_state")
    assert raises_inplace(source, "compute")
    codes = _codes(source)
    assert ("IPF103", _line(source, "c.mul_(f)")) in codes and ("IPF101", _line(source, "c += i")) in codes


def test_a_cell_read_out_in_its_return_statement_is_proven_over_counted_steps():
    """p3 with the loop over ``range`` (a recurrence, taken to turn twice): the product in the
    ``return`` saves ``h`` for ``w_out``'s gradient, which the caller shows requires grad."""
    source = _read("p3_hidden_inplace_cell").replace(
        "    for x in torch.randn(6, 4, 3):\n", "    xs = torch.randn(6, 4, 3)\n    for t in range(xs.shape[0]):\n        x = xs[t]\n")
    assert raises_inplace(source, "compute")
    codes = _codes(source)
    assert ("IPF103", _line(source, "h.mul_(0.5)")) in codes and ("IPF103", _line(source, "h.add_(torch.tanh(x @ w_in))")) in codes


def test_a_state_handed_back_through_two_wrapping_layers_is_proven():
    """p6 (written after the change): the inner attention's sums, handed back by an attention
    layer and an encoder layer (``y, state = self.inner(q, k, v, state)`` ... ``return out,
    state``), which the user's loop threads through; n6, whose attention layer hands back copies,
    runs and stays silent."""
    source = _read("p6_wrapped_recurrent_layers")
    assert raises_inplace(source, "compute")
    codes = _codes(source)
    assert ("IPF101", _line(source, 'kv += torch.einsum("bd,bm->bdm", k, v)')) in codes
    assert ("IPF101", _line(source, "z += k")) in codes
    control = _read("n6_wrapped_layers_copied_state")
    run_program(control, "compute")
    assert not [c for c in _codes(control) if c[0].startswith("IPF1")]


@pytest.mark.parametrize("old, new", [
    # the writes under an `if`: a call may skip them
    ("        window.copy_(torch.roll(window, shifts=-1, dims=-1))\n        window[:, :, -1] = x\n",
     "        if x.shape[0] > 1:\n            window.copy_(torch.roll(window, shifts=-1, dims=-1))\n"
     "            window[:, :, -1] = x\n"),
    # a return before the write: a call may hand the window back without writing or saving it
    ("    def step(self, x, window):\n",
     "    def step(self, x, window):\n        if x.shape[0] > 9:\n            return x, window\n"),
    # bound again after the write: what is handed back is another tensor
    ("        return y, window\n", "        window = window * 1.0\n        return y, window\n"),
    # the call under an `if` in the loop: it may run once
    ("        y, window = conv.step(xs[t], window)\n",
     "        if t % 2 == 0:\n            y, window = conv.step(xs[t], window)\n"),
    # the loop runs a backward each turn
    ("        outs.append(y)\n", "        outs.append(y)\n        torch.autograd.backward(y.sum(), retain_graph=True)\n"),
], ids=["write-under-if", "return-before-write", "rebound-after-write", "call-under-if", "backward-in-loop"])
def test_what_may_not_run_on_every_call_is_not_proven(old, new):
    source = _read("p2_conv_state_step")
    assert old in source
    changed = source.replace(old, new)
    assert not [c for c in _codes(changed) if c[0].startswith("IPF1")], changed
