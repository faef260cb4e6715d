"""Unified diffs of a file's text before and after a rewrite (review output, repair)."""

from __future__ import annotations

import difflib


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True),
        fromfile=f"a/{path.lstrip('/')}", tofile=f"b/{path.lstrip('/')}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)

