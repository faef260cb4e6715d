"""The language server's project-wide index of its workspace (``engine.project``, as ``check``).

A buffer analysed alone does not know its functions' callers in other files (a helper only
called under ``no_grad``), nor the summaries of what it imports: ``check`` on the workspace
does. The server builds the same index in a background thread after ``initialized``: the
workspace folders' ``.py`` files found by the engine's discovery (the config's excludes
honoured), the CLI's cache folder (a ``check`` run before warms it), library summaries per
``library-summaries``/``library-paths``. A refresh (a file saved or changed on disk) re-reads
only the files whose size or modification time changed. Until an index is ready, and for files
outside it, buffers are analysed alone, as before. Nothing here may break diagnostics: a
failure is logged and the server goes on without an index.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import pathlib
import pickle
import threading
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from codemod.analysis.project import ModuleFacts, ProjectIndex, module_name
from codemod.config import ConfigError, Settings, load_settings
from codemod.engine.cache import cache_folder
from codemod.engine.discover import Walk, discover
from codemod.engine.libraries import for_settings
from codemod.engine.project import build_index
from codemod.rules.registry import table

MAX_FILES = 5000  # a larger workspace gets no index (logged): building it would take minutes

_log = logging.getLogger(__name__)
Signature = Optional[Tuple[int, int, int]]  # (size, mtime_ns, inode) of a file, None when it cannot be stat'ed


@dataclasses.dataclass(frozen=True)
class IndexState:
    """One built index: the modules of its files (resolved path -> module name), and a number
    that changes whenever the index does (analyses cached for another one are stale)."""

    index: Optional[ProjectIndex] = None
    modules: Dict[str, str] = dataclasses.field(default_factory=dict)
    generation: int = 0


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What a build did, in words for the editor's log; ``changed``: diagnostics may differ."""

    message: str
    changed: bool


class WorkspaceIndex:
    """The index of the workspace folders, rebuilt on request; read from any thread."""

    def __init__(self, lock: threading.RLock) -> None:
        self._lock = lock  # the server's analysis lock: ast.parse is not thread-safe in 3.11
        self._known: Dict[str, Tuple[Signature, Optional[ModuleFacts]]] = {}
        self._known_for: Tuple[str, ...] = ()  # the file list the known facts were made with
        self.state = IndexState()
        self._pickled: Optional[Tuple[int, bytes]] = None

    def lookup(self, path: str, state: Optional[IndexState] = None) -> Tuple[Optional[ProjectIndex], str]:
        """The index and module name to analyse the file at ``path`` with; (None, "") for a
        file outside the index (or no index). ``state``: the one read before (default: now)."""
        state = state if state is not None else self.state
        if state.index is None or not path.endswith(".py"):
            return None, ""
        try:
            module = state.modules.get(str(pathlib.Path(path).resolve()))
        except (OSError, RuntimeError, ValueError):
            return None, ""
        return (state.index, module) if module is not None else (None, "")

    def pickled(self, lock: threading.RLock) -> Optional[bytes]:
        """The index as bytes for the fix-all's child process (made once per index, under
        ``lock``: analyses fill its summaries lazily); None without one."""
        state = self.state
        if state.index is None:
            return None
        made = self._pickled
        if made is None or made[0] != state.generation:
            with lock:
                made = self._pickled = (state.generation, pickle.dumps(state.index))
        return made[1]

    def clear(self) -> Outcome:
        changed = self.state.index is not None
        self.state = IndexState(None, {}, self.state.generation + (1 if changed else 0))
        self._known, self._known_for = {}, ()
        return Outcome("inplacefix: project index off", changed)

    def build(self, folders: Sequence[pathlib.Path], max_files: int = MAX_FILES) -> Outcome:
        """(Re)build the index of ``folders``; never raises (a failure: no index, logged)."""
        try:
            return self._build(folders, max_files)
        except Exception as exc:  # noqa: BLE001 - diagnostics go on without an index
            _log.exception("project index failed")
            outcome = self.clear()
            return Outcome(f"inplacefix: project index failed ({type(exc).__name__}: {exc}); "
                           "files are analysed alone", outcome.changed)

    def _build(self, folders: Sequence[pathlib.Path], max_files: int) -> Outcome:
        found: Dict[str, None] = {}
        first: Optional[Settings] = None
        for folder in folders:
            settings = _settings(folder)
            first = first or settings
            for p in discover([folder], settings, Walk()):
                if p.suffix == ".py":
                    found[str(p)] = None
                if len(found) > max_files:  # the walk stops here: a huge tree is not walked to its end
                    outcome = self.clear()
                    return Outcome(f"inplacefix: project index off: more than {max_files} files in the "
                                   "workspace (setting projectIndexMaxFiles); files are analysed alone",
                                   outcome.changed)
        files = list(found)
        root = pathlib.Path(first.root) if first is not None and first.root else (folders[0] if folders else None)
        cache_dir, refused = cache_folder(root) if root is not None else (None, None)
        if tuple(files) != self._known_for:  # another module list: every file's facts depend on it
            self._known, self._known_for = {}, tuple(files)
        before = dict(self._known)
        libraries = for_settings(first, cache_dir) if first is not None else None
        index = build_index(files, cache_dir, self._mapper, libraries)
        same = index is not None and self.state.index is not None and all(
            before.get(p, (None, None))[1] is self._known[p][1] and self._known[p][0] is not None for p in files)
        if same and set(before) == set(files):
            return Outcome(f"inplacefix: project index of {len(files)} files unchanged", False)
        modules = {}
        for p in files:
            with contextlib.suppress(OSError, RuntimeError):  # a file gone meanwhile
                modules[str(pathlib.Path(p).resolve())] = module_name(pathlib.Path(p))
        self.state = IndexState(index, modules if index is not None else {}, self.state.generation + 1)
        note = f" ({refused})" if refused else ""
        return Outcome(f"inplacefix: project index of {len(files)} files ready{note}", True)

    def _mapper(self, work: Callable[[str], Optional[ModuleFacts]], paths: List[str]) -> List[Optional[ModuleFacts]]:
        """``work`` over the files whose signature changed since the last build; each under the
        analysis lock, so that open buffers' analyses run between files."""
        found = []
        for path in paths:
            signature = _signature(path)
            known = self._known.get(path)
            if signature is not None and known is not None and known[0] == signature:
                found.append(known[1])
                continue
            with self._lock:
                facts = work(path)
            self._known[path] = (signature, facts)
            found.append(facts)
        return found


def _settings(folder: pathlib.Path) -> Settings:
    try:
        return load_settings(None, folder, table().keys())
    except ConfigError:
        return Settings()


def _signature(path: str) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)

