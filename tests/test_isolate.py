"""The public entry point for running code in a fresh process: ``run_isolated``."""

from __future__ import annotations

import os
import sys
import time

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.isolate import Status, run_isolated  # noqa: E402


def _grad_mode_and_seed():
    return torch.is_grad_enabled(), torch.initial_seed(), "helper_mod" in sys.modules


def _leak_state():
    torch.set_grad_enabled(False)
    import helper_mod  # noqa: F401 - found through path_first
    print("printed by the child")
    print("to stderr", file=sys.stderr)
    return helper_mod.VALUE, torch.ones(2) * 3


def test_value_output_and_a_fresh_state_every_time(tmp_path):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    first = run_isolated(_leak_state, path_first=str(tmp_path))
    assert first.ok and first.value[0] == 41 and torch.equal(first.value[1], torch.full((2,), 3.0))
    assert first.stdout == "printed by the child\n" and first.stderr == "to stderr\n"
    again = run_isolated(_grad_mode_and_seed)
    assert again.ok and again.value[0] is True and again.value[2] is False  # nothing leaked
    assert torch.is_grad_enabled()


def test_exceptions_exits_crashes_and_timeouts_are_results():
    raised = run_isolated(int, "not a number")
    assert raised.status is Status.RAISED and raised.error.type == "ValueError"
    exited = run_isolated(sys.exit, 0)
    assert exited.status is Status.RAISED and exited.error.type == "SystemExit" and exited.error.exit_code == 0
    crashed = run_isolated(os._exit, 3)
    assert crashed.status is Status.CRASHED and "exit code 3" in crashed.detail
    start = time.perf_counter()
    slow = run_isolated(time.sleep, 30, timeout=1)
    assert slow.status is Status.TIMEOUT and time.perf_counter() - start < 15


def test_working_directory_is_the_callers(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    here = run_isolated(os.getcwd)
    assert here.ok and os.path.samefile(here.value, tmp_path)
