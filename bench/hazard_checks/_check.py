"""Shared by the drivers in bench/hazard_checks: decide a labelled hazard by running the library.

A driver runs the flagged line of a real library with grad on and inputs that require grad, calls
backward, and reports whether PyTorch raised one of the in-place errors. Each scenario prints one
JSON line (``CHECK {...}``) that ``bench/hazard_precision.py checks`` reads:

- ``finding``: the label id (path:line:code, path relative to site-packages);
- ``role``: ``path`` for the path the finding describes (what decides the label: real when every
  path scenario raised), ``control`` for the same backward with the flagged write left out or off
  (must not raise: it shows the write is what raised), or ``context`` for how the library is
  normally run (what the label's reason reports);
- ``scenario``: one line saying what ran; ``raised``: the kind of in-place error (KINDS), the name
  of an exception the scenario expects (the library refusing a set-up), or null; ``error``: its
  first line.

Any other exception is a broken driver (a changed library, a wrong set-up) and ends the script with
a traceback: a check that cannot run must not read as "did not raise".
"""

from __future__ import annotations

import inspect
import json
import linecache
import sys
from typing import Any, Callable, Dict, Optional, Tuple, Type

import torch

# The errors of this tool's rules, by the words PyTorch uses (torch/csrc/autograd).
KINDS = {
    "modified by an inplace operation": "saved-tensor-modified",
    "a leaf Variable that requires grad is being used in an in-place operation": "leaf",
    "is a view and is being modified inplace": "view",
    "is a view of a leaf Variable that requires grad": "view",
    "A view was created in no_grad mode and is being modified inplace": "view",
}


def kind_of(error: BaseException) -> Optional[str]:
    text = str(error)
    return next((kind for words, kind in KINDS.items() if words in text), None)


def attempt(finding: str, role: str, scenario: str, run: Callable[[], Any],
            expected: Tuple[Type[Exception], ...] = ()) -> Optional[str]:
    """Run ``run`` (forward through the flagged line, then backward) with grad on; print the outcome.
    An exception of an ``expected`` type (the library refusing a set-up) is reported by its name."""
    raised, error = None, ""
    with torch.enable_grad():
        try:
            run()
        except RuntimeError as exc:
            raised = kind_of(exc)
            if raised is None and not isinstance(exc, expected):
                raise
            raised = raised or type(exc).__name__
            error = str(exc).strip().splitlines()[0].split(" Hint:")[0]
        except expected as exc:
            raised, error = type(exc).__name__, str(exc).strip().splitlines()[0]
    print("CHECK " + json.dumps({"finding": finding, "role": role, "scenario": scenario, "raised": raised,
                                 "error": error}), flush=True)
    return raised


def expect_line(function: Callable[..., Any], line: int, snippet: str) -> None:
    """Fail loudly when the installed library is not the version labelled (the line moved)."""
    path = inspect.getsourcefile(_code(function))
    text = linecache.getline(path or "", line)
    if snippet not in text:
        raise SystemExit(f"{path}:{line} is {text.strip()!r}, not {snippet!r}: another library version?")


class _Stopped(Exception):
    def __init__(self, local_vars: Dict[str, Any]) -> None:
        super().__init__("stopped")
        self.local_vars = local_vars


def run_through(function: Callable[..., Any], line: int, *args: Any, **kwargs: Any) -> Dict[str, Any]:
    """Call ``function`` and stop it right after ``line`` of its body ran the first time: its locals
    then. This isolates one write from the later ones of the same function."""
    return stop_after(function, line, lambda: function(*args, **kwargs))


def stop_after(function: Callable[..., Any], line: int, call: Callable[[], Any]) -> Dict[str, Any]:
    """Run ``call`` (a model step, say) and stop it right after ``line`` of ``function``'s body ran
    the first time: that frame's locals then."""
    target = _code(function)
    seen = {"at": False}

    def local(frame, event, arg):  # type: ignore[no-untyped-def]
        if event in ("line", "return") and seen["at"]:
            raise _Stopped(dict(frame.f_locals))
        if event == "line":
            seen["at"] = frame.f_lineno == line
        return local

    def calls(frame, event, arg):  # type: ignore[no-untyped-def]
        return local if frame.f_code is target else None

    previous = sys.gettrace()  # a debugger's or coverage's, put back after
    sys.settrace(calls)
    try:
        call()
    except _Stopped as stop:
        return stop.local_vars
    finally:
        sys.settrace(previous)
    raise SystemExit(f"line {line} of {target.co_filename} never ran: the driver misses the path")


def _code(function: Callable[..., Any]):  # type: ignore[no-untyped-def]
    return inspect.unwrap(getattr(function, "__func__", function)).__code__
