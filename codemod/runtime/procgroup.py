"""Children that are killed whole: each run of user code owns a process group.

Killing only the process the tool started leaves what that process started: a ``tee`` it
pipes into (which holds the tool's pipe open), a forked copy that keeps writing files, a
``subprocess.Popen(["sleep", "60"])``. So every run of user code (``run``, ``verify``,
``locate``, ``repair``) is the leader of its own process group:

- :func:`spawn` starts a command in a new session (``start_new_session``) and :func:`wait`
  waits for it; at the timeout the whole group gets ``SIGKILL``; when the leader ends on its own,
  what is left of its group is ended (:func:`end_group`: a moment's grace, ``SIGTERM``, then
  ``SIGKILL``); ``SIGINT``, ``SIGTERM`` and ``SIGHUP`` sent to the tool while it waits are
  passed on to the group (the script sees its Ctrl-C as it would without the tool), and the
  tool's own exit kills the groups still running (``atexit``);
- the fork servers (``isolate``, ``script.Interpreters``) put each forked run in its own group
  (:func:`own_group` in the child, :func:`adopt` in the server) and kill it the same way.

A process that leaves the group on purpose (``setsid``, a daemon) is out of reach: no cgroup
is used. This module does not import torch.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time
from typing import Iterator, Optional, Set

_live: Set[int] = set()  # process groups of this process's runs that may still have members
_lock = threading.Lock()
GRACE_S = 1.0  # how long what is left of a finished run's group may take to end on its own


def register(pgid: int) -> None:
    with _lock:
        _live.add(pgid)


def unregister(pgid: int) -> None:
    with _lock:
        _live.discard(pgid)


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Send ``sig`` to the group; False when it has no member left."""
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def kill_run(pid: int, sig: int = signal.SIGKILL) -> None:
    """Kill a forked run that its server has not reaped yet: its group, or the process itself
    when it was killed before its ``setpgid`` (then it has started nothing yet)."""
    if not kill_group(pid, sig):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs. A zombie runs nothing, and where the
    system's init does not reap orphans (some containers) they stay: on Linux the group's
    members are read from /proc, zombies left out."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not os.path.isdir("/proc/self"):
        return True
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as handle:
                fields = handle.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def end_group(pgid: int, grace_s: float = GRACE_S) -> None:
    """End what is left of a group whose leader has been reaped: it may end on its own (a
    ``tee`` reading the last of a pipe) within ``grace_s``; then ``SIGTERM``, then ``SIGKILL``."""
    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        if sig is not None and not kill_group(pgid, sig):
            break
        deadline = time.monotonic() + (grace_s if sig is not signal.SIGKILL else 0.2)
        while group_alive(pgid):
            if time.monotonic() > deadline:
                break
            time.sleep(0.02)
        else:
            break  # nothing left
    unregister(pgid)


def spawn(command, **kwargs) -> subprocess.Popen:
    """``subprocess.Popen`` in a new session (so a new process group led by the child)."""
    proc = subprocess.Popen(command, start_new_session=True, **kwargs)
    register(proc.pid)
    return proc


def wait(proc: subprocess.Popen, timeout: Optional[float]) -> Optional[int]:
    """The exit code of ``proc`` (from :func:`spawn`), or None when it was killed at the timeout;
    either way its whole group is gone when this returns. Signals to the tool while waiting
    are passed on to the group (see the module docstring)."""
    pgid = proc.pid
    try:
        with _forwarding(pgid):
            try:
                code: Optional[int] = proc.wait(timeout)
            except subprocess.TimeoutExpired:
                kill_group(pgid)
                proc.wait()
                code = None
    except BaseException:
        kill_group(pgid)  # the tool is interrupted or ending: nothing of the run outlives it
        proc.wait()
        end_group(pgid, 0)
        raise
    end_group(pgid, GRACE_S if code is not None else 0)
    return code


@contextlib.contextmanager
def _forwarding(pgid: int) -> Iterator[None]:
    """While waiting in the main thread: SIGINT/SIGTERM/SIGHUP to the tool go to the group too.
    A second SIGINT, and SIGTERM and SIGHUP, end the tool's wait (the group is then killed)."""
    interrupts = []

    def handler(signum, frame):
        kill_group(pgid, signum)
        if signum == signal.SIGINT:
            interrupts.append(signum)
            if len(interrupts) < 2:
                return  # the script handles its Ctrl-C; the tool waits for what it reports
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    with _handling((signal.SIGINT, signal.SIGTERM, signal.SIGHUP), handler):
        yield


@contextlib.contextmanager
def ending_on_signals() -> Iterator[None]:
    """While a forked run is waited for: SIGTERM and SIGHUP to the tool end it with
    ``SystemExit`` (as Ctrl-C ends it with ``KeyboardInterrupt``) instead of killing it on the
    spot, so the waiter's cleanup kills the run's group. Only where no handler is set."""
    def handler(signum, frame):
        raise SystemExit(128 + signum)

    with _handling((signal.SIGTERM, signal.SIGHUP), handler, only_default=True):
        yield


@contextlib.contextmanager
def _handling(signals, handler, only_default: bool = False) -> Iterator[None]:
    """``handler`` for ``signals`` meanwhile (main thread only; ``only_default``: where no other
    handler is set), the previous handlers after."""
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in signals:
            try:
                if not only_default or signal.getsignal(sig) == signal.SIG_DFL:
                    previous[sig] = signal.signal(sig, handler)
            except (ValueError, OSError):  # pragma: no cover - not the main thread after all
                pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def own_group() -> None:
    """In a forked child: lead a process group of its own (the server calls :func:`adopt` too,
    so the group exists whichever of the two runs first)."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)


def adopt(pid: int) -> None:
    """In the server, right after the fork: put the child in its own group."""
    with contextlib.suppress(OSError):  # it exec'd or exited already: it did it itself
        os.setpgid(pid, pid)


class Lines:
    """Lines from a fork server's pipe, with a deadline. Read from the file descriptor itself:
    a buffered reader could hold two answers (a quick run's pid and exit) while ``select``
    waits for more."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""

    def next(self, deadline: Optional[float]) -> Optional[str]:
        """The next line; None once ``deadline`` (``time.monotonic()``) passes."""
        import select

        while b"\n" not in self._buffer:
            if deadline is not None:
                ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    return None
            chunk = os.read(self.fd, 4096)
            if not chunk:
                raise RuntimeError("the server ended unexpectedly")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode().strip()


@atexit.register
def _kill_live_groups() -> None:
    """The tool is exiting: nothing it started to run user code outlives it."""
    with _lock:
        groups = list(_live)
        _live.clear()
    for pgid in groups:
        kill_group(pgid)
