"""Big documents are analysed off the request path, in a child process of their own.

An analysis holds the server's analysis lock (and, in a thread, the GIL) for as long as it
runs: seconds to minutes for a buffer of tens of thousands of lines, while a quick fix in any
other buffer waits for the lock. A document of ``BIG_LINES`` lines or more is analysed instead
in a child process kept for it, which keeps its last result (the next analysis is incremental,
and its quick fixes are built there, on that result): requests for the other documents are
answered meanwhile, and a newer version of the document (or its closing) kills the child when
it is still busy with an older one: stale work is stopped, not waited for.

What comes back are findings without their fix plans (which do not cross processes), with the
edits of the quick fixes asked for. The child is started from the tool's own interpreter in
isolated mode (``-I``: no current folder, no ``PYTHONPATH``, no user site on its path): nothing
of the project is imported.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import subprocess
import sys
import threading
from typing import Dict, List, Optional, Tuple

from codemod.config import Settings
from codemod.frontends.lsp_fixall import TOOL_ROOT, child_command

BIG_LINES = 5_000  # a document this long (in lines) is analysed in its own process



class Stopped(Exception):
    """The analysis was stopped (a newer version, the document closed) or its process died."""


def is_big(text: str) -> bool:
    return text.count("\n") + 1 >= BIG_LINES


class _Child:
    """One document's process: one request at a time."""

    def __init__(self) -> None:
        self.proc: Optional[subprocess.Popen] = None
        self.lock = threading.Lock()  # one request at a time
        self.state = threading.Lock()  # guards busy_with and closed
        self.busy_with: Optional[object] = None  # the document version of the request running
        self.closed = False

    def request(self, version: object, message: tuple):
        with self.lock:
            with self.state:
                if self.closed:
                    raise Stopped()
                if self.proc is None or self.proc.poll() is not None:
                    self.proc = subprocess.Popen(child_command(__name__), cwd=TOOL_ROOT,
                                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
                proc = self.proc
                self.busy_with = version
            try:
                pickle.dump(message, proc.stdin)
                proc.stdin.flush()
                ok, value = pickle.load(proc.stdout)
            except (EOFError, OSError, pickle.UnpicklingError) as exc:
                raise Stopped() from exc
            finally:
                with self.state:
                    self.busy_with = None
        if not ok:
            raise RuntimeError(f"analysis failed: {value}")
        return value

    def stop_unless(self, version: object) -> None:
        """Kill the process if it is busy with another version than ``version``."""
        with self.state:
            if self.proc is not None and self.busy_with is not None and self.busy_with != version:
                self.proc.kill()

    def close(self) -> None:
        with self.state:
            self.closed = True
            if self.proc is not None:
                self.proc.kill()


class BigDocuments:
    """The children of the big documents, by URI. ``analyse`` and ``quick_fixes`` block: call
    them from worker threads; ``newer``/``close`` are called from the event loop."""

    def __init__(self) -> None:
        self._children: Dict[str, _Child] = {}
        self._lock = threading.Lock()

    def _child(self, uri: str) -> _Child:
        with self._lock:
            child = self._children.get(uri)
            if child is None or child.closed:
                child = self._children[uri] = _Child()
            return child

    def analyse(self, uri: str, version: object, key: tuple, text: str, path: str, settings: Settings,
                project: Optional[bytes], module: str):
        """(findings without fix plans, error) of the text."""
        return self._child(uri).request(version, ("analyse", key, text, path, settings, project, module, None))

    def quick_fixes(self, uri: str, version: object, key: tuple, text: str, path: str, settings: Settings,
                    project: Optional[bytes], module: str, lines: Tuple[int, int]):
        """(findings on ``lines`` (first, stop) with their edits, error)."""
        return self._child(uri).request(version, ("fixes", key, text, path, settings, project, module, lines))

    def newer(self, uri: str, version: object) -> None:
        """A newer version of the document arrived: work for an older one is stale."""
        with self._lock:
            child = self._children.get(uri)
        if child is not None:
            child.stop_unless(version)

    def close(self, uri: str) -> None:
        with self._lock:
            child = self._children.pop(uri, None)
        if child is not None:
            child.close()

    def close_all(self) -> None:
        with self._lock:
            children, self._children = list(self._children.values()), {}
        for child in children:
            child.close()

    def pids(self) -> List[int]:
        with self._lock:
            return [c.proc.pid for c in self._children.values() if c.proc is not None and c.proc.poll() is None]


def _portable(finding):
    return dataclasses.replace(finding, fix=None, plan=None)


def serve() -> None:  # pragma: no cover - runs in the child (its tests drive it through the server)
    """The child's loop: one document's analyses, the last result kept for the next request."""
    from codemod.engine.pipeline import add_edits, process_source

    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else is printed goes to stderr, not into the channel
    requests = sys.stdin.buffer
    known_index: tuple = (None, None)
    last: tuple = (None, None)  # (key, FileResult)
    while True:
        try:
            kind, key, text, path, settings, pickled, module, lines = pickle.load(requests)
        except EOFError:
            return
        try:
            if pickled is not None and pickled != known_index[0]:
                known_index = (pickled, pickle.loads(pickled))  # the server's own index
            project = known_index[1] if pickled is not None else None
            data = text.encode("utf-8", "surrogatepass")
            if last[0] != key:
                result = process_source(data, path, settings, incremental=True, previous=last[1],
                                        project=project, module_name=module)
                last = (key, result)
            result = last[1]
            if kind == "fixes":
                first, stop = lines
                wanted = [f for f in result.findings if not (f.span.end_line < first or f.span.line >= stop)]
                missing = [f for f in wanted if f.edit is None and f.plan is not None and f.cell is None]
                if missing:
                    add_edits(result, data, missing)
                findings = [_portable(f) for f in wanted]
            else:
                findings = [_portable(f) for f in result.findings]
            answer = (True, (findings, result.error))
        except Exception as exc:  # noqa: BLE001 - reported to the server, which logs it
            answer = (False, f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, channel)
        channel.flush()
