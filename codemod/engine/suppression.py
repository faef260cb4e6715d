"""Suppression comments: ``# inplacefix: ignore[IPF001]`` and ``# noqa: IPF001`` (bare forms
suppress every code), read from real comment tokens so a ``#`` inside a string is no comment.

File-level: a comment alone on its line, ``# inplacefix: noqa`` (every code) or ``# inplacefix:
noqa: IPF101, IPF104`` (those codes), anywhere in the file, suppresses in the whole file (as
Ruff's ``# ruff: noqa``). Other tools' file comments (``# ruff: noqa``, ``# flake8: noqa``) do not
suppress our codes: they are meant for those tools.

:func:`unused` finds the suppressions of our codes that suppressed nothing (IPF900, like
Ruff's RUF100).

A comment can only end a line that ends outside a string and without a continuation backslash.
So lines joined by a backslash, or spanned by a multi-line string, are one unit: a comment at
the end of the unit's last line applies to each of its lines (as Ruff's ``noqa`` does), and
:func:`comment_lines` says where a comment suppressing a finding goes.
"""

from __future__ import annotations

import ast
import bisect
import io
import re
import tokenize
from typing import Callable, List, NamedTuple, Optional, Tuple

ALL = "*"
_PATTERN = re.compile(
    r"#\s*(?:inplacefix:\s*ignore(?:\[(?P<ipf>[^\]]*)\])?|noqa(?::\s*(?P<noqa>[A-Za-z0-9, ]+))?)",
    re.IGNORECASE,
)
_FILE_PATTERN = re.compile(r"#\s*inplacefix:\s*noqa(?::\s*(?P<codes>[A-Za-z0-9, ]+))?\s*$", re.IGNORECASE)
FILE = 0  # the key of file-level suppressions in the table of :func:`suppressions`
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


class Directive(NamedTuple):
    """One suppression comment: where it is, what it suppresses, the lines it covers."""

    line: int
    column: int  # where the directive starts in the comment (0-based characters)
    end_column: int
    codes: frozenset  # upper-cased; {ALL} for a bare form
    lines: range  # the lines it suppresses on (``range(FILE, FILE + 1)``: the whole file)
    text: str


def _parsed(codes: Optional[str]) -> frozenset:
    return frozenset({c.strip().upper() for c in (codes or "").split(",") if c.strip()} or {ALL})


def directives(source: str) -> List[Directive]:
    """Every suppression comment of ``source``, in order (none when it cannot be tokenized)."""
    lowered = source.lower()  # (Ruff and flake8 read ``# NOQA`` too; a case-blind regex is slower)
    if "noqa" not in lowered and "inplacefix" not in lowered:
        return []
    tokens = _tokens(source)
    if tokens is None:
        return []
    unit_of = {}
    for first, last in _units(tokens):
        unit_of[last] = range(first, last + 1)
    found = []
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        line, column = tok.start
        file_level = _FILE_PATTERN.match(tok.string) if not tok.line[:column].strip() else None
        if file_level:
            found.append(Directive(line, column, column + len(tok.string.rstrip()), _parsed(file_level.group("codes")),
                                   range(FILE, FILE + 1), tok.string.strip()))
            continue
        for match in _PATTERN.finditer(tok.string):
            codes = match.group("ipf") if match.group("ipf") is not None else match.group("noqa")
            text = match.group().rstrip(", ")
            found.append(Directive(line, column + match.start(), column + match.start() + len(text), _parsed(codes),
                                   unit_of.get(line, range(line, line + 1)), text))
    return found


def suppressions(source: str) -> dict:
    """Line number -> set of suppressed codes (``ALL`` for every code); ``FILE`` (0) -> the
    codes suppressed in the whole file."""
    found: dict = {}
    for directive in directives(source):
        for line in directive.lines:
            found.setdefault(line, set()).update(directive.codes)
    return found


def unused(source: str, findings: list, selects: Callable[[str], bool],
           selects_all: bool = False) -> List[Tuple[Directive, List[str]]]:
    """The suppressions of ours that suppressed none of ``findings`` (every finding the
    selected rules made, before suppression), each with the codes it names in vain. Only
    codes this run selects (``selects``) are judged: a code left out may well fire in another
    run. Other tools' codes are theirs; a bare ``# noqa`` may be meant for another tool and is
    never reported; a bare ``# inplacefix: ignore`` or ``# inplacefix: noqa`` is, when the run
    selects every code (``selects_all``)."""
    out = []
    for directive in directives(source):
        if directive.codes == {ALL}:
            if not directive.text.lower().lstrip("# ").startswith("inplacefix"):
                continue
            used = any(directive.lines.start == FILE or _covers(directive, f) for f in findings)
            if not used and selects_all:
                out.append((directive, []))
            continue
        vain = [code for code in sorted(directive.codes) if code.startswith("IPF") and selects(code)
                and not any(f.code == code and (directive.lines.start == FILE or _covers(directive, f))
                            for f in findings)]
        if vain:
            out.append((directive, vain))
    return out


def _covers(directive: Directive, finding) -> bool:
    return any(line in directive.lines for line in range(finding.span.line, finding.span.end_line + 1))


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


def comment_line_finder(source: str, tree: ast.Module) -> Callable[[int], Optional[int]]:
    """:func:`comment_lines` for one line at a time, tokenizing only the module-level statement
    holding it (with its decorators and the statements sharing its lines; ``tree``: ``source``'s
    ``ast``): a quick fix in an editor asks for one line of a long module. A module-level
    statement starts a logical line, so its tokens are those the whole text has there; where
    that is not certain (a backslash before or at its end, a line outside every statement, its
    lines not tokenized alone) the whole text is tokenized, once. None: it cannot be."""
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    spans = [(min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]), s.end_lineno or s.lineno)
             for s in tree.body]
    whole: List[Optional[Callable[[int], int]]] = []
    regions: dict = {}

    def fallback(line: int) -> Optional[int]:
        if not whole:
            whole.append(comment_lines(source))
        return whole[0](line) if whole[0] is not None else None

    def at(line: int) -> Optional[int]:
        first = last = 0
        for start, end in spans:
            if start <= line <= end:
                first, last = start, end
                break
        if not first:
            return fallback(line)
        grown = True
        while grown:  # the statements sharing a line with those taken, until none is left
            grown = False
            for start, end in spans:
                if start <= last and end >= first and (start < first or end > last):
                    first, last, grown = min(first, start), max(last, end), True
        if (first, last) not in regions:
            before = lines[first - 2] if first >= 2 else ""
            found = None
            if not before.endswith("\\") and not lines[last - 1].endswith("\\") and last <= len(lines):
                tokens = _tokens("\n".join(lines[first - 1:last]) + "\n")
                if tokens is not None:
                    found = [(a + first - 1, b + first - 1) for a, b in _units(tokens)]
            regions[first, last] = found
        units = regions[first, last]
        if units is None:
            return fallback(line)
        for a, b in units:
            if a <= line <= b:
                return b
        return line

    return at


def is_suppressed(table: dict, code: str, first_line: int, last_line: int) -> bool:
    for line in (FILE, *range(first_line, last_line + 1)):
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
    rest = line[match.end(2):].strip() if match else ""
    if match and (not rest or rest.startswith("#")):  # (text after the codes: a new comment, not a merge)
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
