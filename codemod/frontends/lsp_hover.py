"""Hover on a rule code in a suppression comment (``# noqa: IPF101``, ``# inplacefix:
ignore[IPF104]``): the rule's name and summary, and a link to its documentation page."""

from __future__ import annotations

import re
from typing import Optional, Tuple

from codemod.rules.registry import code_url, table

_COMMENT = re.compile(r"#\s*(?:noqa:\s*[A-Za-z0-9, ]+|inplacefix:\s*ignore\[[^\]]*\])", re.IGNORECASE)
_CODE = re.compile(r"[A-Za-z]+[0-9]+")


def code_at(line: str, column: int) -> Optional[Tuple[str, int, int]]:
    """The rule code of a suppression comment under ``column`` (a character of ``line``):
    (code, its start, its end), or None (no comment there, or not one of our codes)."""
    for comment in _COMMENT.finditer(line):
        for match in _CODE.finditer(line, comment.start(), comment.end()):
            if match.start() <= column <= match.end() and match.group().lower() != "noqa":
                code = match.group().upper()
                if code in table():
                    return code, match.start(), match.end()
    return None


def hover_text(code: str) -> str:
    """Markdown: the code and name, the summary, the documentation link."""
    info = table()[code]
    return f"**{code}** `{info.name}`\n\n{info.summary}\n\n[Documentation]({code_url(code)})"
