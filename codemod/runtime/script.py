"""Run a user's script (or ``-m module``) as ``__main__`` in a fresh interpreter, under the locator.

``inplacefix run train.py --epochs 3`` must behave as ``python train.py --epochs 3`` does:
``sys.argv``, ``sys.path[0]``, ``__file__``, the working folder and the exit code are the
script's, and its output reaches the terminal untouched. So the script never runs in the tool's
process: :mod:`codemod.runtime.script_child` runs it in a subprocess started with a request
file, and sends back JSON (what happened, both lines of the first conflict, the suggested fix)
and, when asked to record, the tensors of each backward pass (``torch.save``).

The script leads a process group of its own (``procgroup``): at the timeout, when the tool is
interrupted or ends, the whole group is killed, what the script started included, and what it
left running when it ended is ended too. Ctrl-C (SIGINT) to the tool is passed on to the script,
which sees it as it would without the tool.

This module does not import torch: a clean ``run`` pays for torch once, in the script's process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import enum
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

import codemod
from codemod.runtime import procgroup

# What ``python -c`` runs: import the child from this copy of the tool, then hand sys.path back.
_BOOT = ("import sys; sys.path.insert(0, {root!r}); from codemod.runtime import script_child; "
         "del sys.path[0]; script_child.main(sys.argv[1])")
_ROOT = str(pathlib.Path(codemod.__file__).resolve().parent.parent)


_SERVE = ("import sys; sys.path.insert(0, {root!r}); from codemod.runtime import script_child; "
          "del sys.path[0]; script_child.serve()")


class Interpreters:
    """Fresh interpreters for many runs, at the cost of one torch import: a process that has
    imported torch forks a copy per run (POSIX only). ``repair`` uses it for its runs; each
    copy is its own process, so a run still cannot see another's state."""

    def __init__(self, env: Optional[Dict[str, str]] = None) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", _SERVE.format(root=_ROOT)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        self._lines = procgroup.Lines(self.proc.stdout.fileno())

    def run(self, request_file: str, timeout: Optional[float]) -> Optional[int]:
        """The run's exit code, or None when it was killed at the timeout."""
        import signal

        self.proc.stdin.write(request_file + "\n")
        self.proc.stdin.flush()
        pid = int(self._lines.next(None))
        procgroup.register(pid)  # the copy leads its own process group (script_child.serve)
        try:
            with procgroup.ending_on_signals():
                answer = self._lines.next(None if timeout is None else time.monotonic() + timeout)
            if answer is None:
                procgroup.kill_run(pid, signal.SIGKILL)
                self._lines.next(None)
                return None
            return int(answer)
        except BaseException:  # interrupted: the run does not outlive the wait
            procgroup.kill_run(pid, signal.SIGKILL)
            raise
        finally:
            procgroup.unregister(pid)  # the server ended what was left of the group

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)

    def __enter__(self) -> "Interpreters":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def interpreters(seed: bool = False) -> Optional[Interpreters]:
    """A fork server where it is safe, else None (each run then starts its own interpreter):
    the platform must fork, and torch must be a CPU build (a process that touched the CUDA
    driver cannot be forked into one that uses CUDA)."""
    if not hasattr(os, "fork"):
        return None
    import torch  # the caller (repair) compares tensors: torch is loaded already

    if torch.version.cuda or getattr(torch.version, "hip", None):
        return None
    return Interpreters(_child_env(seed))


def _child_env(seed: bool) -> Dict[str, str]:
    """The script's environment: the user's, with ``torch.compile`` off (compiled code hides its
    ops from the locator and ignores the oracle's saved-tensor hooks) and, for the runs a repair
    compares, a fixed hash seed."""
    env = dict(os.environ)
    env.setdefault("TORCHDYNAMO_DISABLE", "1")
    if seed:
        env["PYTHONHASHSEED"] = "0"
    return env


class ScriptError(Exception):
    """The script cannot be run at all (not found, no module): the tool's failure, exit 2."""


@dataclasses.dataclass(frozen=True)
class Script:
    """What to run: a file or a module, its arguments, and the folder to run it in."""

    path: Optional[str] = None
    module: Optional[str] = None
    args: Tuple[str, ...] = ()
    cwd: str = "."

    @property
    def label(self) -> str:
        return f"-m {self.module}" if self.module else str(self.path)

    @property
    def project_root(self) -> pathlib.Path:
        """The folder whose files a repair may change: the script's, or the ``-m`` root."""
        if self.module:
            return pathlib.Path(self.cwd).resolve()
        return (pathlib.Path(self.cwd) / self.path).resolve().parent

    def check(self) -> None:
        if self.module:
            if not self.module.replace(".", "").replace("_", "").isalnum():
                raise ScriptError(f"not a module name: {self.module!r}")
            return
        if self.path is None:
            raise ScriptError("no script given (a path, or -m module)")
        if not (pathlib.Path(self.cwd) / self.path).is_file():
            raise ScriptError(f"can't open file {self.path!r}: no such file")

    def in_project(self, file: str) -> bool:
        """A file of the user's project (not an installed package, not a notebook cell)."""
        if file.startswith("<"):
            return False
        path = pathlib.Path(file).resolve()
        return (path.is_relative_to(self.project_root) and "site-packages" not in path.parts
                and not any(part in (".venv", "venv") for part in path.parts))


class Outcome(str, enum.Enum):
    clean = "clean"  # ran to its end (exit code 0)
    stopped = "stopped"  # --max-backward passes ran, no conflict
    conflict = "conflict"  # the first in-place/leaf/view error, located
    exit = "exit"  # the script exited with a non-zero code of its own
    exception = "exception"  # the script raised (not a located conflict)
    timeout = "timeout"
    crashed = "crashed"  # the interpreter ended without a result (os._exit, a signal)


@dataclasses.dataclass
class ScriptRun:
    """One run of the script in its own interpreter."""

    script: Script
    outcome: Outcome
    exit_code: int = 0
    error: Optional[str] = None  # "RuntimeError: ..." when the script raised
    traceback: Optional[str] = None
    inplace_family: bool = False  # it died of the in-place, leaf or view error
    backward_passes: int = 0
    conflicts: List[dict] = dataclasses.field(default_factory=list)
    suggestions: List[dict] = dataclasses.field(default_factory=list)
    stdout: Optional[str] = None  # only when captured
    stderr: Optional[str] = None
    record: Optional[str] = None  # the torch.save file of a recording run
    seconds: float = 0.0
    unfit: Optional[str] = None  # view_copies: why writing into copies does not fit this run
    thread: Optional[str] = None  # the error ended this thread (the main thread ended on its own)

    @property
    def finished(self) -> bool:
        """Ran its course, or the asked-for number of backward passes."""
        return self.outcome in (Outcome.clean, Outcome.stopped)

    def to_json(self) -> dict:
        data = {k: v for k, v in dataclasses.asdict(self).items() if k not in ("script", "record")}
        data["outcome"] = self.outcome.value
        data["script"] = self.script.label
        data["args"] = list(self.script.args)
        data["conflicts"] = [{k: v for k, v in c.items() if k != "describe"} for c in self.conflicts]
        data["suggestions"] = [{k: v for k, v in s.items() if k not in ("fixed", "basis")} for s in self.suggestions]
        return data


def run_script(script: Script, *, mode: str = "locate", max_backward: Optional[int] = None,
               sources: Optional[Dict[str, str]] = None, seed: bool = False, snapshot: bool = False,
               no_grad_sites: Sequence[Tuple[str, int]] = (), suggest: bool = True,
               view_copies: bool = False, views_allowed: bool = False,
               capture: bool = False, timeout: Optional[float] = None,
               workdir: Optional[str] = None, record: bool = False,
               server: Optional[Interpreters] = None, skip: Optional[Dict[str, int]] = None,
               meaning: str = "as-computed", recompute: bool = False, rounding: str = "") -> ScriptRun:
    """Run ``script`` once in a subprocess (see the module docstring); never raises for the
    script's own failures, only :class:`ScriptError` when it cannot start. ``mode="record"``
    records without the locator; ``record=True`` records under it (its values are bit-identical).
    ``meaning``: the step-order fixes suggested (``as-computed`` or ``recompute``);
    ``recompute``: the record is the recompute meaning's reference (``runtime.recompute``);
    ``rounding``: ``upward`` or ``downward``, the rounding probe (``runtime.rounding``)."""
    script.check()
    own_dir = None
    if workdir is None:
        own_dir = tempfile.TemporaryDirectory(prefix="inplacefix-run-")
        workdir = own_dir.name
    try:
        folder = pathlib.Path(tempfile.mkdtemp(dir=workdir))
        request = {
            "mode": mode, "path": script.path, "module": script.module, "args": list(script.args),
            "max_backward": max_backward, "sources": {str(pathlib.Path(p).resolve()): s for p, s in (sources or {}).items()},
            "seed": seed, "snapshot": snapshot, "no_grad_sites": [list(s) for s in no_grad_sites],
            "view_copies": view_copies, "views_allowed": views_allowed, "meaning": meaning, "recompute": recompute,
            "rounding": rounding,
            "suggest": suggest, "skip": dict(skip or {}), "record_values": record, "cwd": script.cwd,
            "stdout": str(folder / "stdout"), "stderr": str(folder / "stderr"), "result": str(folder / "result.json"), "record": str(folder / "record.pt"),
        }
        (folder / "request.json").write_text(json.dumps(request), encoding="utf-8")
        env = _child_env(seed)
        started = time.perf_counter()
        if server is not None and capture:
            returncode = server.run(str(folder / "request.json"), timeout)
            out, err = (_read(folder / name) for name in ("stdout", "stderr"))
            if returncode is None:
                return ScriptRun(script, Outcome.timeout, error=f"no result after {timeout:g} s (killed)",
                                 stdout=out, stderr=err, seconds=time.perf_counter() - started)
        else:
            # Its own process group, killed whole (procgroup); captured output goes to files, not
            # pipes: a process the script left behind cannot hold the tool's read open.
            command = [sys.executable, "-c", _BOOT.format(root=_ROOT), str(folder / "request.json")]
            with contextlib.ExitStack() as files:
                streams = [files.enter_context(open(folder / name, "wb")) if capture else None
                           for name in ("captured-stdout", "captured-stderr")]
                proc = procgroup.spawn(command, cwd=script.cwd, env=env, stdout=streams[0], stderr=streams[1],
                                       stdin=subprocess.DEVNULL if capture else None)
                returncode = procgroup.wait(proc, timeout)
            out, err = (_read(folder / name) if capture else None for name in ("captured-stdout", "captured-stderr"))
            if returncode is None:
                return ScriptRun(script, Outcome.timeout, error=f"no result after {timeout:g} s (killed)",
                                 stdout=out, stderr=err, seconds=time.perf_counter() - started)
        seconds = time.perf_counter() - started
        result_file = folder / "result.json"
        if not result_file.exists():
            return ScriptRun(script, Outcome.crashed, exit_code=returncode,
                             error=f"the interpreter ended (exit code {returncode}) before the run could report",
                             stdout=out, stderr=err, seconds=seconds)
        data = json.loads(result_file.read_text(encoding="utf-8"))
        record = None
        if (folder / "record.pt").exists() and own_dir is None:
            record = str(folder / "record.pt")
        return ScriptRun(script, Outcome(data["outcome"]), data["exit_code"], data.get("error"),
                         data.get("traceback"), bool(data.get("inplace_family")), data.get("backward_passes", 0),
                         data.get("conflicts", []), data.get("suggestions", []), out, err, record, seconds,
                         unfit=data.get("unfit"), thread=data.get("thread"))
    finally:
        if own_dir is not None:
            own_dir.cleanup()


def _read(path: pathlib.Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def exit_code(run: ScriptRun) -> int:
    """``run``'s exit code: 0 the script ran (or its first N passes) with no conflict; 1 a
    conflict (even one the script caught), or the script failed on its own (said as such);
    the tool's failures are 2."""
    return 0 if run.finished and not run.conflicts else 1


def render(run: ScriptRun) -> str:
    """What ``inplacefix run`` prints after the script's own output."""
    name = run.script.label
    if run.conflicts and run.finished:
        return "\n".join([f"inplacefix: {name} caught an in-place error and went on; where it came from:", ""]
                         + _conflicts(run))
    if run.outcome is Outcome.clean:
        return f"inplacefix: {name} ran with no in-place conflict ({_passes(run.backward_passes)})."
    if run.outcome is Outcome.stopped:
        return (f"inplacefix: stopped {name} after {_passes(run.backward_passes)} "
                f"(--max-backward): no in-place conflict so far.")
    if run.outcome is Outcome.conflict or (run.conflicts and run.inplace_family):
        where = f"its thread {run.thread!r} died of" if run.thread else "stopped at"
        lines = [f"inplacefix: {name}: {where} its first in-place conflict "
                 f"(after {_passes(run.backward_passes)}):" if run.thread else
                 f"inplacefix: {name} {where} its first in-place conflict "
                 f"(after {_passes(run.backward_passes)}):", ""]
        if run.error:
            lines += [f"  {run.error}", ""]
        return "\n".join(lines + _conflicts(run))
    if run.inplace_family:
        who = f"{name}'s thread {run.thread!r}" if run.thread else name
        return (f"inplacefix: {who} died of the in-place error, but the locator did not see the "
                f"change (native code, another thread, or code that installs its own saved-tensor "
                f"hooks):\n  {run.error}")
    if run.outcome is Outcome.exit:
        return f"inplacefix: {name} exited with code {run.exit_code} (its own exit; no in-place conflict seen)."
    if run.outcome is Outcome.exception:
        return f"inplacefix: {name} failed on its own (not an in-place conflict): {run.error}"
    return f"inplacefix: {name}: {run.error}"


def _conflicts(run: ScriptRun) -> List[str]:
    """Both lines of each conflict, then the suggested fix as a diff."""
    lines = [c["describe"] for c in run.conflicts]
    for s in run.suggestions:
        lines.append("")
        lines += [f"fix: {a}" for a in s["actions"]]
        if s["diff"]:
            lines.append(s["diff"].rstrip("\n"))
    return lines


def _passes(count: int) -> str:
    return f"{count} backward pass{'' if count == 1 else 'es'}"
