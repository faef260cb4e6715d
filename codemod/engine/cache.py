"""A content-hash cache, so a rerun over unchanged files is near-instant.

An entry is keyed by the file's bytes, its kind (.py or .ipynb), what was asked (findings,
edits, fixes), the settings, and the tool's version and own code (the torch data it was
built with included); any change misses. Entries are small JSON files under
``.inplacefix_cache/`` (written atomically; a broken or missing cache only costs time).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import pathlib
import tempfile
from typing import Optional

from codemod import __version__
from codemod.findings import Edit, Finding, Span, Status


def cache_key(data: bytes, path: str, settings, fix: bool, edits: bool) -> str:
    h = hashlib.sha256(_run_salt(settings, fix, edits))
    h.update(pathlib.Path(path).suffix.encode())
    h.update(b"\0")
    h.update(data)
    return h.hexdigest()


@functools.lru_cache(maxsize=8)
def _run_salt(settings, fix: bool, edits: bool) -> bytes:
    """Everything but the file that decides its result: the tool's own code (its version, and
    the torch data in ``torch_api.py``, which is part of that code), the settings, what was
    asked. Computed once per run."""
    meta = {
        "version": __version__, "code": _code_digest(), "fix": fix, "edits": edits,
        "settings": {k: v for k, v in dataclasses.asdict(settings).items() if k not in ("exclude", "extend_exclude", "root")},
    }
    return json.dumps(meta, sort_keys=True, default=str).encode()


def _code_digest() -> str:
    """A digest of the package's source files: any change to the tool misses the cache."""
    h = hashlib.sha256()
    package = pathlib.Path(__file__).parent
    for source in sorted(package.rglob("*.py")):
        h.update(source.relative_to(package).as_posix().encode())
        h.update(source.read_bytes())
    return h.hexdigest()


def _finding_to_dict(f: Finding) -> dict:
    return {
        "code": f.code, "message": f.message, "span": dataclasses.astuple(f.span), "status": f.status.value,
        "reason": f.reason, "fix_title": f.fix_title, "cell": f.cell, "fixable": f.fixable,
        "edit": None if f.edit is None else [dataclasses.astuple(f.edit.span), f.edit.content],
    }


def _finding_from_dict(d: dict) -> Finding:
    edit = None if d["edit"] is None else Edit(Span(*d["edit"][0]), d["edit"][1])
    return Finding(d["code"], d["message"], Span(*d["span"]), Status(d["status"]), d["reason"],
                   None, edit, d["fix_title"], d["cell"], d["fixable"])


class Cache:
    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder

    def _file(self, key: str) -> pathlib.Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[dict]:
        try:
            entry = json.loads(self._file(key).read_text())
        except (OSError, ValueError):
            return None
        entry["findings"] = [_finding_from_dict(d) for d in entry["findings"]]
        return entry

    def put(self, key: str, findings) -> None:
        """Only clean outcomes that need no rewrite are stored: the rest is always recomputed."""
        target = self._file(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.folder / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# written by inplacefix\n*\n")  # never committed, like .ruff_cache
            fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as handle:
                json.dump({"findings": [_finding_to_dict(f) for f in findings]}, handle)
            os.replace(tmp, target)
        except OSError:
            pass
