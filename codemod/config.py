"""Settings: defaults, ``[tool.inplacefix]`` in pyproject.toml, then command-line flags."""

from __future__ import annotations

import dataclasses
import pathlib
import tomllib
from typing import Optional, Sequence

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
    root: Optional[str] = None  # folder of the pyproject.toml the settings came from

    def selects(self, code: str) -> bool:
        def hit(prefixes):
            return any(p == "ALL" or code.startswith(p) for p in prefixes)
        return hit(self.select) and not hit(self.ignore)


_KEYS = {
    "select": "select", "ignore": "ignore", "exclude": "exclude",
    "extend-exclude": "extend_exclude", "unsafe-fixes": "unsafe_fixes",
    "assume-same-dtype": "assume_same_dtype", "include-notebooks": "include_notebooks",
}


def find_pyproject(start: pathlib.Path) -> Optional[pathlib.Path]:
    """The nearest pyproject.toml at or above ``start`` that has a [tool.inplacefix] table."""
    start = start.resolve()
    for folder in [start, *start.parents] if start.is_dir() else start.parents:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            try:
                data = tomllib.loads(candidate.read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if "inplacefix" in data.get("tool", {}):
                return candidate
    return None


def load_settings(config: Optional[pathlib.Path], start: pathlib.Path, **overrides) -> Settings:
    """Settings from ``config`` (or the nearest pyproject.toml) with non-None overrides on top."""
    values: dict = {}
    path = config or find_pyproject(start)
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{path}: {exc}") from exc
        table = data.get("tool", {}).get("inplacefix", {})
        for key, value in table.items():
            if key not in _KEYS:
                raise ConfigError(f"{path}: unknown setting `{key}` in [tool.inplacefix]")
            values[_KEYS[key]] = tuple(value) if isinstance(value, list) else value
        values["root"] = str(path.parent)
    for key, value in overrides.items():
        if value is not None and value != ():
            values[key] = tuple(value) if isinstance(value, (list, tuple)) else value
    return Settings(**values)


def split_codes(values: Optional[Sequence[str]]) -> Optional[tuple]:
    """``["IPF001,IPF002", "IPF004"]`` -> ("IPF001", "IPF002", "IPF004")."""
    if not values:
        return None
    return tuple(c.strip().upper() for v in values for c in v.split(",") if c.strip())
