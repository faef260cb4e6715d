"""Settings: defaults, then the nearest configuration file (``inplacefix.toml`` or
``.inplacefix.toml`` with the keys at the top, or ``[tool.inplacefix]`` in pyproject.toml; in one
folder, in that order), then command-line flags (``--config KEY=VALUE`` among them).

Configuration is hierarchical, as Ruff's is: each file takes the nearest configuration file
above it (:meth:`Settings.for_file`), with the command line's overrides on top; a file given
with ``--config`` is used for every file instead."""

from __future__ import annotations

import dataclasses
import enum
import functools
import os
import pathlib
import re
import tomllib
from typing import Collection, NamedTuple, Optional, Sequence


DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".env", "env", "__pycache__", ".tox", ".nox",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", "node_modules",
    "site-packages", "*.egg-info", ".eggs", ".ipynb_checkpoints", ".inplacefix_cache",
)


class ConfigError(Exception):
    """A setting that cannot be used; reported with exit code 2."""


@dataclasses.dataclass(frozen=True)
class Settings:
    # Code prefixes. By default only hazards (IPF1xx): in-place ops shown to modify a tensor
    # autograd saved. "IPF" or "ALL" adds every other in-place candidate (blanket migration).
    select: tuple = ("IPF1",)
    ignore: tuple = ()
    exclude: tuple = DEFAULT_EXCLUDE
    extend_exclude: tuple = ()
    unsafe_fixes: bool = False
    assume_same_dtype: bool = False
    include_notebooks: bool = True
    # Summaries of callees imported from installed libraries (engine.libraries), and folders
    # searched for them before the project's virtualenv and the interpreter's sys.path.
    library_summaries: bool = True
    library_paths: tuple = ()
    root: Optional[str] = None  # folder of the configuration file the settings came from
    extend_select: tuple = ()  # added to ``select`` (the defaults kept)
    # (gitignore-style pattern, selectors): codes left out of the files a pattern matches
    # (a pattern without ``/`` matches the name in any folder; others are relative to ``root``;
    # ``!pattern``: the files it does not match).
    per_file_ignores: tuple = ()
    force_exclude: bool = False  # excludes apply to files named on the command line too
    config_file: Optional[str] = None  # the file the settings came from
    # How :meth:`for_file` finds a file's settings: the nearest configuration file, with these
    # (field, value) overrides of the command line on top; off with ``--config FILE``.
    hierarchical: bool = False
    overrides: tuple = ()

    def selects(self, code: str) -> bool:
        """A selector (checked by ``selector_problem``) is ``ALL`` or a prefix of the codes it
        selects; a code both selected and ignored is ignored."""

        def hit(prefixes):
            return any(p == "ALL" or code.startswith(p) for p in prefixes)
        return hit(self.select + self.extend_select) and not hit(self.ignore)

    def for_file(self, path: str) -> "Settings":
        """The settings of one file: those of the nearest configuration file above it (when
        the run is hierarchical) with its per-file ignores added to ``ignore``. Raises
        ConfigError for a configuration file that cannot be used."""
        settings = self
        if self.hierarchical:
            found = nearest_config(pathlib.Path(os.path.dirname(os.path.abspath(path))))
            if found is not None and str(found) != self.config_file:
                settings = _load(found, dict(self.overrides), ())
        ignores = tuple(code for pattern, codes in settings.per_file_ignores
                        if _matches(pattern, path, settings.root) for code in codes)
        if not ignores and settings is self:
            return self
        return dataclasses.replace(settings, ignore=settings.ignore + ignores, per_file_ignores=(),
                                   hierarchical=False)


class Kind(enum.Enum):
    """What a setting's value must be."""

    BOOL = "true or false"
    SELECTORS = "a list of strings (rule codes or prefixes)"
    PATTERNS = "a list of strings (gitignore-style patterns)"
    PATHS = "a list of strings (folders)"
    PER_FILE = "a table of glob pattern = list of rule codes or prefixes"


class Key(NamedTuple):
    field: str  # the Settings field
    kind: Kind


KEYS = {
    "select": Key("select", Kind.SELECTORS), "ignore": Key("ignore", Kind.SELECTORS),
    "extend-select": Key("extend_select", Kind.SELECTORS),
    "per-file-ignores": Key("per_file_ignores", Kind.PER_FILE),
    "force-exclude": Key("force_exclude", Kind.BOOL),
    "exclude": Key("exclude", Kind.PATTERNS), "extend-exclude": Key("extend_exclude", Kind.PATTERNS),
    "unsafe-fixes": Key("unsafe_fixes", Kind.BOOL), "assume-same-dtype": Key("assume_same_dtype", Kind.BOOL),
    "include-notebooks": Key("include_notebooks", Kind.BOOL),
    "library-summaries": Key("library_summaries", Kind.BOOL), "library-paths": Key("library_paths", Kind.PATHS),
}
_FLAGS = {"select": "--select", "ignore": "--ignore", "extend_select": "--extend-select"}  # overrides that are checked like the keys
_SELECTOR = re.compile(r"IPF\d{0,3}")


def selector_problem(selector: str, known_codes: Collection[str] = ()) -> Optional[str]:
    """Why ``selector`` selects no rule (None if it is fine): ``ALL``, ``IPF``, or a prefix of a
    rule code (``IPF1`` is IPF101-IPF104, ``IPF101`` that code alone). ``known_codes``: the
    registered rule codes (``rules.registry``, above this module, passes them in); without
    them only the selector's shape is checked."""
    if selector == "ALL" or (_SELECTOR.fullmatch(selector) and (
            not known_codes or any(c.startswith(selector) for c in known_codes))):
        return None
    return (f"unknown rule selector `{selector}` (expected ALL, IPF or a prefix of a rule code "
            "such as IPF1 or IPF101)")


def _value(kind: Kind, value, known_codes: Collection[str] = ()):
    """``value`` checked against ``kind`` (selectors upper-cased); raises ValueError(why)."""
    if kind is Kind.PER_FILE:
        if not isinstance(value, dict):
            raise ValueError(f"must be {kind.value}, not {_shown(value)}")
        out = []
        for pattern, codes in value.items():
            try:
                _pattern_spec(pattern)
            except ValueError as exc:
                raise ValueError(f"bad glob pattern {pattern!r}: {exc}") from None
            try:
                out.append((pattern, _value(Kind.SELECTORS, codes, known_codes)))
            except ValueError as exc:
                raise ValueError(f"{pattern!r}: {exc}") from None
        return tuple(out)
    if kind is Kind.BOOL:
        if not isinstance(value, bool):
            raise ValueError(f"must be {kind.value}, not {_shown(value)}")
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be {kind.value}, not {_shown(value)}")
    if kind is Kind.SELECTORS:
        value = [v.strip().upper() for v in value]
        for selector in value:
            problem = selector_problem(selector, known_codes)
            if problem:
                raise ValueError(problem)
    return tuple(value)


def _shown(value) -> str:
    """A TOML value as a message names it: ``the string 'false'``, ``a table``."""
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, (list, tuple)):
        return "a list with non-string items"
    return "a table" if isinstance(value, dict) else f"a {type(value).__name__}"


_PARSED: dict = {}  # path -> (its (mtime, size, inode), its table): files are read per file checked


def _read_toml(path: pathlib.Path) -> dict:
    try:
        st = os.stat(path)
        version = (st.st_mtime_ns, st.st_size, st.st_ino)
        if path in _PARSED and _PARSED[path][0] == version:
            return _PARSED[path][1]
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        _PARSED[path] = (version, data)
        return data
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ConfigError(f"{path}: cannot read: {reason}") from exc


def _table(path: pathlib.Path, data: dict) -> Optional[dict]:
    """The [tool.inplacefix] table of a parsed pyproject.toml, None if it has none."""
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: `tool` must be a table, not {_shown(tool)}")
    table = tool.get("inplacefix")
    if table is not None and not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.inplacefix] must be a table, not {_shown(table)}")
    return table


@functools.lru_cache(maxsize=256)
def _pattern_spec(pattern: str):
    import pathspec

    if pattern.startswith("!"):  # (per-file-ignores: a file that does not match, as in Ruff)
        pattern = pattern[1:]
    if not pattern.strip():
        raise ValueError("empty pattern")
    try:
        return pathspec.GitIgnoreSpec.from_lines([pattern])
    except Exception as exc:  # pathspec's errors for a pattern it cannot compile
        raise ValueError(str(exc) or type(exc).__name__) from None


def _matches(pattern: str, path: str, root: Optional[str]) -> bool:
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, os.path.abspath(root or os.getcwd())) if absolute else absolute
    if rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):  # outside the root
        rel = os.path.basename(absolute) if "/" not in pattern.strip("/") else absolute
    hit = _pattern_spec(pattern).match_file(rel.replace(os.sep, "/"))
    return not hit if pattern.startswith("!") else hit


CONFIG_NAMES = (".inplacefix.toml", "inplacefix.toml", "pyproject.toml")


def nearest_config(start: pathlib.Path) -> Optional[pathlib.Path]:
    """The nearest configuration file at or above the folder ``start``: ``.inplacefix.toml`` or
    ``inplacefix.toml`` (always, even empty), or a pyproject.toml with a [tool.inplacefix] table.
    One met on the way that cannot be read or parsed is an error (as in Ruff)."""
    folder = os.path.realpath(start)  # (strings: this runs once per file checked)
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(folder, name)
            if os.path.lexists(candidate) and not os.path.isdir(candidate):
                path = pathlib.Path(candidate)
                if name != "pyproject.toml" or _table(path, _read_toml(path)) is not None:
                    return path
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _config_table(path: pathlib.Path) -> tuple:
    """(the settings table of a configuration file, how messages name it)."""
    data = _read_toml(path)
    if path.name == "pyproject.toml" or "tool" in data:  # (`tool` is no setting: a pyproject's layout)
        return _table(path, data) or {}, "[tool.inplacefix]"
    return data, path.name


def find_pyproject(start: pathlib.Path) -> Optional[pathlib.Path]:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.inplacefix] table.

    One met on the way that cannot be read or parsed is an error (as in Ruff): it might have
    held the settings."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = folder / "pyproject.toml"
        if os.path.lexists(candidate) and not candidate.is_dir():
            if _table(candidate, _read_toml(candidate)) is not None:
                return candidate
    return None


def load_settings(config: Optional[pathlib.Path], start: pathlib.Path,
                  known_codes: Collection[str] = (), *, config_values: Sequence[str] = (),
                  **overrides) -> Settings:
    """Settings from ``config`` (or the nearest configuration file) with non-None overrides on
    top, then ``config_values`` (``KEY = VALUE`` in TOML, from ``--config``). Raises ConfigError,
    naming the file and key (or the flag), for any value that is not valid (``known_codes``:
    the rule codes selectors must start, see ``selector_problem``). Without ``config`` the
    settings are hierarchical (:meth:`Settings.for_file`)."""
    values: dict = {}
    for key, value in overrides.items():
        if value is None or value == ():
            continue
        if key in _FLAGS:
            try:
                value = _value(Kind.SELECTORS, value, known_codes)
            except ValueError as exc:
                raise ConfigError(f"{_FLAGS[key]}: {exc}") from None
        values[key] = tuple(value) if isinstance(value, (list, tuple)) else value
    for text in config_values:
        values.update(_config_value(text, known_codes))
    start = start if start.is_dir() else start.parent
    path = config or nearest_config(start)
    settings = _load(path, values, known_codes)
    return dataclasses.replace(settings, hierarchical=config is None, overrides=tuple(sorted(values.items())))


def _load(path: Optional[pathlib.Path], overrides: dict, known_codes: Collection[str]) -> Settings:
    values: dict = {}
    if path is not None:
        table, label = _config_table(path)
        for name, value in table.items():
            if name not in KEYS:
                raise ConfigError(f"{path}: unknown setting `{name}` in {label}")
            try:
                values[KEYS[name].field] = _value(KEYS[name].kind, value, known_codes)
            except ValueError as exc:
                raise ConfigError(f"{path}: {label} {name}: {exc}") from None
        values["root"] = str(path.parent.absolute())
        values["config_file"] = str(path)
    values.update(overrides)
    return Settings(**values)


def _config_value(text: str, known_codes: Collection[str]) -> dict:
    """``--config "KEY = VALUE"``: one setting, its value in TOML."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--config {text!r}: neither a file nor `KEY = VALUE` in TOML ({exc})") from None
    if len(data) != 1:
        raise ConfigError(f"--config {text!r}: give one `KEY = VALUE` per --config")
    (name, value), = data.items()
    if name not in KEYS:
        known = ", ".join(sorted(KEYS))
        raise ConfigError(f"--config {text!r}: unknown setting `{name}` (known: {known})")
    try:
        return {KEYS[name].field: _value(KEYS[name].kind, value, known_codes)}
    except ValueError as exc:
        raise ConfigError(f"--config {name}: {exc}") from None


def split_codes(values: Optional[Sequence[str]]) -> Optional[tuple]:
    """``["IPF001,IPF002", "IPF004"]`` -> ("IPF001", "IPF002", "IPF004")."""
    if not values:
        return None
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
