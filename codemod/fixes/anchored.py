"""Positions of libcst's nodes in the statements that hold given lines, not of the whole tree.

libcst positions nodes by printing the whole tree while counting lines and columns
(``PositionProvider``); for a function with one fix that prints every statement of it, and on
torch's sources it was most of ``fix``'s time spent in libcst. Here CPython's ``ast`` of the
same text says which statement of each block holds a line: the blocks are walked down, and
only the statement holding the line is printed,
with the state the whole print would have when it reaches it: the line it starts on (from the
``ast``, less the comment lines libcst gives it before its first token) and the indentation of
the blocks around it (the walk goes down into the first block of any compound statement: a
function's or class's body, an ``if``'s, a loop's, a ``with``'s, a ``try``'s). Printing is the
same from there on, so the positions are the ones the whole print gives. Statements pair up by
kind, the printed statement's first and last line are checked against the ``ast`` and its
printed text against the lines it was taken for; any mismatch (a pairing that does not hold, an unexpected layout) gives None: the caller then
positions the whole tree as before.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union, cast

import libcst as cst
from libcst.metadata import CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

Block = Union[cst.Module, cst.IndentedBlock]


class _Holder:
    """What ``PositionProvidingCodegenState`` writes to (a provider's ``_computed``)."""

    def __init__(self) -> None:
        self._computed: Dict[cst.CSTNode, CodeRange] = {}


class Anchored:
    """The positions of the nodes of the statements holding some lines, the blocks walked
    down to reach them (``path``: ids of the nodes entered around them) and where every
    statement of those blocks sits (``blocks``)."""

    def __init__(self) -> None:
        self.positions: Dict[cst.CSTNode, CodeRange] = {}
        self.path: Set[int] = set()
        self.blocks: Dict[int, Tuple[Block, int]] = {}


def _first(stmt: ast.stmt) -> int:
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def _kind(node: ast.stmt) -> str:
    """The name libcst gives the statement CPython's ``node`` is (``async`` ones share it)."""
    name = type(node).__name__
    return "Del" if name == "Delete" else name[5:] if name.startswith("Async") else name


def _pairs(body: Sequence[cst.BaseStatement], stmts: Sequence[ast.stmt]
           ) -> Optional[List[Tuple[cst.BaseStatement, List[ast.stmt]]]]:
    """libcst's statements of a block with CPython's (a line of small statements holds one
    ``ast`` statement per small statement, of the same kind); None where they do not pair up."""
    out: List[Tuple[cst.BaseStatement, List[ast.stmt]]] = []
    i = 0
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            group = list(stmts[i:i + len(stmt.body)])
            if len(group) != len(stmt.body):
                return None
            if any(type(small).__name__ != _kind(s) for small, s in zip(stmt.body, group)):
                return None
        elif isinstance(stmt, cst.BaseCompoundStatement):
            group = list(stmts[i:i + 1])
            if not group or type(stmt).__name__ != _kind(group[0]):
                return None
        else:
            return None
        i += len(group)
        out.append((stmt, group))
    return out if i == len(stmts) else None


class _Walk:
    """One module's walk: its default indentation and line break are the print's."""

    def __init__(self, module: cst.Module, shift: int, text: Sequence[str], out: Anchored) -> None:
        self.indent, self.newline = module.default_indent, module.default_newline
        self.shift, self.text, self.out = shift, text, out

    def walk(self, block: Block, body: Sequence[cst.BaseStatement], stmts: Sequence[ast.stmt],
             lines: List[int], indents: List[str]) -> bool:
        """Position the statements of ``body`` holding ``lines``, walking down into the first
        block of the compound statements that hold them there."""
        pairs = _pairs(body, stmts)
        if pairs is None:
            return False
        out, shift = self.out, self.shift
        for i, (stmt, _) in enumerate(pairs):
            out.blocks[id(stmt)] = (block, i)
        chosen: Dict[int, List[int]] = {}  # index of a pair -> the lines it holds
        for line in lines:
            found = next((k for k, (_, group) in enumerate(pairs)
                          if _first(group[0]) - shift <= line <= max(g.end_lineno or 0 for g in group) - shift),
                         None)
            if found is None:
                return False
            chosen.setdefault(found, []).append(line)
        for k, held in chosen.items():
            stmt, group = pairs[k]
            node = group[0]
            inner = getattr(stmt, "body", None)
            below = getattr(node, "body", None)
            if (isinstance(inner, cst.IndentedBlock) and isinstance(below, list) and below
                    and all(_first(below[0]) - shift <= line <= (below[-1].end_lineno or 0) - shift
                            for line in held)):
                out.path.update((id(stmt), id(inner)))
                indent = self.indent if inner.indent is None else inner.indent
                if not self.walk(inner, inner.body, below, held, indents + [indent]):
                    return False
            elif not self.position(stmt, group, indents):
                return False
        return True

    def position(self, stmt: cst.BaseStatement, group: List[ast.stmt], indents: List[str]) -> bool:
        """Print ``stmt`` as the whole print reaches it, recording its nodes' positions; False
        where its start or end does not fall where the ``ast`` has it."""
        node = group[0]
        before = len(getattr(stmt, "leading_lines", ()))  # (every statement has them)
        decorators = getattr(stmt, "decorators", ())
        if decorators:
            before += len(decorators[0].leading_lines)
        start = _first(node) - self.shift - before
        if start < 1:
            return False
        holder = _Holder()
        state = PositionProvidingCodegenState(default_indent=self.indent, default_newline=self.newline,
                                              provider=holder)  # type: ignore[arg-type]
        state.line, state.column = start, 0
        state.indent_tokens = list(indents)
        stmt._codegen(state)
        computed = holder._computed
        simple = isinstance(stmt, cst.SimpleStatementLine)
        smalls = cast(cst.SimpleStatementLine, stmt).body if simple else ()
        head = computed.get(smalls[0] if simple else stmt)  # libcst's syntactic start: CPython's lineno
        tail = computed.get(smalls[-1] if simple else stmt)  # and end: CPython's end_lineno
        last = (group[-1] if simple else node).end_lineno
        if head is None or tail is None or head.start.line != node.lineno - self.shift \
                or last is None or tail.end.line != last - self.shift:
            return False
        printed, there = "".join(state.tokens), "".join(self.text[start - 1:state.line - 1])
        if printed != there and printed != there + self.newline:  # (no line break at the end)
            return False  # not the lines of the text it was taken for
        self.out.positions.update(holder._computed)
        return True


def anchored(module: cst.Module, stmts: Sequence[ast.stmt], lines: Set[int], shift: int,
             text: Sequence[str]) -> Optional[Anchored]:
    """The positions in ``module`` (libcst's tree of ``text``, given as its lines with their
    breaks, whose ``ast`` statements are ``stmts``, numbered ``shift`` lines further down) of the
    nodes of the statements holding ``lines`` (lines of ``module``); None where that cannot be
    worked out safely."""
    out = Anchored()
    out.path.add(id(module))
    if not _Walk(module, shift, text, out).walk(module, module.body, stmts, sorted(lines), []):
        return None
    return out
