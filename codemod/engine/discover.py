"""Which files a run looks at: ``.py`` (and ``.ipynb``) files under the given paths, minus what
git ignores, virtual environments, build folders and the configured excludes."""

from __future__ import annotations

import os
import pathlib
from typing import Iterable, Iterator

import pathspec

from codemod.config import Settings


def _spec(lines: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(lines))


def _gitignore(folder: pathlib.Path):
    path = folder / ".gitignore"
    if path.is_file():
        try:
            return _spec(path.read_text(encoding="utf-8", errors="replace").splitlines())
        except OSError:
            return None
    return None


def _inherited_gitignores(folder: pathlib.Path) -> list:
    """.gitignore files of the folders above ``folder``, up to the repository root."""
    found = []
    for parent in folder.parents:
        spec = _gitignore(parent)
        if spec is not None:
            found.append((parent, spec))
        if (parent / ".git").exists():
            break
    return found


def discover(paths: Iterable[pathlib.Path], settings: Settings) -> Iterator[pathlib.Path]:
    """Files to process, in a stable order. Files named explicitly are always taken."""
    excludes = _spec(settings.exclude + settings.extend_exclude)
    root = (pathlib.Path(settings.root) if settings.root else pathlib.Path.cwd()).resolve()
    seen = set()

    def excluded(path: pathlib.Path, is_dir: bool, ignores, resolved: pathlib.Path) -> bool:
        name = path.name + ("/" if is_dir else "")
        if excludes.match_file(name):
            return True
        try:
            rel = resolved.relative_to(root).as_posix() + ("/" if is_dir else "")
            if excludes.match_file(rel):
                return True
        except ValueError:
            pass
        for folder, spec in ignores:
            try:
                rel = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            except ValueError:
                continue
            if spec.match_file(rel):
                return True
        return False

    for start in paths:
        start = pathlib.Path(start)
        if start.is_file() or not start.exists():
            if start not in seen:
                seen.add(start)
                yield start  # a missing file is reported by the reader
            continue
        base_ignores = _inherited_gitignores(start.absolute())
        # Resolved once per starting folder; below it, paths are joined, not resolved again.
        stack = [(start, [(p, s) for p, s in base_ignores], start.resolve())]
        while stack:
            folder, ignores, resolved_folder = stack.pop()
            spec = _gitignore(folder)
            if spec is not None:
                ignores = ignores + [(folder, spec)]
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            subfolders = []
            for entry in entries:
                path = pathlib.Path(entry.path)
                resolved = resolved_folder / entry.name
                if entry.is_dir(follow_symlinks=False):
                    if not excluded(path, True, ignores, resolved):
                        subfolders.append((path, ignores, resolved))
                elif (entry.name.endswith(".py") or (settings.include_notebooks and entry.name.endswith(".ipynb"))) \
                        and entry.is_file():
                    if not excluded(path, False, ignores, resolved.resolve() if entry.is_symlink() else resolved) \
                            and path not in seen:
                        seen.add(path)
                        yield path
            stack.extend(reversed(subfolders))
