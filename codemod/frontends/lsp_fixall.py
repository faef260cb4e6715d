"""The language server's fix-all, in a child process.

A fix-all parses the whole document with libcst, whose native parser holds the GIL for the
whole call (seconds on a 20,000-line file): in a thread it would still stall the event loop and
every other request. In a child process it cannot, and a cancelled one can be stopped (a thread
cannot be). One child serves the fix-alls one at a time, over pickles on its stdin and stdout
(its own prints go to stderr); it is started on the first fix-all and again after a kill.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from typing import Optional

import codemod
from codemod.config import Settings


class FixAllStopped(Exception):
    """The fix-all was cancelled (or its process died) before it finished."""


def fix_all_text(text: str, path: str, settings: Settings, project=None, module_name: str = "") -> Optional[str]:
    """The document with every fix ``settings`` allow applied, or None if nothing changes
    (``project``: the workspace's index the server analyses the document with, or None)."""
    from codemod.engine.pipeline import process_source

    result = process_source(text.encode("utf-8", "surrogatepass"), path, settings, fix=True,
                            project=project, module_name=module_name)
    return result.fixed if result.changed else None


class FixProcess:
    """A child process for fix-alls; :meth:`fix_all` blocks (call it from a worker thread)."""

    def __init__(self) -> None:
        self._child: Optional[subprocess.Popen] = None
        self._lock = threading.Lock()  # one job at a time
        self._state = threading.Lock()  # guards _running and _stopped
        self._running: Optional[object] = None
        self._stopped: set = set()

    def fix_all(self, job: object, text: str, path: str, settings: Settings,
                project: Optional[bytes] = None, module_name: str = "") -> Optional[str]:
        """Run a fix-all; ``job`` names it for :meth:`stop`. ``project``: the pickled index
        (``lsp_project.WorkspaceIndex.pickled``) and the document's module in it."""
        with self._lock:
            with self._state:
                self._running = job
            try:
                child = self._start()
                with self._state:
                    if job in self._stopped:
                        raise FixAllStopped()
                pickle.dump((text, path, settings, project, module_name), child.stdin)
                child.stdin.flush()
                ok, value = pickle.load(child.stdout)
            except (EOFError, OSError, pickle.UnpicklingError) as exc:
                raise FixAllStopped() from exc
            finally:
                with self._state:
                    self._running = None
                    self._stopped.discard(job)
        if not ok:
            raise RuntimeError(f"fix-all failed: {value}")
        return value

    def stop(self, job: object) -> None:
        """Stop ``job``: kill the child if it is running it, else never start it."""
        with self._state:
            self._stopped.add(job)
            if self._running is job and self._child is not None:
                self._child.kill()

    def close(self) -> None:
        child = self._child
        if child is not None:
            child.kill()

    def _start(self) -> subprocess.Popen:
        if self._child is None or self._child.poll() is not None:
            if self._child is not None:
                self._child.wait()
            self._child = subprocess.Popen(child_command(), cwd=TOOL_ROOT,
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        return self._child


# The folder that holds the ``codemod`` package (site-packages, or a source checkout).
TOOL_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(codemod.__file__)))


def child_command(module: str = __name__) -> list:
    """The command line of a server child that runs ``module.serve()`` (the fix-all's, the big
    documents' analysis). The editor starts the server in the user's project, so a child must
    not find the project's modules: ``-I`` leaves the current folder, PYTHONPATH and the user's
    site folder off ``sys.path`` (a ``pickle.py`` in the project would otherwise run on the
    first fix-all), and the tool's own folder is put first by the command itself. Start it
    with ``cwd=TOOL_ROOT``."""
    start = f"import sys; sys.path.insert(0, {TOOL_ROOT!r}); from {module} import serve; serve()"
    return [sys.executable, "-I", "-c", start]


def serve() -> None:
    """The child's loop: (text, path, settings, pickled index or None, module name) in, (ok,
    fixed text or error) out. The last index is kept (the same bytes come until it changes)."""
    channel = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever else is printed goes to stderr, not into the channel
    requests = sys.stdin.buffer
    known: tuple = (None, None)  # (pickled index, index)
    while True:
        try:
            text, path, settings, pickled, module = pickle.load(requests)
        except EOFError:
            return
        try:
            if pickled is not None and pickled != known[0]:
                known = (pickled, pickle.loads(pickled))  # the server's own index: trusted as it is
            project = known[1] if pickled is not None else None
            answer = (True, fix_all_text(text, path, settings, project, module))
        except Exception as exc:  # noqa: BLE001 - reported to the server, which logs it
            answer = (False, f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, channel)
        channel.flush()


if __name__ == "__main__":
    serve()
