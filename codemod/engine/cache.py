"""A content-hash cache, so a rerun over unchanged files is near-instant.

An entry is keyed by the file's bytes, its kind (.py or .ipynb), what was asked (findings,
edits, fixes), the settings, the tool's version and own code (the torch data it was built
with included), the interpreter (whose grammar decides what parses) and libcst's version
(which decides what can be fixed); any change misses. Entries are small JSON files under
``.inplacefix_cache/`` (written atomically). An entry that cannot be decoded into a result,
valid JSON of another shape included, is a miss: a broken or missing cache only costs time.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import pathlib
import stat
import sys
import tempfile
from typing import Optional, Tuple

from codemod import __version__
from codemod.findings import Edit, Finding, Span, Status


CACHE_FOLDER = ".inplacefix_cache"


def cache_folder(root: pathlib.Path) -> Tuple[Optional[str], Optional[str]]:
    """The cache folder of a project rooted at ``root``, and a notice when it is refused. A
    repository can ship ``.inplacefix_cache`` as a link (or a file): following it would make even
    ``check`` write wherever it points, so the run goes without a cache and says why."""
    folder = root / CACHE_FOLDER
    if folder.is_symlink() or (os.path.lexists(folder) and not folder.is_dir()):
        what = "a link" if folder.is_symlink() else "not a folder"
        return None, (f"warning: {folder} is {what}; it is not followed, and results are not cached "
                      "(remove it to cache them)")
    return str(folder), None


def _linked_below_cache(target: pathlib.Path) -> bool:
    """Is any folder between the cache folder and ``target`` a link (or ``target`` itself)? Only
    folders that exist are looked at; the cache folder's own name ends the walk up."""
    part = os.fspath(target)  # strings: one lstat per folder, no path objects (once per entry read)
    while True:
        if os.path.islink(part):
            return True
        if os.path.basename(part) == CACHE_FOLDER:
            return False
        parent = os.path.dirname(part)
        if parent == part:
            return False
        part = parent


def load_json(source: pathlib.Path) -> object:
    """A cache entry's JSON. A link, or anything but a plain file (a FIFO would block the run, a
    device never end), raises OSError: the entry is a miss."""
    if _linked_below_cache(source.parent):
        raise OSError(f"{source}: a linked cache folder")
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(f"{source}: not a plain file")
        return json.loads(handle.read())


def _make_folders(folder: pathlib.Path) -> None:
    """``mkdir -p`` that never goes through a link below the cache folder."""
    if _linked_below_cache(folder):
        raise OSError(f"{folder}: a linked cache folder")
    folder.mkdir(parents=True, exist_ok=True)
    if _linked_below_cache(folder):  # made by someone else meanwhile
        raise OSError(f"{folder}: a linked cache folder")


def store_json(target: pathlib.Path, data: object) -> None:
    """Write a cache entry whole or not at all (a temporary file, then a rename, which replaces a
    link rather than writing through it); a cache that cannot be written is no error: the entry
    is computed again next time."""
    try:
        _make_folders(target.parent)
        fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(tmp, target)
    except OSError:
        pass


def write_ignore_file(folder: pathlib.Path) -> None:
    """``folder/.gitignore`` (the cache is never committed, like ``.ruff_cache``), created only
    if nothing is there: never through a link, never over a file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(folder / ".gitignore", flags, 0o644)
    except OSError:  # there already (a file or a link), or not writable
        return
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write("# written by inplacefix\n*\n")


def cache_key(data: bytes, path: str, settings, fix: bool, edits: bool) -> str:
    h = hashlib.sha256(_run_salt(settings, fix, edits))
    h.update(pathlib.Path(path).suffix.encode())
    h.update(b"\0")
    h.update(data)
    return h.hexdigest()


# Settings that do not decide a file's result: which files are walked, how findings are printed,
# and where a file's settings came from (``Settings.for_file`` has made them its own: its per-file ignores are in ``ignore``).
_NOT_IN_KEY = ("exclude", "extend_exclude", "force_exclude", "root", "config_file", "hierarchical", "overrides",
               "output_format")


@functools.lru_cache(maxsize=8)
def _run_salt(settings, fix: bool, edits: bool) -> bytes:
    """Everything but the file that decides its result: the tool's own code (its version, and
    the torch data in ``torch_api.py``, which is part of that code), the interpreter, libcst,
    the settings, what was asked. Computed once per run."""
    meta = {
        "version": __version__, "code": _code_digest(), "fix": fix, "edits": edits,
        "python": [sys.implementation.name, sys.version], "libcst": _libcst_version(),
        "settings": {k: v for k, v in dataclasses.asdict(settings).items() if k not in _NOT_IN_KEY},
    }
    return json.dumps(meta, sort_keys=True, default=str).encode()


def _libcst_version() -> Optional[str]:
    """libcst's installed version, from the name of its dist-info folder beside the package
    (0.4 ms; importing ``importlib.metadata`` costs 50-70 ms, which every cached rerun would
    pay), else from the metadata API. libcst itself is not imported: a cached rerun needs it not."""
    spec = importlib.util.find_spec("libcst")
    if spec is None or spec.origin is None:
        return None
    found = sorted(p.name for p in pathlib.Path(spec.origin).parent.parent.glob("libcst-*.dist-info"))
    if len(found) == 1:
        return found[0]
    from importlib import metadata

    return metadata.version("libcst")


_PACKAGE = pathlib.Path(__file__).resolve().parent.parent  # codemod/, not only engine/


def code_files(package: pathlib.Path = _PACKAGE) -> list:
    """Every source file of the package (``codemod/``, not only this module's ``engine/``)."""
    return sorted(package.rglob("*.py"))


_OWN_DIGEST: list = []  # this process's: the code it runs was read when it started


def _code_digest(package: pathlib.Path = _PACKAGE) -> str:
    """A digest of the package's source files: any change to the tool (a rule, the analysis)
    misses the cache. The running package's is worked out once per process (a run asked for it
    four times, reading every source file of the tool each time)."""
    if package == _PACKAGE and _OWN_DIGEST:
        return _OWN_DIGEST[0]
    h = hashlib.sha256()
    for source in code_files(package):
        h.update(source.relative_to(package).as_posix().encode())
        h.update(source.read_bytes())
    if package == _PACKAGE:
        _OWN_DIGEST.append(h.hexdigest())
    return h.hexdigest()


def _finding_to_dict(f: Finding) -> dict:
    return {
        "code": f.code, "message": f.message, "span": dataclasses.astuple(f.span), "status": f.status.value,
        "reason": f.reason, "fix_title": f.fix_title, "cell": f.cell, "fixable": f.fixable,
        "edit": None if f.edit is None else [dataclasses.astuple(f.edit.span), f.edit.content],
    }


class BadEntry(ValueError):
    """A cache entry that does not decode into findings."""


def _expect(ok: bool) -> None:
    if not ok:
        raise BadEntry


def _is_int(value) -> bool:
    return type(value) is int  # not bool


def _span(value) -> Span:
    _expect(isinstance(value, list) and len(value) == 4 and all(map(_is_int, value)))
    return Span(*value)


def _optional(value, kind) -> bool:
    return value is None or isinstance(value, kind) and not isinstance(value, bool)


_FIELDS = {"code", "message", "span", "status", "reason", "fix_title", "cell", "fixable", "edit"}


@functools.lru_cache(maxsize=1)
def _codes() -> frozenset:
    """The registered rule codes (the registry's rule modules are imported on the first hit)."""
    from codemod.rules.registry import table

    return frozenset(table())


def _finding_from_dict(d) -> Finding:
    """The finding an entry holds; raises BadEntry if anything is missing or of another type."""
    _expect(isinstance(d, dict) and _FIELDS <= d.keys())
    _expect(isinstance(d["code"], str) and d["code"] in _codes() and isinstance(d["message"], str))
    _expect(_optional(d["reason"], str) and _optional(d["fix_title"], str))
    _expect(_optional(d["cell"], int) and isinstance(d["fixable"], bool))
    try:
        status = Status(d["status"])
    except (ValueError, TypeError):
        raise BadEntry from None
    edit = d["edit"]
    if edit is not None:
        _expect(isinstance(edit, list) and len(edit) == 2 and isinstance(edit[1], str))
        edit = Edit(_span(edit[0]), edit[1])
    return Finding(d["code"], d["message"], _span(d["span"]), status, d["reason"],
                   None, edit, d["fix_title"], d["cell"], d["fixable"])


class Cache:
    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder

    def _file(self, key: str) -> pathlib.Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> Optional[dict]:
        try:
            entry = load_json(self._file(key))
            _expect(isinstance(entry, dict) and isinstance(entry.get("findings"), list))
            entry["findings"] = [_finding_from_dict(d) for d in entry["findings"]]
        except (OSError, ValueError):  # unreadable, not JSON, not UTF-8, a BadEntry
            return None
        return entry

    def put(self, key: str, findings, asked: Optional[list] = None) -> None:
        """Only clean outcomes that need no rewrite are stored: the rest is always recomputed.
        ``asked``: the index's answers the result depends on (``engine.asked``)."""
        target = self._file(key)
        try:
            _make_folders(target.parent)
        except OSError:
            return
        write_ignore_file(self.folder)
        store_json(target, {"findings": [_finding_to_dict(f) for f in findings], "asked": asked or []})


def clean(start: pathlib.Path) -> list:
    """``inplacefix clean``: remove every cache folder at or below ``start`` (the folder itself
    when it is one). Links are never followed: one named like the cache folder is removed as a
    link (what it points to is left alone), and the walk does not go through links to folders.
    Returns the paths removed; raises OSError naming the first that could not be."""
    import shutil

    removed = []

    def remove(path: pathlib.Path) -> None:
        if path.is_symlink() or not path.is_dir():
            path.unlink()  # the link (or a file of that name), never what it points to
        else:
            shutil.rmtree(path)  # does not follow links inside (it refuses a link at the top)
        removed.append(path)

    start = pathlib.Path(start)
    if start.name == CACHE_FOLDER and os.path.lexists(start):
        remove(start)
        return removed
    if start.is_symlink():
        return removed  # a link to a folder is not walked, even when named
    for folder, subfolders, files in os.walk(start, followlinks=False):
        base = pathlib.Path(folder)
        for name in [n for n in subfolders + files if n == CACHE_FOLDER]:
            remove(base / name)
        subfolders[:] = [n for n in subfolders if n != CACHE_FOLDER]
    return removed
