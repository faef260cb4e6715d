"""libcst, imported on first use.

Checking a tree never needs libcst (the analysis runs on CPython's ``ast``); only building
fixes does. Modules that build fixes write ``from .. import _cst as cst`` and use ``cst.Name``
as usual: the first attribute looked up imports libcst (about 0.15 s), a check never pays it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type checker sees libcst's own names and types
    from libcst import *  # noqa: F401,F403


def __getattr__(name: str) -> Any:
    import libcst

    return getattr(libcst, name)
