"""Run a callable in a fresh interpreter, with a timeout, and bring back its result.

Public entry point (``verify``, ``locate``, ``repair`` and the script runner use it)::

    from codemod.runtime.isolate import run_isolated
    outcome = run_isolated(func, arg1, arg2, timeout=60, path_first="path/to/project")
    if outcome.ok:
        value = outcome.value
    else:
        print(outcome.status, outcome.error)  # "raised", "timeout" or "crashed"
    print(outcome.stdout, outcome.stderr)     # what the child printed, never mixed into ours

``func`` must be importable by name (a module-level function) and ``args`` picklable. The
child is forked from a server process (one per tool process, started on first use) that has
imported torch and the tool and run nothing else, so it starts with the interpreter state of a
fresh ``python`` (grad mode, default dtype, RNG, ``sys.modules`` without user code) at the cost
of a fork (~50 ms) instead of an interpreter start with torch (~1.5-2.5 s, paid once by the
server). The server never runs a torch op or initialises CUDA, so the child can use CUDA like
a fresh process. Off Linux each run is a plain ``python`` child (no fork server). In the
child: the working directory and environment are the caller's at call time, ``path_first`` is put first on ``sys.path``, file descriptors 1 and 2
go to files (returned as ``stdout``/``stderr``), and any ``BaseException`` (``SystemExit``,
``KeyboardInterrupt``) from ``func`` is caught and returned, never raised in the caller. The
value travels back through ``torch.save``/``torch.load`` (tensors, dataclasses of the tool).
Runs are served one at a time per tool process (concurrent callers wait their turn).
"""

from __future__ import annotations

import atexit
import dataclasses
import enum
import json
import os
import pathlib
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from typing import Any, Callable, Optional, Tuple

from codemod.runtime import procgroup

# Fork after importing torch only where that is known to be safe (macOS's runtime objects to
# it; Windows has no fork): elsewhere each run is a plain ``python`` child.
_FORK_SERVER = hasattr(os, "fork") and sys.platform.startswith("linux")
DEFAULT_TIMEOUT = 120.0  # seconds per isolated run; verify and repair take --timeout
_OUTPUT_LIMIT = 64 * 1024  # characters of captured stdout/stderr kept


class Status(str, enum.Enum):
    OK = "ok"
    RAISED = "raised"  # func raised (any BaseException, SystemExit included)
    TIMEOUT = "timeout"  # killed after ``timeout`` seconds
    CRASHED = "crashed"  # the process died without a result (a signal, os._exit, an unpicklable value)


@dataclasses.dataclass
class RaisedError:
    type: str  # "RuntimeError", "SystemExit"
    message: str
    traceback: str
    exit_code: Any = None  # SystemExit.code

    def __str__(self) -> str:
        return f"{self.type}: {self.message}" if self.message else self.type


@dataclasses.dataclass
class Isolated:
    status: Status
    value: Any = None
    error: Optional[RaisedError] = None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0  # wall time of the child, fork to exit
    detail: str = ""  # why a crash or timeout gave no result

    @property
    def ok(self) -> bool:
        return self.status is Status.OK


class _Server:
    """A process that has imported torch and the tool, and forks one child per request.

    Protocol on its stdin/stdout, one line each: the parent sends the path of a pickled
    request; the server forks, answers ``pid N``, reaps the child and answers ``exit CODE``.
    It never runs a torch op itself (a fork after OpenMP threads start is unsafe) and never
    initialises CUDA, and it ends when its stdin closes (the tool exited).
    """

    def __init__(self, preload: Tuple[str, ...]) -> None:
        code = ("import sys, json; sys.path[:] = json.loads(sys.argv[1]); "
                "from codemod.runtime.isolate import _serve; _serve(json.loads(sys.argv[2]))")
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, json.dumps(sys.path), json.dumps(list(preload))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, bufsize=1, close_fds=True,  # stdout is read through its descriptor
        )
        self.lock = threading.Lock()  # one run at a time per server
        assert self.process.stdout is not None
        self._lines = procgroup.Lines(self.process.stdout.fileno())  # read past the buffered reader

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """End the server: EOF on its stdin ends its loop."""
        for stream in (self.process.stdin, self.process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def run(self, request_path: str, timeout: Optional[float]) -> Tuple[Optional[int], bool]:
        """(exit code, timed out) of one child."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(request_path + "\n")
        self.process.stdin.flush()
        pid = int(self._lines.next(None).split()[1])
        procgroup.register(pid)  # the child leads its own process group (_serve)
        try:
            with procgroup.ending_on_signals():
                return self._wait(pid, timeout)
        except BaseException:  # interrupted (Ctrl-C, the tool ending): the run goes with it
            procgroup.kill_run(pid, signal.SIGKILL)
            raise
        finally:
            procgroup.unregister(pid)  # the server ended what was left of the group

    def _wait(self, pid: int, timeout: Optional[float]) -> Tuple[Optional[int], bool]:
        deadline = None if timeout is None else time.monotonic() + timeout
        answer = self._lines.next(deadline)
        if answer is None:  # past the deadline: kill the child's group, then collect its exit
            procgroup.kill_run(pid, signal.SIGKILL)
            answer = self._lines.next(None)
            return _exit_code(answer), True
        return _exit_code(answer), False

def _exit_code(answer: Optional[str]) -> Optional[int]:
    try:
        return int(answer.split()[1]) if answer else None
    except (IndexError, ValueError):
        return None


_server: Optional[_Server] = None
_server_lock = threading.Lock()


def _get_server(preload: Tuple[str, ...]) -> _Server:
    """The running server, or a new one that imports ``preload`` (the modules whose functions
    its children will run) once, so that no child pays for them."""
    global _server
    with _server_lock:
        if _server is None or not _server.alive():
            _server = _Server(preload)
            atexit.register(_server.close)
        return _server


def warm_up(func: Callable[..., Any]) -> None:
    """Start the server now for runs of ``func`` (its imports overlap the caller's own work)."""
    if _FORK_SERVER:
        _get_server((func.__module__,))


def _serve(preload: list) -> None:  # pragma: no cover - runs in the server process
    """The server's loop (see :class:`_Server`)."""
    import importlib

    import torch  # noqa: F401 - paid once here, not per run
    import torch.func  # noqa: F401

    for module in preload:
        importlib.import_module(module)

    torch.use_deterministic_algorithms(True, warn_only=True)  # its first call imports for ~2 s
    torch.use_deterministic_algorithms(False)
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                procgroup.own_group()  # killed whole at the timeout, with what it started
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                with open(path, "rb") as handle:
                    request = pickle.load(handle)
                _child(request)
            except BaseException:  # noqa: BLE001
                code = 1
            finally:
                os._exit(code)
        procgroup.adopt(pid)
        sys.stdout.write(f"pid {pid}\n")
        sys.stdout.flush()
        _, status = os.waitpid(pid, 0)
        procgroup.end_group(pid)  # what the run left behind (a forked copy, a `sleep`)
        sys.stdout.write(f"exit {os.waitstatus_to_exitcode(status)}\n")
        sys.stdout.flush()


def _run_in_child(request: "_Request", timeout: Optional[float], folder: pathlib.Path) -> Tuple[Optional[int], bool]:
    """Fork from the server where fork exists; a plain ``python`` child elsewhere."""
    path = folder / "request.pkl"
    with open(path, "wb") as handle:
        pickle.dump(request, handle)
    if _FORK_SERVER:
        server = _get_server((request.func.__module__,))
        with server.lock:
            return server.run(str(path), timeout)
    code = ("import sys, json, pickle; sys.path[:] = json.loads(sys.argv[1]); "  # pragma: no cover
            "from codemod.runtime.isolate import _child; _child(pickle.load(open(sys.argv[2], 'rb')))")
    child = procgroup.spawn([sys.executable, "-c", code, json.dumps(sys.path), str(path)])  # pragma: no cover
    exit_code = procgroup.wait(child, timeout)  # pragma: no cover
    return (child.returncode, True) if exit_code is None else (exit_code, False)  # pragma: no cover


def run_isolated(func: Callable[..., Any], *args: Any, timeout: Optional[float] = DEFAULT_TIMEOUT,
                 path_first: Optional[str] = None) -> Isolated:
    """Call ``func(*args)`` in a fresh interpreter; see the module docstring."""
    with tempfile.TemporaryDirectory(prefix="inplacefix-") as tmp:
        folder = pathlib.Path(tmp)
        result_path, out_path, err_path = folder / "result.pt", folder / "stdout", folder / "stderr"
        request = _Request(func, args, str(result_path), str(out_path), str(err_path),
                           path_first, os.getcwd(), dict(os.environ))
        start = time.perf_counter()
        exit_code, timed_out = _run_in_child(request, timeout, folder)
        seconds = time.perf_counter() - start
        stdout, stderr = _read(out_path), _read(err_path)
        if timed_out:
            return Isolated(Status.TIMEOUT, stdout=stdout, stderr=stderr, seconds=seconds,
                            detail=f"no result after {timeout:g} s (killed)")
        if not result_path.exists():
            return Isolated(Status.CRASHED, stdout=stdout, stderr=stderr, seconds=seconds,
                            detail=f"the process ended with exit code {exit_code} and no result")
        import torch

        payload = torch.load(result_path, weights_only=False)
        if payload["status"] == "unsaved":
            return Isolated(Status.CRASHED, stdout=stdout, stderr=stderr, seconds=seconds,
                            detail=payload["detail"])
        status = Status.OK if payload["status"] == "ok" else Status.RAISED
        return Isolated(status, payload.get("value"), payload.get("error"), stdout, stderr, seconds)


@dataclasses.dataclass
class _Request:
    func: Callable[..., Any]
    args: tuple
    result_path: str
    stdout_path: str
    stderr_path: str
    path_first: Optional[str]
    cwd: str
    environ: dict


def _child(request: _Request) -> None:
    """Runs in the child: redirect output, call, save the outcome."""
    import torch

    for fd, path in ((1, request.stdout_path), (2, request.stderr_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    os.environ.clear()
    os.environ.update(request.environ)
    try:
        os.chdir(request.cwd)
    except OSError:
        pass
    if request.path_first:
        sys.path.insert(0, request.path_first)
    payload: dict
    try:
        payload = {"status": "ok", "value": request.func(*request.args)}
    except BaseException as exc:  # noqa: BLE001 - the user's SystemExit is a result too
        payload = {"status": "raised", "error": describe(exc)}
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
    try:
        torch.save(payload, request.result_path)
    except Exception as exc:  # an unpicklable value
        try:
            os.unlink(request.result_path)
        except OSError:
            pass
        torch.save({"status": "unsaved", "detail": f"the result could not be saved: {type(exc).__name__}: {exc}"},
                   request.result_path)


def describe(exc: BaseException) -> RaisedError:
    text = str(exc)
    return RaisedError(type(exc).__name__, text, "".join(traceback.format_exception(exc))[-8000:],
                       exc.code if isinstance(exc, SystemExit) else None)


def _read(path: pathlib.Path) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return text if len(text) <= _OUTPUT_LIMIT else text[:_OUTPUT_LIMIT] + "\n[... output cut]"
