"""Fixes for files CPython runs but libcst cannot parse: edit one statement, keep every other byte.

libcst's tokenizer rejects some indentation CPython accepts (a block indented with a tab under
one indented with spaces: "no matching outer block for dedent"). Such a file is still fixed:
the statement to edit (or, where that alone does not parse, the smallest statement around it)
is taken from the file by CPython's own positions, its indentation rewritten as plain spaces of
the same widths (tabs to the next multiple of 8, as CPython counts them), parsed with libcst
and edited there; the edited lines then get their original indentation bytes back (a new line
takes the bytes of an original line of the same width) and are spliced in. Lines the edit did
not touch are kept byte for byte, and so is everything outside the statement. The result must
parse with CPython, else there is no fix.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import io
import tokenize
from typing import Iterator, List, Optional, Sequence, Set, Tuple

from codemod.findings import Fix
from codemod.fixes import _cst as cst
from codemod.fixes.apply import FixApplier
from codemod.fixes.from_run import Position, Positions


def _width(prefix: str) -> int:
    """The column CPython's tokenizer gives an indentation (a tab to the next multiple of 8)."""
    column = 0
    for char in prefix:
        if char == "\t":
            column = (column // 8 + 1) * 8
        elif char == "\f":
            column = 0
        else:
            column += 1
    return column


def _split_indent(line: str) -> Tuple[str, str]:
    rest = line.lstrip(" \t\f")
    return line[: len(line) - len(rest)], rest


@dataclasses.dataclass
class Region:
    """Lines ``first`` to ``last`` (1-based, inclusive) of a file, as libcst's tree."""

    first: int
    last: int
    original: List[str]  # the region's lines as in the file, line endings kept
    normalized: List[str]  # what libcst parsed: indentation as spaces, relative to the first line
    verbatim: Set[int]  # indexes of lines inside a string that spans lines: never re-indented
    shifts: List[int]  # per line: normalized column minus original column
    where: Positions

    def position(self, line: int, column: int) -> Position:
        """A (line, character column) of the file in the region's tree."""
        k = line - self.first
        return k + 1, max(0, column + (self.shifts[k] if 0 <= k < len(self.shifts) else 0))

    def apply(self, fixes: Sequence[Fix], source_lines: List[str]) -> Optional[str]:
        """The whole file with ``fixes`` (built on this region's tree) applied; None where the
        result would not parse or the edit would re-indent a line inside a string."""
        edited = self.where.module.visit(FixApplier(fixes)).code
        new_lines = edited.splitlines(keepends=True)
        out: List[str] = []
        matcher = difflib.SequenceMatcher(None, self.normalized, new_lines, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                out += self.original[i1:i2]
                continue
            if any(i in self.verbatim for i in range(i1, i2)):
                return None
            out += [self._indented(line) for line in new_lines[j1:j2]]
        if out and self.original and not out[-1].endswith(("\n", "\r")) and self.original[-1].endswith(("\n", "\r")):
            out[-1] += _ending(self.original[-1])
        text = "".join(source_lines[: self.first - 1] + out + source_lines[self.last:])
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        return text

    def _indented(self, line: str) -> str:
        """A new or edited line with the original indentation bytes of its width."""
        prefix, rest = _split_indent(line)
        if not rest.strip():
            return rest if rest else line
        want = len(prefix)  # libcst wrote spaces
        best: Optional[Tuple[int, str]] = None  # (normalized width, original bytes)
        for i, (original, normalized) in enumerate(zip(self.original, self.normalized)):
            if i in self.verbatim or not original.strip():
                continue
            width = len(_split_indent(normalized)[0])
            if width <= want and (best is None or width > best[0]):
                best = (width, _split_indent(original)[0])
        if best is None:
            return line
        return best[1] + " " * (want - best[0]) + rest


def _ending(line: str) -> str:
    return "\r\n" if line.endswith("\r\n") else line[len(line.rstrip("\r\n")):]


def _string_lines(source: str) -> Set[int]:
    """Lines (1-based) that lie inside a string token spanning several lines, after its first."""
    inside: Set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.STRING and token.end[0] > token.start[0]:
                inside.update(range(token.start[0] + 1, token.end[0] + 1))
    except (tokenize.TokenError, SyntaxError):
        pass
    return inside


def _start(stmt: ast.stmt) -> int:
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def _blocks(stmt: ast.stmt) -> List[List[ast.stmt]]:
    found = [getattr(stmt, field, None) or [] for field in ("body", "orelse", "finalbody")]
    found += [h.body for h in getattr(stmt, "handlers", ()) or ()]
    found += [c.body for c in getattr(stmt, "cases", ()) or ()]
    return [[s for s in block if isinstance(s, ast.stmt)] for block in found]


def _enclosing(tree: ast.Module, line: int) -> List[ast.stmt]:
    """The statements holding ``line``, innermost first."""
    chain: List[ast.stmt] = []
    blocks: List[List[ast.stmt]] = [list(tree.body)]
    while blocks:
        hit = next((s for b in blocks for s in b if _start(s) <= line <= (s.end_lineno or s.lineno)), None)
        if hit is None:
            break
        chain.append(hit)
        blocks = _blocks(hit)
    return chain[::-1]


def regions(source: str, line: int) -> Iterator[Region]:
    """The regions around ``line`` that libcst parses, smallest first: the statement holding
    it, then each statement around that one (whole lines: where they hold part of another
    statement, libcst does not parse them and the next one out is tried)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    lines = source.splitlines(keepends=True)
    inside = _string_lines(source)
    for stmt in _enclosing(tree, line):
        first, last = _start(stmt), stmt.end_lineno or stmt.lineno
        region = _region(lines, first, last, inside)
        if region is not None:
            yield region


def _region(lines: List[str], first: int, last: int, inside: Set[int]) -> Optional[Region]:
    original = lines[first - 1:last]
    if not original:
        return None
    base = _width(_split_indent(original[0])[0])
    normalized, verbatim, shifts = [], set(), []
    for k, line in enumerate(original):
        if first + k in inside:
            normalized.append(line)
            verbatim.add(k)
            shifts.append(0)
            continue
        prefix, rest = _split_indent(line)
        if not rest.strip():
            normalized.append(rest)
            shifts.append(-len(prefix))
            continue
        new_prefix = " " * max(0, _width(prefix) - base)
        normalized.append(new_prefix + rest)
        shifts.append(len(new_prefix) - len(prefix))
    try:
        module = cst.parse_module("".join(normalized))
    except Exception:  # libcst's ParserSyntaxError, or its tokenizer's own
        return None
    from libcst.metadata import MetadataWrapper

    where = Positions(MetadataWrapper(module, unsafe_skip_copy=True))
    return Region(first, last, original, normalized, verbatim, shifts, where)
