"""Unified diffs of a file's text before and after a rewrite (review output, repair).

Lines are split where ``git apply`` and ``patch`` split them: at ``\\n`` only. ``str.splitlines``
also splits at ``\\r``, ``\\f``, ``\\v``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029: a
diff made of those lines has context lines that are no line of the file, and neither tool takes
it. A ``\\r`` stays inside its line (a CR-only file is one line to them, and to this diff).
"""

from __future__ import annotations

import difflib
import re

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


def patch_lines(text: str) -> list:
    """``text``'s lines as patch tools count them: each ends at ``\\n`` (kept), the last maybe not."""
    return _LINE.findall(text)


def unified_diff(path: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(
        patch_lines(before), patch_lines(after),
        fromfile=f"a/{path.lstrip('/')}", tofile=f"b/{path.lstrip('/')}",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)

