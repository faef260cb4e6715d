"""Suppression comments: ``# inplacefix: ignore[IPF001]`` and ``# noqa: IPF001`` (bare forms
suppress every code), read from real comment tokens so a ``#`` inside a string is no comment."""

from __future__ import annotations

import io
import re
import tokenize

ALL = "*"
_PATTERN = re.compile(
    r"#\s*(?:inplacefix:\s*ignore(?:\[(?P<ipf>[^\]]*)\])?|noqa(?::\s*(?P<noqa>[A-Za-z0-9, ]+))?)",
    re.IGNORECASE,
)


def suppressions(source: str) -> dict:
    """Line number -> set of suppressed codes (``ALL`` for every code)."""
    found: dict = {}
    if "noqa" not in source and "inplacefix" not in source:
        return found
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return found
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        for match in _PATTERN.finditer(tok.string):
            codes = match.group("ipf") if match.group("ipf") is not None else match.group("noqa")
            parsed = {c.strip().upper() for c in (codes or "").split(",") if c.strip()}
            found.setdefault(tok.start[0], set()).update(parsed or {ALL})
    return found


def is_suppressed(table: dict, code: str, first_line: int, last_line: int) -> bool:
    for line in range(first_line, last_line + 1):
        codes = table.get(line)
        if codes and (ALL in codes or code in codes):
            return True
    return False
