"""The transform passes: one module each, found by looking, not by a list to keep in sync."""

from __future__ import annotations

import importlib
import pkgutil

from codemod.rules.base import InplacePass


def all_passes() -> list:
    """Every ``InplacePass`` subclass defined in this package, ordered by rule code."""
    for info in pkgutil.iter_modules(__path__):
        if not info.name.startswith("_") and info.name != "base":
            importlib.import_module(f"{__name__}.{info.name}")
    found = [cls for cls in _subclasses(InplacePass) if cls.CODE]
    return sorted(found, key=lambda cls: cls.CODE)


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)
