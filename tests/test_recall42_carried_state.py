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

from codemod.config import Settings
from tests.programs import process_in_project, raises_inplace, run_program

PROBES = pathlib.Path(__file__).resolve().parent.parent / "bench" / "probes" / "stA42"


def _read(name: str) -> str:
    return (PROBES / f"{name}.py").read_text()


def _codes(source: str) -> list:
    return [(f.code, f.span.line) for f in process_in_project(source, Settings()).findings]


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line.strip() == text)


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
