"""Suppression comments: ``# inplacefix: ignore[IPF001]`` and ``# noqa: IPF001`` (bare forms
suppress every code), read from real comment tokens so a ``#`` inside a string is no comment.

A comment can only end a line that ends outside a string and without a continuation backslash.
So lines joined by a backslash, or spanned by a multi-line string, are one unit: a comment at
the end of the unit's last line applies to each of its lines (as Ruff's ``noqa`` does), and
:func:`comment_lines` says where a comment suppressing a finding goes.
"""

from __future__ import annotations

import bisect
import io
import re
import tokenize
from typing import Callable, List, Optional, Tuple

ALL = "*"
_PATTERN = re.compile(
    r"#\s*(?:inplacefix:\s*ignore(?:\[(?P<ipf>[^\]]*)\])?|noqa(?::\s*(?P<noqa>[A-Za-z0-9, ]+))?)",
    re.IGNORECASE,
)
_BREAKS = (tokenize.NEWLINE, tokenize.NL)


def _tokens(source: str) -> Optional[list]:
    """The tokens, on lines counted as ``ast`` counts them: a lone ``\\r`` ends a line too (the
    ``tokenize`` module reads a CR-only file as one line)."""
    if "\r" in source:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    try:
        return list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def _units(tokens: list) -> List[Tuple[int, int]]:
    """(first, last) line of each run of lines joined by a backslash or spanned by a string."""
    spans = []
    previous = None
    for tok in tokens:
        if tok.end[0] > tok.start[0]:
            spans.append((tok.start[0], tok.end[0]))  # a string over several lines
        if previous is not None and tok.start[0] > previous.end[0] and previous.type not in _BREAKS \
                and tok.type not in (tokenize.ENDMARKER, tokenize.DEDENT):
            spans.append((previous.end[0], tok.start[0]))  # no line break token between: a backslash
        if tok.type not in (tokenize.INDENT, tokenize.DEDENT):
            previous = tok
    merged: List[Tuple[int, int]] = []
    for first, last in sorted(spans):
        if merged and first <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def suppressions(source: str) -> dict:
    """Line number -> set of suppressed codes (``ALL`` for every code)."""
    found: dict = {}
    if "noqa" not in source and "inplacefix" not in source:
        return found
    tokens = _tokens(source)
    if tokens is None:
        return found
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        for match in _PATTERN.finditer(tok.string):
            codes = match.group("ipf") if match.group("ipf") is not None else match.group("noqa")
            parsed = {c.strip().upper() for c in (codes or "").split(",") if c.strip()}
            found.setdefault(tok.start[0], set()).update(parsed or {ALL})
    if found:
        for first, last in _units(tokens):
            if last in found:
                for line in range(first, last):
                    found.setdefault(line, set()).update(found[last])
    return found


def comment_lines(source: str) -> Optional[Callable[[int], int]]:
    """Line -> the line whose end takes a comment that suppresses findings on it: the last line
    of the run of lines joined to it by backslashes or multi-line strings (None: ``source``
    cannot be tokenized)."""
    tokens = _tokens(source)
    if tokens is None:
        return None
    units = _units(tokens)
    firsts = [first for first, _ in units]

    def at(line: int) -> int:
        index = bisect.bisect_right(firsts, line) - 1
        if index >= 0 and units[index][0] <= line <= units[index][1]:
            return units[index][1]
        return line

    return at


def is_suppressed(table: dict, code: str, first_line: int, last_line: int) -> bool:
    for line in range(first_line, last_line + 1):
        codes = table.get(line)
        if codes and (ALL in codes or code in codes):
            return True
    return False


_NOQA_CODES = re.compile(r"(#\s*noqa:\s*)([A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*)", re.IGNORECASE)


def with_noqa(line: str, codes) -> str:
    """``line`` (without its line ending) with ``codes`` suppressed by its comment: merged into a
    ``# noqa: A, B`` already there, else ``  # noqa: CODES`` added after any other comment."""
    codes = sorted(set(codes))
    match = _NOQA_CODES.search(line)
    if match:
        have = [c.strip().upper() for c in match.group(2).split(",")]
        merged = have + [c for c in codes if c not in have]
        return line[:match.start(2)] + ", ".join(merged) + line[match.end(2):]
    return line.rstrip() + "  # noqa: " + ", ".join(codes)


def add_noqa(path, findings) -> int:
    """Add ``# noqa: CODE`` for ``findings`` ((line, code) pairs) to the file at ``path``, each
    on the line whose end takes a comment for its line (:func:`comment_lines`); written
    atomically, in the file's encoding and line endings. Returns how many lines changed."""
    from codemod.encoding import source_encoding
    from codemod.engine.fileio import read_snapshot, write_atomic

    snapshot = read_snapshot(path)
    data = snapshot.data
    encoding = source_encoding(data)
    text = data.decode(encoding, "surrogateescape")
    at = comment_lines(text)
    if at is None:
        raise ValueError("cannot tokenize the file")
    wanted: dict = {}
    for line, code in findings:
        wanted.setdefault(at(line), set()).add(code)
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)  # the lines ast counts
    changed = 0
    for number, codes in wanted.items():
        if not 1 <= number <= len(lines):
            continue
        old = lines[number - 1]
        body = old.rstrip("\r\n")
        new = with_noqa(body, codes) + old[len(body):]
        if new != old:
            lines[number - 1] = new
            changed += 1
    if changed:
        out = "".join(lines)
        if encoding == "utf-8-sig":
            bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
            out_bytes = bom + out.encode("utf-8", "surrogateescape")
        else:
            out_bytes = out.encode(encoding, "surrogateescape")
        write_atomic(path, out_bytes, snapshot)
    return changed
