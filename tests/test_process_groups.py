"""Runs of user code are killed whole: what a script or a verified function starts (a forked
copy writing a file in a loop, a ``subprocess.Popen(["sleep", "60"])``) is gone after the
timeout, and a run that ends leaves no process behind (issue 28, item 12)."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.isolate import Status, run_isolated  # noqa: E402
from codemod.runtime.script import Interpreters, Outcome, Script, run_script  # noqa: E402

# Writes the pids of what it starts (a `sleep 60` and a forked copy that appends to a file every
# 50 ms), then waits to be killed.
SPAWNER = """\
import os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
sleeper = subprocess.Popen(["sleep", "60"])
pid = os.fork()
if pid == 0:
    while True:
        with open(os.path.join(here, "ticks"), "a") as f:
            f.write("x")
        time.sleep(0.05)
with open(os.path.join(here, "pids.tmp"), "w") as f:
    f.write(f"{sleeper.pid} {pid}")
os.replace(os.path.join(here, "pids.tmp"), os.path.join(here, "pids"))
print("started", flush=True)
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 600)
"""


def alive(pid: int) -> bool:
    """Running (a zombie that nobody reaped yet counts as gone: it runs nothing)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def gone(pids, within: float = 3.0) -> bool:
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def started(folder: pathlib.Path):
    pids = folder / "pids"
    assert pids.exists(), "the script was killed before it started its children: raise the timeout"
    return [int(p) for p in pids.read_text().split()]


def assert_no_more_ticks(folder: pathlib.Path) -> None:
    ticks = folder / "ticks"
    before = ticks.stat().st_size if ticks.exists() else 0
    time.sleep(0.4)
    after = ticks.stat().st_size if ticks.exists() else 0
    assert after == before, "the forked copy still writes"


def _cleanup(pids):
    for pid in pids:
        try:
            os.kill(pid, 9)
        except (ProcessLookupError, PermissionError):
            pass


def test_run_timeout_kills_the_scripts_children(tmp_path):
    """Captured (``run --format json``); the CLI test below runs it uncaptured."""
    (tmp_path / "spawn.py").write_text(SPAWNER)
    start = time.monotonic()
    result = run_script(Script(path="spawn.py", cwd=str(tmp_path)), capture=True, timeout=8)
    assert result.outcome is Outcome.timeout
    assert time.monotonic() - start < 30  # a captured pipe held by a grandchild would block here
    pids = started(tmp_path)
    try:
        assert gone(pids), [p for p in pids if alive(p)]
        assert_no_more_ticks(tmp_path)
    finally:
        _cleanup(pids)


def test_a_script_that_ends_leaves_nothing_running(tmp_path):
    (tmp_path / "spawn.py").write_text(SPAWNER)
    result = run_script(Script(path="spawn.py", args=("0",), cwd=str(tmp_path)), capture=True, timeout=60)
    assert result.outcome is Outcome.clean, result.stderr
    pids = started(tmp_path)
    try:
        assert gone(pids, within=0.5), [p for p in pids if alive(p)]
    finally:
        _cleanup(pids)


def test_fork_server_runs_are_killed_whole(tmp_path):
    """``repair``'s fork server: at the timeout, and after a run that ended."""
    (tmp_path / "spawn.py").write_text(SPAWNER)
    with Interpreters() as server:
        result = run_script(Script(path="spawn.py", cwd=str(tmp_path)), capture=True, timeout=6, server=server)
        assert result.outcome is Outcome.timeout
        pids = started(tmp_path)
        try:
            assert gone(pids), [p for p in pids if alive(p)]
            assert_no_more_ticks(tmp_path)
        finally:
            _cleanup(pids)
        (tmp_path / "pids").unlink()
        ended = run_script(Script(path="spawn.py", args=("0",), cwd=str(tmp_path)), capture=True, timeout=60,
                           server=server)
        assert ended.outcome is Outcome.clean
        pids = started(tmp_path)
        try:
            assert gone(pids, within=0.5), [p for p in pids if alive(p)]
        finally:
            _cleanup(pids)


def spawn_and_return(folder: str, wait: float) -> int:
    """What a verified function might do: start a process and return (or hang)."""
    sleeper = subprocess.Popen(["sleep", "60"])
    with open(os.path.join(folder, f"pid-{sleeper.pid}"), "w"):
        pass
    time.sleep(wait)
    return sleeper.pid


def test_isolated_runs_leave_no_child(tmp_path):
    """``verify``/``locate``'s runs: none of N runs leaves a child, nor does one killed at the timeout."""
    for _ in range(3):
        outcome = run_isolated(spawn_and_return, str(tmp_path), 0.0, timeout=60)
        assert outcome.ok, outcome.detail or outcome.error
    killed = run_isolated(spawn_and_return, str(tmp_path), 600.0, timeout=3)
    assert killed.status is Status.TIMEOUT
    pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("pid-*")]
    assert len(pids) == 4
    try:
        assert gone(pids, within=1.0), [p for p in pids if alive(p)]
    finally:
        _cleanup(pids)


def test_the_cli_run_timeout_ends_the_pipeline(tmp_path):
    """``inplacefix run --timeout`` with its output piped: the pipe is not held open by the
    script's forked copy, so the pipeline ends."""
    (tmp_path / "spawn.py").write_text(SPAWNER)
    exe = os.path.join(os.path.dirname(sys.executable), "inplacefix")
    proc = subprocess.Popen([exe, "run", "spawn.py", "--timeout", "8"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        out, _ = proc.communicate(timeout=60)  # EOF only once every holder of the pipe is gone
    except subprocess.TimeoutExpired:
        proc.kill()
        pytest.fail("the pipe stayed open after the timeout")
    finally:
        if (tmp_path / "pids").exists():
            _cleanup(started(tmp_path))
    assert b"started" in out and proc.returncode == 1


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_tools_interrupt_or_end_takes_the_run_with_it(tmp_path, sig):
    """Ctrl-C reaches the script as it would without the tool (it is in a session of its own,
    so the terminal's SIGINT goes to the tool only); SIGTERM ends the tool and the whole run."""
    (tmp_path / "spawn.py").write_text(SPAWNER)
    exe = os.path.join(os.path.dirname(sys.executable), "inplacefix")
    proc = subprocess.Popen([exe, "run", "spawn.py"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "pids").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        pids = started(tmp_path)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=30)
        assert gone(pids), [p for p in pids if alive(p)]
        assert_no_more_ticks(tmp_path)
    finally:
        proc.kill()
        if (tmp_path / "pids").exists():
            _cleanup(started(tmp_path))
    if sig == signal.SIGINT:  # the script's own KeyboardInterrupt, reported as its failure
        assert b"KeyboardInterrupt" in out and proc.returncode == 1, out
    else:
        assert proc.returncode == 128 + signal.SIGTERM, out


VERIFIED = """\
import os, subprocess, time
import torch

def fn():
    sleeper = subprocess.Popen(["sleep", "60"])
    open(os.path.join({folder!r}, f"pid-{{sleeper.pid}}"), "w").close()
    time.sleep({wait})
    x = torch.ones(3, requires_grad=True)
    h = torch.sigmoid(x)
    h += 1
    return h.sum()
"""


def test_verify_timeout_leaves_no_child(tmp_path):
    """``verify --timeout``: its runs (the original, the rewrite) are killed with their children."""
    from codemod.runtime.verify import verify

    model = tmp_path / "model.py"
    model.write_text(VERIFIED.format(folder=str(tmp_path), wait=600))
    result = verify(f"{model}::fn", devices=["cpu"], timeout=3)
    assert "timed out" in str(result.to_json())
    pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("pid-*")]
    assert len(pids) == 2  # the original and the rewrite
    try:
        assert gone(pids, within=1.0), [p for p in pids if alive(p)]
    finally:
        _cleanup(pids)
