"""Worker processes of ``-j`` that stop when the main process dies, or when the run is
interrupted.

A worker killed with its parent (``kill -9`` of the main process, a CI job cancelled) must not
go on rewriting files nobody will report, nor hang forever on a pipe nobody reads. Two guards:

- Linux: ``PR_SET_PDEATHSIG`` has the kernel send SIGTERM the moment the parent goes;
- everywhere: the worker checks its parent before each file.

On SIGTERM a worker busy with a file raises :class:`ParentGone` (a write in progress removes
its temporary file on the way out), an idle one exits at once.

Interruption (SIGINT or SIGTERM to the main process, or a Ctrl-C, which reaches every process
of the terminal's group): :class:`Interruption` turns the signal into a stop request that every
process of the run shares (``engine.fileio``: a flag in shared memory, and a Lock held while a
file is being changed). From the moment the main process's handler returns, no process writes a file: each
one stops before its next file, and a write that had not been committed yet is refused
(``interrupted: not written``). The main process then reports the interruption (exit 130 for
SIGINT, 143 for SIGTERM). A second signal stops the main process at once (exit 130 or 143,
without the summary); the workers still stop before their next file.

One signal is all ``timeout`` sends, so a file whose analysis does not end must not hold the run:
:data:`STOP_GRACE_S` after the stop request, every process still busy with a file that it has not
written abandons it (:class:`Overdue`; analysis writes nothing, and a write is never cut), and the
run reports the files done. A process that still runs :data:`STOP_HARD_S` later (work deaf to
Python's signal handlers) is ended at once, its workers with it.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from typing import Optional

from codemod.engine import fileio

_PR_SET_PDEATHSIG = 1

_state = {"main_pid": None, "parent": None, "busy": False, "signal": None}

STOP_GRACE_S = 2.0  # after a stop request, a file still being analysed this long is abandoned
STOP_HARD_S = 5.0  # and a run still going this long after that is ended at once
_ABANDON = getattr(signal, "SIGUSR1", None)  # the main process's word to abandon the file at hand


class Overdue(BaseException):
    """The run was asked to stop and the file at hand is still being analysed a grace later:
    abandon it (a ``BaseException``, so that no ``except Exception`` on the way swallows it)."""


def _on_abandon(signum, frame) -> None:
    if _state["busy"] and not fileio.writing() and not fileio.wrote_since():
        raise Overdue()


class ParentGone(BaseException):
    """The main process is gone: stop, whatever is in progress (not an ``Exception``, so that
    no ``except Exception`` on the way swallows it)."""


def _on_sigterm(signum, frame) -> None:
    if _state["busy"]:
        raise ParentGone()
    os._exit(1)


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # no prctl (an unusual libc): the parent check remains
        pass


def _on_sigint(signum, frame) -> None:
    fileio.request_stop(signum)


def init_worker(main_pid: int, stop: Optional[tuple] = None) -> None:
    """Pool initializer: run in each worker before any task. ``stop``: the run's shared
    (flag, Lock) (:meth:`Interruption.shared`)."""
    _state["main_pid"], _state["parent"] = main_pid, os.getppid()
    fileio.clear_stop()
    if stop is not None:
        fileio.share_stop(*stop)
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _on_sigterm)
    signal.signal(signal.SIGINT, _on_sigint)  # a Ctrl-C: stop before the next write, quietly
    if _ABANDON is not None:
        signal.signal(_ABANDON, _on_abandon)
    if hasattr(signal, "pthread_sigmask"):  # started while the main process held them back
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    _die_with_parent()
    if not parent_alive():  # the parent died before the kernel was told to tell us
        os._exit(1)


def parent_alive() -> bool:
    """Is the process that started the pool still there? (The direct parent is the main
    process, or with the ``forkserver`` method a server that exits with it.)"""
    if _state["parent"] is None:
        return True
    if os.getppid() != _state["parent"]:
        return False  # re-parented: the parent is gone
    if os.name == "posix":
        try:
            os.kill(_state["main_pid"], 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
    return True


def work_on(work, files: list) -> list:
    """Run ``work`` on each file; stop, without touching another file, once the parent is gone
    or the run is interrupted (then the results are those of the files done, fewer)."""
    results = []
    try:
        for f in files:
            if not parent_alive():
                raise ParentGone()
            if fileio.stop_requested():
                break
            try:
                results.append(one_file(work, f))
            except Overdue:
                break
    except ParentGone:
        os._exit(1)
    return results


def pool_context():
    """How ``-j`` workers start. ``fork`` copies this process, whose ``sys.path`` no longer holds
    the project folder: a worker imports nothing of the project. ``spawn`` and ``forkserver``
    start a fresh interpreter in the current folder with that folder first on its path, so a
    ``multiprocessing`` or ``pickle`` module in the project would run there; they are used only
    where there is no ``fork`` (Windows)."""
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else methods[0])


def each_until_stopped(work, files):
    """``map(work, files)`` that stops before the next file once the run is interrupted."""
    for f in files:
        if fileio.stop_requested():
            return
        try:
            result = one_file(work, f)
        except Overdue:  # abandoned a grace after the stop request
            return
        yield result


def one_file(work, f):
    """``work(f)`` with the cyclic garbage collector held back, and a collection after it: a
    file's trees and analyses live until its end, and the collections in between scanned them
    again and again (a sixth of a cold ``check``), to free almost nothing."""
    enabled = gc.isenabled()
    gc.disable()
    fileio.wrote_since(mark=True)
    _state["busy"] = True
    try:
        return work(f)
    finally:
        _state["busy"] = False
        if enabled:
            gc.enable()
            gc.collect(1)


class Interruption:
    """In the main process, around a run: SIGINT and SIGTERM request a stop (shared with the
    workers through :meth:`shared`) instead of raising in the middle of the work. ``signal``:
    the signal that interrupted the run, or None. Handlers are installed from the main thread
    only (elsewhere this does nothing), and put back on exit."""

    SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))

    def __init__(self) -> None:
        self.signal: Optional[int] = None
        self._old: dict = {}
        self._shared: Optional[tuple] = None
        self._pid = os.getpid()
        self._watchdog: Optional[threading.Event] = None  # set when the run is over
        self._deciding = threading.Lock()  # the run does not end while the watchdog acts

    def __enter__(self) -> "Interruption":
        fileio.clear_stop()
        _state["signal"] = None
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS + ((_ABANDON,) if _ABANDON is not None else ()):
                self._old[signum] = signal.signal(signum, _on_abandon if signum == _ABANDON else self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if os.getpid() != self._pid:  # a forked worker before its initializer: the main one decides
            return
        _state["signal"] = signum
        if fileio.stop_requested() and not fileio.writing():
            # Asked twice: stop now, without finishing the file at hand (its write, if it had
            # started, would have held this signal back; none starts after the first).
            raise KeyboardInterrupt
        fileio.request_stop(signum)
        if self._watchdog is None and _ABANDON is not None:
            self._watchdog = threading.Event()
            threading.Thread(target=self._watch, args=(self._watchdog, signum), daemon=True).start()

    def _watch(self, over: threading.Event, signum: int) -> None:
        """A grace after the stop request, have every process abandon the file at hand; a grace
        after that, end the run at once (its workers first)."""
        import multiprocessing

        if over.wait(STOP_GRACE_S):
            return
        with self._deciding:  # once the run is over, SIGUSR1 has its default action again
            if over.is_set():
                return
            for pid in [p.pid for p in multiprocessing.active_children()] + [self._pid]:
                with contextlib.suppress(OSError):
                    os.kill(pid, _ABANDON)
        if over.wait(STOP_HARD_S):
            return
        self._deciding.acquire()  # never released: the run ends here, or has ended
        if over.is_set():
            return
        children = multiprocessing.active_children()
        for child in children:
            child.terminate()  # a worker's write in progress holds SIGTERM back until it is done
        for child in children:
            child.join(1.0)
            if child.is_alive():  # deaf to SIGTERM too; no write starts after the stop request
                child.kill()
        with contextlib.suppress(OSError):
            os.write(2, f"error: {interruption_message(signum, None, None)}\n".encode())
        os._exit(128 + signum)

    @property
    def requested(self) -> bool:
        return fileio.stop_requested()

    def shared(self) -> tuple:
        """The (flag, Lock) every worker of the run is given (``init_worker``)."""
        if self._shared is None:
            import multiprocessing

            self._shared = (multiprocessing.RawValue("b", 0), multiprocessing.Lock())
            if fileio.stop_requested():  # asked before the pool: the workers start stopped
                self._shared[0].value = 1
            fileio.share_stop(*self._shared)
        return self._shared

    def __exit__(self, *exc) -> None:
        if self._watchdog is not None:
            with self._deciding:
                self._watchdog.set()
        for signum, old in self._old.items():
            signal.signal(signum, old if old is not None else signal.SIG_DFL)
        # A worker's own Ctrl-C or signal sets only the shared flag: a SIGINT too.
        self.signal = fileio.stop_signal() or (signal.SIGINT if fileio.stop_requested() else None)
        fileio.clear_stop()


def last_signal() -> Optional[int]:
    """The signal an :class:`Interruption` last handled in this process (None: none)."""
    return _state["signal"]


def interruption_message(signum: int, done: Optional[int], total: Optional[int]) -> str:
    """What an interrupted run says last; ``done`` None: the run was ended at once, after the
    file at hand ignored the stop for :data:`STOP_GRACE_S` + :data:`STOP_HARD_S` seconds."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    if done is None:
        return (f"interrupted ({name}): the work at hand did not stop within "
                f"{STOP_GRACE_S + STOP_HARD_S:g} s and was ended at once; no file was written after the signal")
    return (f"interrupted ({name}): stopped before writing another file; {done} of {total} files "
            f"processed, the others left as they are")
