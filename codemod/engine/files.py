"""A file on disk: read it, answer from the cache, dispatch ``.py`` / ``.ipynb``, write atomically.

This sits above both the pipeline (``engine.pipeline``) and the notebook adapter
(``engine.notebook``), so neither needs the other's caller.
"""

from __future__ import annotations

import hashlib
import pathlib
from typing import Optional

from codemod.config import ConfigError, Settings
from codemod import debug
from codemod.engine.fileio import WriteRefused, read_snapshot, write_atomic
from codemod.analysis.project import ProjectIndex, module_name
from codemod.engine.asked import Asking, answers_hold
from codemod.engine.pipeline import FileError, FileResult, process_source


def process_path(path: str, settings: Settings, fix: bool, write: bool, edits: bool,
                 cache_dir: Optional[str] = None, project: Optional[ProjectIndex] = None) -> FileResult:
    """Read, process and (with ``write``) atomically rewrite one file (``project``: the run's
    index, ``engine.project``: what the other files tell about this one's functions)."""
    p = pathlib.Path(path)
    try:
        settings = settings.for_file(path)  # the nearest configuration file's, per-file ignores
    except ConfigError as exc:
        return FileResult(path, error=FileError(str(exc)))
    try:
        snapshot = read_snapshot(p)
    except OSError as exc:
        return FileResult(path, error=FileError(f"cannot read: {exc.strerror or exc}"))
    data = snapshot.data
    module = None
    if project is not None and path.endswith(".py"):
        module = project.module_names.get(path) or module_name(p)
    cache = key = asking = None
    if cache_dir is not None:
        from codemod.engine.cache import Cache, cache_key

        cache, key = Cache(pathlib.Path(cache_dir)), cache_key(data, path, settings, fix, edits)
        if module is not None:  # the answers the index gives this file are part of its result
            key = hashlib.sha256(f"{key}\0{project.digest_for(module, passed=False)}".encode()).hexdigest()
        hit = cache.get(key)
        if hit is not None and (module is None or answers_hold(project, hit.get("asked", []))):
            return FileResult(path, findings=hit["findings"])
        if module is not None:  # (what calls pass is checked apart: ``engine.asked``)
            project = asking = Asking(project)  # type: ignore[assignment]
    try:
        if path.endswith(".ipynb"):
            from codemod.engine.notebook import process_notebook

            result = process_notebook(data, path, settings, fix=fix, edits=edits)
        else:
            result = process_source(data, path, settings, fix=fix, edits=edits,
                                    project=project if module is not None else None, module_name=module or "")
    except Exception as exc:  # a bug of ours must cost one file, not the run
        debug.print_traceback()
        what = (str(exc).strip().splitlines() or [""])[0]  # one line; the traceback with -v
        return FileResult(path, error=FileError(f"internal error: {type(exc).__name__}: {what}"))
    if write and result.changed and result.error is None:
        try:
            write_atomic(p, result.fixed_bytes, snapshot)
        except WriteRefused as exc:
            result.error = FileError(str(exc))
        except OSError as exc:
            result.error = FileError(f"cannot write: {exc.strerror or exc}")
    if cache is not None and not result.changed and not result.skipped_parts and not result.notices and result.error is None:
        cache.put(key, result.findings, asking.asked if asking is not None else [])
    # Results may cross a process boundary: keep plain data only.
    result.fixed_bytes = result.wrapper = result.source = None
    for finding in result.findings:
        finding.fix = finding.plan = None
    return result
