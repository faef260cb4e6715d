"""Fixtures that define ``example()`` are run with real torch, before and after the rewrite.

- input works: every rewrite gives the same outputs and gradients, and leaves the same final
  state (bit for bit where the same kernels ran, else within a few ulps: ``final_state.ulps_for``;
  parameters, buffers, their ``.grad``, optimizer state, mutated inputs
  returned: ``tests/final_state.py``), except where the case says ``# runtime: unsafe-changes``:
  there the unsafe rewrite must change something, which is why it is unsafe;
- input fails with the in-place error: the rewrite runs backward and its gradients and final
  state equal the oracle's (the input run with its saved tensors snapshotted).
  ``# runtime: needs-unsafe-fixes`` says that only the unsafe rewrite gets there, and the safe
  one must still fail.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.harness import load_module, max_difference, run, snapshot_saved_tensors  # noqa: E402

from .final_state import differences, run_example, ulps_for  # noqa: E402
from .test_fixtures import CASES, case_id  # noqa: E402

# The leaf family has its own reference (the no_grad meaning): tests/test_leaf_fixtures.py.
# So has the view family (writes into copies): tests/test_view_fixtures.py.
RUNNABLE = [p for p in CASES if "\ndef example(" in p.read_text() and p.parent.name not in ("leaf_update", "view_write")]
TOL = 1e-6


def header(path) -> str:
    first = path.read_text().splitlines()[0]
    return first.split(":", 1)[1].strip() if first.startswith("# runtime:") else ""


def run_file(path, snapshot=False):
    module = load_module(path.read_text(), str(path), f"fixture_{path.stem.replace('.', '_')}")
    return run(module.example, snapshot=snapshot)


def same(a, b) -> bool:
    return max_difference(a.outputs, b.outputs) <= TOL and max_difference(a.grads, b.grads) <= TOL


def final_state(path, snapshot=False):
    """What ``example()`` leaves behind (its return value's tensors, modules and optimizers)."""
    if not snapshot:
        return run_example(path)
    with snapshot_saved_tensors():
        return run_example(path)


def state_gaps(after, before, tol: float = 0.0):
    """The state entries that differ by more than ``tol`` (bit for bit where ``tol`` is 0 and both
    runs ran the same kernels; within a few ulps where they ran others: ``ulps_for``)."""
    return {k: v for k, v in differences(after, before, ulps_for(after, before)).items() if v > tol}


@pytest.mark.parametrize("path", RUNNABLE, ids=case_id)
def test_rewrite_keeps_or_repairs_the_program(path):
    mode = header(path)
    case = path.name[: -len(".in.py")]
    safe_path = path.with_name(f"{case}.out.py")
    unsafe_path = path.with_name(f"{case}.unsafe.out.py")
    original = run_file(path)
    safe = run_file(safe_path)
    unsafe = run_file(unsafe_path) if unsafe_path.exists() else None
    if original.ok:
        assert not mode.startswith("needs"), "the input was expected to fail"
        assert safe.ok, safe.error
        assert same(original, safe), "the safe rewrite changed outputs or gradients"
        before = final_state(path)
        assert state_gaps(final_state(safe_path), before) == {}, "the safe rewrite changed the final state"
        if unsafe is not None:
            if mode == "unsafe-changes":
                assert not unsafe.ok or not same(original, unsafe) or state_gaps(final_state(unsafe_path), before), \
                    "marked unsafe but changes nothing"
            else:
                assert unsafe.ok and same(original, unsafe), "the unsafe rewrite changed values"
                assert state_gaps(final_state(unsafe_path), before) == {}, "the unsafe rewrite changed the final state"
        return
    assert original.inplace_error, f"the input failed for another reason: {original.error!r}"
    oracle = run_file(path, snapshot=True)
    assert oracle.ok, oracle.error
    reference = final_state(path, snapshot=True)
    if mode == "needs-unsafe-fixes":
        assert not safe.ok and safe.inplace_error, "the safe rewrite was expected to fall short"
        assert unsafe is not None and unsafe.ok, unsafe and unsafe.error
        assert same(oracle, unsafe), "the unsafe rewrite differs from the oracle"
        assert state_gaps(final_state(unsafe_path), reference, TOL) == {}, "the unsafe rewrite's final state differs"
    else:
        assert safe.ok, f"the rewrite still fails: {safe.error!r}"
        assert same(oracle, safe), "the rewrite differs from the oracle"
        assert state_gaps(final_state(safe_path), reference, TOL) == {}, "the rewrite's final state differs"


def test_there_are_runnable_fixtures_on_both_sides():
    broken = [p for p in RUNNABLE if not run_file(p).ok]
    assert len(broken) >= 10 and len(RUNNABLE) - len(broken) >= 5


def test_the_final_state_sees_what_outputs_and_gradients_miss(tmp_path):
    """A dead store (``b = b.mul(0.9)`` for ``b.mul_(0.9)`` over a frozen copy's parameters)
    keeps the outputs and gradients and drops the update: only the final state shows it."""
    program = '''import torch


def example():
    lin = torch.nn.Linear(3, 2)
    ema = torch.nn.Linear(3, 2).requires_grad_(False)
    y = lin(torch.randn(4, 3)).sum()
    for b in ema.parameters():
        b.mul_(0.9)
    return {"y": y, "ema": ema}
'''
    before, after = tmp_path / "before.py", tmp_path / "after.py"
    before.write_text(program)
    after.write_text(program.replace("b.mul_(0.9)", "b = b.mul(0.9)"))
    assert same(run_file(before), run_file(after))
    assert set(state_gaps(final_state(after), final_state(before))) == {"ema.weight", "ema.bias"}
