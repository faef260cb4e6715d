"""Worker processes of ``-j`` that stop when the main process dies.

A worker killed with its parent (``kill -9`` of the main process, a CI job cancelled) must not
go on rewriting files nobody will report, nor hang forever on a pipe nobody reads. Two guards:

- Linux: ``PR_SET_PDEATHSIG`` has the kernel send SIGTERM the moment the parent goes;
- everywhere: the worker checks its parent before each file.

On SIGTERM a worker busy with a file raises :class:`ParentGone` (a write in progress removes
its temporary file on the way out), an idle one exits at once.
"""

from __future__ import annotations

import os
import signal
import sys

_PR_SET_PDEATHSIG = 1

_state = {"main_pid": None, "parent": None, "busy": False}


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


def init_worker(main_pid: int) -> None:
    """Pool initializer: run in each worker before any task."""
    _state["main_pid"], _state["parent"] = main_pid, os.getppid()
    if hasattr(signal, "SIGTERM"):
        signal.signal(signal.SIGTERM, _on_sigterm)
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
    """Run ``work`` on each file; stop, without touching another file, once the parent is gone."""
    results = []
    try:
        for f in files:
            if not parent_alive():
                raise ParentGone()
            _state["busy"] = True
            try:
                results.append(work(f))
            finally:
                _state["busy"] = False
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
