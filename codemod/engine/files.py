"""A file on disk: read it, answer from the cache, dispatch ``.py`` / ``.ipynb``, write atomically.

This sits above both the pipeline (``engine.pipeline``) and the notebook adapter
(``engine.notebook``), so neither needs the other's caller.
"""

from __future__ import annotations

import pathlib
from typing import Optional

from codemod.config import Settings
from codemod.engine.fileio import read_source, write_atomic
from codemod.engine.pipeline import FileError, FileResult, process_source


def process_path(path: str, settings: Settings, fix: bool, write: bool, edits: bool,
                 cache_dir: Optional[str] = None) -> FileResult:
    """Read, process and (with ``write``) atomically rewrite one file."""
    p = pathlib.Path(path)
    try:
        data = read_source(p)
    except OSError as exc:
        return FileResult(path, error=FileError(f"cannot read: {exc.strerror or exc}"))
    cache = key = None
    if cache_dir is not None:
        from codemod.engine.cache import Cache, cache_key

        cache, key = Cache(pathlib.Path(cache_dir)), cache_key(data, path, settings, fix, edits)
        hit = cache.get(key)
        if hit is not None:
            return FileResult(path, findings=hit["findings"])
    try:
        if path.endswith(".ipynb"):
            from codemod.engine.notebook import process_notebook

            result = process_notebook(data, path, settings, fix=fix, edits=edits)
        else:
            result = process_source(data, path, settings, fix=fix, edits=edits)
    except Exception as exc:  # a bug of ours must cost one file, not the run
        return FileResult(path, error=FileError(f"internal error: {type(exc).__name__}: {exc}"))
    if write and result.changed and result.error is None:
        try:
            write_atomic(p, result.fixed_bytes)
        except OSError as exc:
            result.error = FileError(f"cannot write: {exc.strerror or exc}")
    if cache is not None and not result.changed and not result.skipped_parts and not result.notices and result.error is None:
        cache.put(key, result.findings)
    # Results may cross a process boundary: keep plain data only.
    result.fixed_bytes = result.wrapper = result.source = None
    for finding in result.findings:
        finding.fix = finding.plan = None
    return result
