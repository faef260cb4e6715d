"""Which files a run looks at: ``.py`` (and ``.ipynb``) files under the given paths, minus what
git ignores, virtual environments, build folders and the configured excludes.

Each file is taken once, however it is reached (two paths, a symbolic link, a hard link):
by its device and inode. Links to folders are not followed. What cannot be walked (an
unreadable folder, a broken or looping link) is noted in a :class:`Walk` and the walk goes on.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import stat
from typing import Iterable, Iterator, List, Optional

import pathspec

from codemod.config import ConfigError, Settings, config_in
from codemod.engine.fileio import TEMP_SUFFIX, is_stale_temp


@dataclasses.dataclass(frozen=True)
class Problem:
    """Something under the given paths that was not checked."""

    path: str
    message: str
    failed: bool  # True: files may have been missed (exit 2); False: only a notice


@dataclasses.dataclass
class Walk:
    """What a walk met besides the files: problems, and temporary files killed writes left."""

    problems: List[Problem] = dataclasses.field(default_factory=list)
    leftovers: List[pathlib.Path] = dataclasses.field(default_factory=list)


def _spec(lines: Iterable[str]) -> pathspec.PathSpec:
    return pathspec.GitIgnoreSpec.from_lines(list(lines))


def _gitignore(folder: pathlib.Path):
    try:
        return _spec((folder / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:  # none, or not readable (a folder of that name, no permission)
        return None


def _inherited_gitignores(folder: pathlib.Path) -> list:
    """.gitignore files of the folders above ``folder``, up to the repository root."""
    found = []
    for parent in folder.parents:
        spec = _gitignore(parent)
        if spec is not None:
            found.append((parent, spec))
        if os.path.lexists(parent / ".git"):
            break
    return found


def is_excluded(path: pathlib.Path, settings: Settings) -> bool:
    """Whether ``exclude``/``extend-exclude`` leave out ``path`` (named on the command line, with
    ``force-exclude``): those of the run's settings, or (hierarchical) of any configuration file
    at or above it (:meth:`Settings.exclusion_chain`). Raises ConfigError for a configuration
    file on the way that cannot be used."""
    folder = os.path.dirname(os.path.abspath(path))
    return any(_excluded_by(path, s) for s in settings.exclusion_chain(folder))


def _excluded_by(path: pathlib.Path, settings: Settings) -> bool:
    """Whether one settings' excludes leave out ``path``: its name or a folder above it matches a
    pattern, or its path relative to the settings' root does."""
    excludes = _spec(settings.exclude + settings.extend_exclude)
    absolute = pathlib.Path(os.path.abspath(path))
    root = (pathlib.Path(settings.root) if settings.root else pathlib.Path.cwd()).absolute()
    try:
        rel = absolute.relative_to(root)
    except ValueError:
        rel = None
    if excludes.match_file(absolute.name):
        return True
    if rel is not None:
        parts = rel.parts
        for i in range(1, len(parts) + 1):
            sub = "/".join(parts[:i]) + ("/" if i < len(parts) else "")
            if excludes.match_file(sub) or (i < len(parts) and excludes.match_file(parts[i - 1] + "/")):
                return True
    return False


def discover(paths: Iterable[pathlib.Path], settings: Settings, walk: Optional[Walk] = None) -> Iterator[pathlib.Path]:
    """Files to process, in a stable order. Files named explicitly are always taken (one that
    cannot be read is taken too: reading it reports why)."""
    walk = walk if walk is not None else Walk()
    # (spec, resolved root) of each settings whose excludes hold in a folder: the run's, and those
    # of the configuration files at or above it (Settings.exclusion_chain); added to on the way down.
    loaded: dict = {}  # configuration file -> its rule, None if it cannot be used (reported once)

    def rule_of(s: Settings):
        return (_spec(s.exclude + s.extend_exclude),
                (pathlib.Path(s.root) if s.root else pathlib.Path.cwd()).resolve())

    def rules_at(folder: pathlib.Path) -> list:
        try:
            return [rule_of(s) for s in settings.exclusion_chain(folder)]
        except ConfigError as exc:
            walk.problems.append(Problem(str(folder), f"cannot read the excludes: {exc}", True))
            return [rule_of(settings)]

    def nested_rule(resolved_folder: pathlib.Path):
        """The rule of a configuration file in the folder itself (hierarchical runs), or None."""
        if not settings.hierarchical:
            return None
        try:
            found = config_in(str(resolved_folder))
            if found is None or str(found) == settings.config_file:
                return None
            if found not in loaded:
                loaded[found] = rule_of(settings.configured(found))
            return loaded[found]
        except ConfigError as exc:
            key = ("error", str(resolved_folder))
            if key not in loaded:
                loaded[key] = None
                walk.problems.append(Problem(str(resolved_folder), f"cannot read the excludes: {exc}", True))
            return None

    seen = set()  # (device, inode) of the files taken, or the path when it cannot be stat'ed

    def first_time(key) -> bool:
        if key in seen:
            return False
        seen.add(key)
        return True

    def excluded(path: pathlib.Path, is_dir: bool, ignores, resolved: pathlib.Path, rules) -> bool:
        name = path.name + ("/" if is_dir else "")
        for excludes, root in rules:
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
        try:
            start_stat = os.stat(start)
        except OSError:
            if first_time(start):
                yield start  # missing, a broken link, no permission: the reader says which
            continue
        if settings.force_exclude:
            try:
                if is_excluded(start, settings):
                    continue  # --force-exclude: excluded even when named (pre-commit passes every file)
            except ConfigError as exc:
                walk.problems.append(Problem(str(start), f"cannot read the excludes: {exc}", True))
                continue
        if not stat.S_ISDIR(start_stat.st_mode):
            if first_time((start_stat.st_dev, start_stat.st_ino)):
                yield start  # a FIFO or device is refused by the reader, never opened blocking
            continue
        base_ignores = _inherited_gitignores(start.absolute())
        # Resolved once per starting folder; below it, paths are joined, not resolved again.
        resolved_start = start.resolve()
        stack = [(start, [(p, s) for p, s in base_ignores], resolved_start, rules_at(resolved_start))]
        first = True
        while stack:
            folder, ignores, resolved_folder, rules = stack.pop()
            spec = _gitignore(folder)
            if spec is not None:
                ignores = ignores + [(folder, spec)]
            nested = None if first else nested_rule(resolved_folder)  # (the start's: in rules_at's)
            first = False
            if nested is not None:
                rules = rules + [nested]
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as exc:
                walk.problems.append(Problem(str(folder), f"cannot read folder: {exc.strerror or exc}", True))
                continue
            subfolders = []
            for entry in entries:
                path = pathlib.Path(entry.path)
                resolved = resolved_folder / entry.name
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                if is_dir:
                    if not excluded(path, True, ignores, resolved, rules):
                        subfolders.append((path, ignores, resolved, rules))
                elif entry.name.endswith(".py") or (settings.include_notebooks and entry.name.endswith(".ipynb")):
                    try:
                        st = entry.stat()  # through a link
                    except OSError as exc:
                        walk.problems.append(Problem(str(path), f"skipped: {exc.strerror or exc}", False))
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    if entry.is_symlink():
                        resolved = pathlib.Path(os.path.realpath(path))
                    if not excluded(path, False, ignores, resolved, rules) and first_time((st.st_dev, st.st_ino)):
                        yield path
                elif entry.name.endswith(TEMP_SUFFIX) and is_stale_temp(path):
                    walk.leftovers.append(path)
            stack.extend(reversed(subfolders))
