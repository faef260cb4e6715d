"""SIGINT to the main process of ``fix -j N``: every worker stops before its next write, the
main process says so and exits 130, and no file is half-written.

The run is instrumented from inside (a wrapper around ``os.replace`` logs every write of a
source file with the system-wide monotonic clock, in every process; the main process sends
itself SIGINT right after its own third write once a worker has written too, and logs when its SIGINT handler returned):
the point of the signal is fixed, not slept for."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys

import pytest

from .test_cli import BROKEN, _env

DRIVER = r"""
import os, signal, sys, time
LOG, MAIN = os.environ["INPLACEFIX_TEST_LOG"], os.getpid()
real_replace, real_signal, sent, signalled = os.replace, signal.signal, [], []

def log(line):
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (line + "\n").encode())
    os.close(fd)

def replace(src, dst, *args, **kwargs):
    real_replace(src, dst, *args, **kwargs)
    if str(dst).endswith(".py"):
        log(f"W {os.getpid()} {time.monotonic_ns()} {os.path.basename(dst)}")
        if os.getpid() == MAIN and not signalled:
            sent.append(1)
            # After the main process's third write, once a worker has written too (a worker
            # slow to start on a loaded machine must not make the test's premise fail).
            workers_wrote = any(l.split()[0] == "W" and l.split()[1] != str(MAIN)
                                for l in open(LOG).read().splitlines())
            if len(sent) >= 3 and (workers_wrote or sys.argv[sys.argv.index("-j") + 1] == "1"):
                signalled.append(1)
                log(f"K {os.getpid()} {time.monotonic_ns()} -")
                os.kill(MAIN, signal.SIGINT)

def wrapped_signal(signum, handler):
    if signum == signal.SIGINT and callable(handler) and os.getpid() == MAIN:
        inner = handler
        def handler(s, frame):
            inner(s, frame)
            if os.getpid() == MAIN:
                log(f"H {os.getpid()} {time.monotonic_ns()} -")
    return real_signal(signum, handler)

os.replace, signal.signal = replace, wrapped_signal
import codemod.frontends.cli as cli
sys.argv[0] = "inplacefix"
cli.app()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method, POSIX signals")
@pytest.mark.parametrize("jobs", ["2", "1"])
def test_sigint_to_the_main_process_stops_every_worker_before_its_next_write(tmp_path, jobs):
    body = "".join(BROKEN.replace("def f(", f"def f{i}(").replace("import torch\n", "") for i in range(6))
    broken = "import torch\n" + body
    names = [f"m{i:02}.py" for i in range(40)]
    for name in names:
        (tmp_path / name).write_text(broken)
    log = tmp_path.parent / f"{tmp_path.name}.log"
    done = subprocess.run([sys.executable, "-c", DRIVER, "fix", "--no-cache", "--no-progress", "-j", jobs, "."],
                          cwd=tmp_path, env={**_env(), "INPLACEFIX_TEST_LOG": str(log)},
                          capture_output=True, text=True, timeout=300)
    events = [line.split() for line in log.read_text().splitlines()]
    writes = [(int(t), name) for kind, _, t, name in events if kind == "W"]
    handled = [int(t) for kind, _, t, _ in events if kind == "H"]
    sent = [(pid, int(t)) for kind, pid, t, _ in events if kind == "K"]
    assert sent, "the main process did not write three files"
    if jobs != "1":
        assert [e for e in events if e[0] == "W" and e[1] != sent[0][0]], "no worker wrote before the signal"
    late = [name for t, name in writes if t > (handled or [sent[0][1]])[0]]
    assert late == [], f"written after the signal was handled: {late}"
    assert handled, "SIGINT was not handled by the run (default KeyboardInterrupt)"
    assert done.returncode == 130, done.stderr
    assert "interrupted" in done.stderr
    # Every file is whole: as it was, or fully fixed; only the logged writes changed a file.
    changed = {p.name for p in tmp_path.iterdir() if p.read_text() != broken}
    assert changed == {name for _, name in writes}
    assert 0 < len(changed) < len(names)
    for name in changed:
        compile((tmp_path / name).read_text(), name, "exec")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".inplacefix")]
    assert "Fixed" in done.stderr and f"in {len(changed)} file" in done.stderr


@pytest.mark.skipif(os.name != "posix", reason="POSIX signals")
def test_a_first_signal_requests_a_stop_and_a_second_stops_at_once(tmp_path):
    from codemod.engine import fileio
    from codemod.frontends import workers

    (tmp_path / "m.py").write_bytes(b"as it was")
    with pytest.raises(KeyboardInterrupt):
        with workers.Interruption() as stop:
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):  # the handler runs between two bytecodes of this thread
                if stop.requested:
                    break
            assert stop.requested and not fileio.writing()
            with pytest.raises(fileio.Interrupted):  # no write starts after the first signal
                fileio.write_atomic(tmp_path / "m.py", b"changed")
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(1000):
                pass
    assert (tmp_path / "m.py").read_bytes() == b"as it was"
    assert stop.signal == signal.SIGINT and workers.last_signal() == signal.SIGINT
    assert not fileio.stop_requested()  # the next run starts clean
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


STUCK_DRIVER = r"""
import os, sys, time
LOG, HOW = os.environ["INPLACEFIX_TEST_LOG"], os.environ["INPLACEFIX_TEST_STUCK"]
import codemod.frontends.cli as cli
real = cli.process_path

def log(line):
    fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    os.write(fd, (line + "\n").encode())
    os.close(fd)

def process_path(path, **kwargs):
    # A file whose analysis never ends (as a class shadowing its base once looped): pure
    # Python, or one that swallows everything raised in it.
    if str(path).endswith("stuck.py") and not kwargs.get("project") is None:
        log(f"S {os.getpid()}")
        while True:
            try:
                time.sleep(0.01)
            except BaseException:
                if HOW == "pure":
                    raise
    return real(path, **kwargs)

cli.process_path = process_path
sys.argv[0] = "inplacefix"
cli.app()
"""


def _stuck_run(tmp_path, command: list, how: str):
    """Run ``command`` over 12 broken files and ``stuck.py``; SIGTERM once stuck.py is entered,
    as ``timeout`` does. Return (process, seconds from the signal to the end)."""
    import time

    for i in range(12):
        (tmp_path / f"m{i:02}.py").write_text(BROKEN)
    (tmp_path / "stuck.py").write_text(BROKEN)
    log = tmp_path.parent / f"{tmp_path.name}.stuck.log"
    proc = subprocess.Popen([sys.executable, "-c", STUCK_DRIVER, *command, "--no-cache", "--no-progress", "."],
                            cwd=tmp_path, env={**_env(), "INPLACEFIX_TEST_LOG": str(log),
                                               "INPLACEFIX_TEST_STUCK": how},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not (log.exists() and log.read_text().startswith("S")):
        assert time.monotonic() < deadline and proc.poll() is None, "stuck.py was never reached"
        time.sleep(0.05)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("one SIGTERM did not end a run stuck in one file")
    proc.stdout_text, proc.stderr_text = out, err
    return proc, time.monotonic() - sent


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method, POSIX signals")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_one_sigterm_ends_a_run_stuck_in_one_file_with_the_summary(tmp_path, jobs):
    """``timeout`` sends one SIGTERM: a file whose analysis never ends is abandoned after a grace
    (analysis writes nothing), the files done are reported and kept, and the run exits 143."""
    from codemod.frontends.workers import STOP_GRACE_S

    proc, took = _stuck_run(tmp_path, ["fix", "-j", jobs], "pure")
    assert proc.returncode == 143, proc.stderr_text
    assert took < STOP_GRACE_S + 20
    assert "interrupted (SIGTERM)" in proc.stderr_text and "of 13 files processed" in proc.stderr_text
    assert "ended at once" not in proc.stderr_text  # the summary path, not the last resort
    assert (tmp_path / "stuck.py").read_text() == BROKEN
    fixed = [p.name for p in tmp_path.glob("m*.py") if p.read_text() != BROKEN]
    for name in fixed:
        compile((tmp_path / name).read_text(), name, "exec")
    assert f"in {len(fixed)} file" in proc.stderr_text or not fixed
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".inplacefix")]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method, POSIX signals")
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_that_ignores_the_stop_is_ended_at_once_after_a_second_grace(tmp_path, jobs):
    """Last resort: the stuck work swallows what is raised in it; the run still ends, 143."""
    from codemod.frontends.workers import STOP_GRACE_S, STOP_HARD_S

    proc, took = _stuck_run(tmp_path, ["check", "-j", jobs], "deaf")
    assert proc.returncode == 143, proc.stderr_text
    assert STOP_GRACE_S <= took < STOP_GRACE_S + STOP_HARD_S + 20
    assert "ended at once" in proc.stderr_text
