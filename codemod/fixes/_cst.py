"""libcst, imported on first use.

Checking a tree never needs libcst (the analysis runs on CPython's ``ast``); only building
fixes does. Modules that build fixes write ``from .. import _cst as cst`` and use ``cst.Name``
as usual: the first attribute looked up imports libcst (about 0.15 s), a check never pays it.
"""

from __future__ import annotations


def __getattr__(name: str):
    import libcst

    return getattr(libcst, name)
