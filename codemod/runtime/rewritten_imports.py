"""Rewritten project files imported from memory: a repair's candidate runs without touching
the user's files (verify's sides, the locator's rerun, script repair's child). Tracebacks and the
locator's sites show the text that runs."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import linecache
import os
import sys
from typing import Dict


class RewrittenLoader(importlib.machinery.SourceFileLoader):
    """Loads a module from a rewritten text instead of its file (no bytecode cache)."""

    def __init__(self, fullname: str, path: str, source: str) -> None:
        super().__init__(fullname, path)
        self.source = source

    def get_source(self, fullname):
        return self.source

    def get_code(self, fullname):
        return compile(self.source, self.path, "exec", dont_inherit=True)


class RewrittenFinder(importlib.abc.MetaPathFinder):
    """Finds modules as usual, then hands the ones with a rewritten text to that text."""

    def __init__(self, sources: Dict[str, str]) -> None:
        self.sources = {os.path.realpath(p): s for p, s in sources.items()}

    def find_spec(self, fullname, path, target=None):
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not spec.origin:
            return None
        source = self.sources.get(os.path.realpath(spec.origin))
        if source is None:
            return None
        spec.loader = RewrittenLoader(fullname, spec.origin, source)
        return spec


def use_sources(sources: Dict[str, str]) -> None:
    """Import the files named in ``sources`` (path -> text) from their texts from now on."""
    for path, source in sources.items():
        # Tracebacks and the locator's sites show the text that runs.
        linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    if sources:
        sys.meta_path.insert(0, RewrittenFinder(sources))
        _load_by_path_too({os.path.realpath(p): s for p, s in sources.items()})


def _load_by_path_too(sources: Dict[str, str]) -> None:
    """A module loaded by its file's path (``importlib.util.spec_from_file_location(name,
    path).loader.exec_module(m)``, as backends and plugin folders do) gets the rewritten text
    as well: its loader is a plain ``SourceFileLoader`` that no finder sees. (The child runs one
    request: the patch ends with it.)"""
    loader = importlib.machinery.SourceFileLoader
    plain_code, plain_source = loader.get_code, loader.get_source

    def get_code(self, fullname):
        source = sources.get(os.path.realpath(self.path))
        if source is None:
            return plain_code(self, fullname)
        return compile(source, self.path, "exec", dont_inherit=True)

    def get_source(self, fullname):
        source = sources.get(os.path.realpath(self.path))
        return plain_source(self, fullname) if source is None else source

    loader.get_code, loader.get_source = get_code, get_source  # type: ignore[method-assign]
