"""Summaries of callees imported from installed libraries, read from their source.

``from timm.layers import Mlp`` then ``x += self.mlp(x)``: the project index asks what
``timm.layers.Mlp`` does with its tensors. This module finds the library's source without
importing anything (``importlib.machinery.PathFinder.find_spec`` one package level at a time,
on the search paths below), follows re-exports (``from .mlp import Mlp`` in ``__init__.py``)
a few hops, and summarizes the one name with the analysis the project's own files get
(``analysis.indexing.summaries_of``). C extensions, byte code only, namespace packages, torch
(measured facts in ``torch_api``), the tool itself, and files too large or unreadable give
nothing: the callee stays unknown, never "saves nothing".

Results are cached as JSON next to the project index's entries, keyed by the file's path, size
and mtime_ns, the name, and the tool's code digest: a changed library file is read again.

Search paths, first found wins: ``library-paths`` from the settings, the project's own
virtualenv (``.venv``/``venv`` beside the pyproject.toml or in the working folder, then
$VIRTUAL_ENV: the tool often runs from pipx), then the interpreter's ``sys.path`` less the
folder the tool itself is installed in.
"""

from __future__ import annotations

import ast
import dataclasses
import glob
import hashlib
import importlib.machinery
import json
import os
import pathlib
import sys
from typing import Dict, List, Literal, Optional, Tuple

from codemod import debug
from codemod.analysis.project import SummaryFact
from codemod.config import Settings
from codemod.engine.cache import load_json, store_json
from codemod.engine.summary_json import summary_from_json, summary_to_json

_VERSION = b"library-summaries-6"  # 2: whether a class owns parameters; 3: returns "multi-view"; 4: builds;
# 5: for whose gradient each input is saved; 6: whether a function stores nothing past its call (not asked of libraries)
_MAX_BYTES = 1_000_000  # a larger file is not read (a generated table, a vendored bundle)
_MAX_HOPS = 4  # re-exports followed
_SKIPPED = frozenset({"torch"})  # torch's ops and modules have measured facts
_TOOL = pathlib.Path(__file__).resolve().parent.parent  # codemod/: never summarized as a library


@dataclasses.dataclass(frozen=True)
class Entry:
    """What a library module says of one of its names (cached as JSON)."""

    kind: Literal["summary", "reexport", "none"]
    fact: Optional[SummaryFact] = None
    target: str = ""  # for "reexport": the qualified name it imports


class Libraries:
    """Summaries of installed libraries' callees (picklable: it travels with the index to the
    worker processes; each keeps its own memo, and they share the disk cache)."""

    def __init__(self, paths: Tuple[str, ...], cache_dir: Optional[str] = None) -> None:
        self.paths = paths
        self.cache_dir = cache_dir
        self.computed = 0  # library files parsed and summarized (cache misses), for tests
        self.hits = 0  # answers read from the disk cache
        self._memo: Dict[str, Optional[SummaryFact]] = {}

    def __call__(self, qualname: str) -> Optional[SummaryFact]:
        if qualname not in self._memo:
            self._memo[qualname] = self._summary(qualname, 0)
        return self._memo[qualname]

    def _summary(self, qualname: str, hops: int) -> Optional[SummaryFact]:
        module, _, name = qualname.rpartition(".")
        path = self.find_source(module) if module else None
        if path is None:
            return None
        entry = self._entry(path, module, name)
        if entry.kind == "reexport" and hops < _MAX_HOPS:
            return self._summary(entry.target, hops + 1)
        return entry.fact

    # ---------------------------------------------------------------- finding the source
    def find_source(self, module: str) -> Optional[pathlib.Path]:
        """The ``.py`` file of ``module`` on the search paths, found without importing it:
        each package's ``submodule_search_locations`` lead to the next part."""
        parts = module.split(".")
        if parts[0] in _SKIPPED or not all(p.isidentifier() for p in parts):
            return None
        locations: List[str] = list(self.paths)
        spec = None
        for i, part in enumerate(parts):
            try:
                spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), locations)
            except Exception:  # noqa: BLE001 - a namespace package in another: importlib wants the parent imported
                spec = None
            if spec is None or spec.origin is None or not spec.has_location:
                # a namespace package (or none): its folders on the current locations, walked
                # here (its ``_NamespacePath`` would recompute them from sys.path); no file
                locations = [d for d in (os.path.join(loc, part) for loc in locations) if os.path.isdir(d)]
                if not locations or i == len(parts) - 1:
                    return None
                continue
            if i < len(parts) - 1:
                locations = list(spec.submodule_search_locations or [])
                if not locations:
                    return None  # a module, not a package: nothing below it
        origin = spec.origin if spec is not None else None
        if not origin or not origin.endswith(".py"):
            return None  # a C extension, byte code only
        path = pathlib.Path(origin)
        if _TOOL in path.resolve().parents:
            return None
        return path

    # ---------------------------------------------------------------- reading it (cached)
    def _entry(self, path: pathlib.Path, module: str, name: str) -> Entry:
        try:
            st = path.stat()
        except OSError:
            return Entry("none")
        if st.st_size > _MAX_BYTES:
            return Entry("none")
        key = hashlib.sha256(b"\0".join([_salt(), str(path).encode(), str(st.st_size).encode(),
                                          str(st.st_mtime_ns).encode(), module.encode(), name.encode()])).hexdigest()
        folder = pathlib.Path(self.cache_dir) / "project" if self.cache_dir else None
        if folder is not None:
            try:  # JSON, never pickle
                found = _entry_from_json(load_json(folder / key))
                self.hits += 1
                return found
            except Exception:  # noqa: BLE001 - a missing, unreadable or malformed entry is a miss
                pass
        try:
            data = path.read_bytes()
        except OSError:
            return Entry("none")
        self.computed += 1
        entry = _read(data, module, name, path.name == "__init__.py")
        if folder is not None:
            store_json(folder / key, _entry_to_json(entry))
        return entry


def _read(data: bytes, module: str, name: str, is_package: bool) -> Entry:
    """What ``module``'s source says of ``name``: bound once, by an undecorated top-level
    ``def``/``class`` (its summary) or a ``from ... import`` (where it comes from); anything
    else is none."""
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.indexing import summaries_of
    from codemod.analysis.source import Source

    try:
        model = SemanticModel(Source(data))
        bindings = model.flow(model.module).bindings.get(name, [])
        if len(bindings) != 1 or any(isinstance(s, ast.ImportFrom) and s.names[0].name == "*"
                                     for s in ast.walk(model.module)):
            return Entry("none")  # bound several times, by a star import maybe, or not at all
        stmt = bindings[0].stmt
        if isinstance(stmt, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and stmt in model.module.body:
            if stmt.decorator_list:  # may swap what runs (transformers' use_kernel_forward_from_hub)
                return Entry("none")
            found = summaries_of(model, module, frozenset({name}), callers_unseen=True).get(f"{module}.{name}")
            if found is None:
                return Entry("none")
            return Entry("summary", dataclasses.replace(found, name=f"{module}.{found.name}"))
        if isinstance(stmt, ast.ImportFrom) and stmt in model.module.body:
            alias = next((a for a in stmt.names if (a.asname or a.name) == name), None)
            base = _absolute(stmt, module, is_package)
            if alias is not None and base:
                return Entry("reexport", target=f"{base}.{alias.name}")
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError):
        pass
    except Exception:  # noqa: BLE001 - a library file we fail on must not cost the user's file
        debug.print_traceback()  # (with -v: it is a bug of ours)
    return Entry("none")


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> Optional[str]:
    """The absolute module a (maybe relative) ``from ... import`` in ``module`` reads."""
    if not node.level:
        return node.module
    package = module if is_package else module.rpartition(".")[0]
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else [])) or None


def _entry_to_json(entry: Entry) -> dict:
    f = entry.fact
    return {"kind": entry.kind, "fact": None if f is None else summary_to_json(f), "target": entry.target}


def _entry_from_json(raw: dict) -> Entry:
    kind, fact, target = raw["kind"], raw["fact"], raw["target"]
    if kind not in ("summary", "reexport", "none") or not isinstance(target, str) \
            or (kind == "summary") != (fact is not None):
        raise ValueError(raw)
    return Entry(kind, summary_from_json(fact) if fact is not None else None, target)


_SALT: List[bytes] = []


def _salt() -> bytes:
    if not _SALT:
        from codemod.engine.cache import _code_digest

        _SALT.append(hashlib.sha256(_VERSION + _code_digest().encode()).digest())
    return _SALT[0]


# -------------------------------------------------------------------- where to look
def for_settings(settings: Settings, cache_dir: Optional[str]) -> Optional[Libraries]:
    """The run's library summaries; None when the settings turn them off."""
    if not settings.library_summaries:
        return None
    return Libraries(search_paths(settings.library_paths, settings.root), cache_dir)


def search_paths(extra: Tuple[str, ...] = (), root: Optional[str] = None) -> Tuple[str, ...]:
    """The folders library sources are looked up in, in order: ``extra`` (the settings'
    ``library-paths``, relative to ``root``), the project's virtualenv, $VIRTUAL_ENV, then the
    running interpreter's ``sys.path`` (less the working folder's empty entry)."""
    base = pathlib.Path(root or ".")
    found: List[str] = []
    for entry in extra:  # a pattern may name several (``venv/lib/python3*/site-packages``)
        where = str(base / os.path.expanduser(entry))
        found += [str(pathlib.Path(p).resolve()) for p in sorted(glob.glob(where)) or [where]]
    for folder in dict.fromkeys([base.resolve(), pathlib.Path.cwd()]):
        for name in (".venv", "venv"):
            found += site_packages(folder / name)
    if os.environ.get("VIRTUAL_ENV"):
        found += site_packages(pathlib.Path(os.environ["VIRTUAL_ENV"]))
    # Neither the project's own files nor the tool's (pipx's site-packages: libcst, typer...) are
    # the project's libraries.
    own = {str(base.resolve()), str(pathlib.Path.cwd()), str(_TOOL.parent)}
    found += [p for p in sys.path if p and os.path.isdir(p) and str(pathlib.Path(p).resolve()) not in own]
    return tuple(dict.fromkeys(found))


def site_packages(venv: pathlib.Path) -> List[str]:
    """A virtualenv's site-packages (POSIX or Windows layout), with the folders its ``.pth``
    files add (editable installs); nothing when ``venv`` is none."""
    if not (venv / "pyvenv.cfg").is_file():
        return []
    found: List[str] = []
    for sp in sorted(glob.glob(str(venv / "lib" / "python3*" / "site-packages"))) + [str(venv / "Lib" / "site-packages")]:
        if not os.path.isdir(sp):
            continue
        found.append(sp)
        for pth in sorted(glob.glob(os.path.join(sp, "*.pth"))):
            try:
                lines = pathlib.Path(pth).read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if line and not line.startswith(("#", "import ", "import\t")):
                    folder = os.path.join(sp, line)
                    if os.path.isdir(folder):
                        found.append(os.path.normpath(folder))
    return found
