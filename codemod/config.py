"""Settings: defaults, ``[tool.inplacefix]`` in pyproject.toml, then command-line flags."""

from __future__ import annotations

import dataclasses
import enum
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
    # The code may run in other dtypes than its files show (a library that others run under
    # autocast or `.half()`): the dtype model never calls an op's rewrite dtype-safe.
    mixed_dtypes: bool = False
    include_notebooks: bool = True
    # Summaries of callees imported from installed libraries (engine.libraries), and folders
    # searched for them before the project's virtualenv and the interpreter's sys.path.
    library_summaries: bool = True
    library_paths: tuple = ()
    root: Optional[str] = None  # folder of the pyproject.toml the settings came from

    def selects(self, code: str) -> bool:
        """A selector (checked by ``selector_problem``) is ``ALL`` or a prefix of the codes it
        selects; a code both selected and ignored is ignored."""

        def hit(prefixes):
            return any(p == "ALL" or code.startswith(p) for p in prefixes)
        return hit(self.select) and not hit(self.ignore)


class Kind(enum.Enum):
    """What a setting's value must be."""

    BOOL = "true or false"
    SELECTORS = "a list of strings (rule codes or prefixes)"
    PATTERNS = "a list of strings (gitignore-style patterns)"
    PATHS = "a list of strings (folders)"


class Key(NamedTuple):
    field: str  # the Settings field
    kind: Kind


KEYS = {
    "select": Key("select", Kind.SELECTORS), "ignore": Key("ignore", Kind.SELECTORS),
    "exclude": Key("exclude", Kind.PATTERNS), "extend-exclude": Key("extend_exclude", Kind.PATTERNS),
    "unsafe-fixes": Key("unsafe_fixes", Kind.BOOL), "assume-same-dtype": Key("assume_same_dtype", Kind.BOOL),
    "mixed-dtypes": Key("mixed_dtypes", Kind.BOOL),
    "include-notebooks": Key("include_notebooks", Kind.BOOL),
    "library-summaries": Key("library_summaries", Kind.BOOL), "library-paths": Key("library_paths", Kind.PATHS),
}
_FLAGS = {"select": "--select", "ignore": "--ignore"}  # overrides that are checked like the keys
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


def _read_toml(path: pathlib.Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
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
                  known_codes: Collection[str] = (), **overrides) -> Settings:
    """Settings from ``config`` (or the nearest pyproject.toml) with non-None overrides on top.
    Raises ConfigError, naming the file and key (or the flag), for any value that is not valid
    (``known_codes``: the rule codes selectors must start, see ``selector_problem``)."""
    values: dict = {}
    path = config or find_pyproject(start)
    if path is not None:
        table = _table(path, _read_toml(path)) or {}
        for name, value in table.items():
            if name not in KEYS:
                raise ConfigError(f"{path}: unknown setting `{name}` in [tool.inplacefix]")
            try:
                values[KEYS[name].field] = _value(KEYS[name].kind, value, known_codes)
            except ValueError as exc:
                raise ConfigError(f"{path}: [tool.inplacefix] {name}: {exc}") from None
        values["root"] = str(path.parent)
    for key, value in overrides.items():
        if value is None or value == ():
            continue
        if key in _FLAGS:
            try:
                value = _value(Kind.SELECTORS, value, known_codes)
            except ValueError as exc:
                raise ConfigError(f"{_FLAGS[key]}: {exc}") from None
        values[key] = tuple(value) if isinstance(value, (list, tuple)) else value
    return Settings(**values)


def split_codes(values: Optional[Sequence[str]]) -> Optional[tuple]:
    """``["IPF001,IPF002", "IPF004"]`` -> ("IPF001", "IPF002", "IPF004")."""
    if not values:
        return None
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
