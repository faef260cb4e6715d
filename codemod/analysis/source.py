"""One file's source as the analysis sees it: CPython's ``ast`` tree, parents, and text.

``ast`` parses about 10x faster than libcst and its walk is cheap, so every file is screened
and analysed on it; libcst only parses the files that get a fix (``codemod.fixes.apply``). Columns
here are what ``ast`` gives (UTF-8 bytes); :meth:`Source.char_column` converts them to the
character columns findings report.
"""

from __future__ import annotations

import ast
import re
import warnings
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Type, Union, cast

from codemod.analysis.syntax import Located
from codemod.encoding import decode_source

# The node types the walk files by type when no list is given (the rules' registry gives one).
CANDIDATE_TYPES = (ast.AugAssign, ast.Assign, ast.Call)
# Fields that hold no node worth a parent (shared singletons such as ``Load`` and operators; a
# comparison's ``ops`` too: one ``Eq`` serves every ``==`` of a module, so it has no one parent,
# and an edit that drops the last ``==`` of the lines ``engine.reparse`` parses again took it
# from the statements kept).
_LEAF_FIELDS = {"ctx", "op", "ops", "type_comment"}
# Fields that hold no node in any version of ``ast`` (names, identifiers, flags, constants).
_SCALAR_FIELDS = {
    ast.Name: ("id",), ast.Attribute: ("attr",), ast.Constant: ("value", "kind"), ast.FunctionDef: ("name",),
    ast.AsyncFunctionDef: ("name",), ast.ClassDef: ("name",), ast.ImportFrom: ("module", "level"),
    ast.alias: ("name", "asname"), ast.arg: ("arg",), ast.keyword: ("arg",), ast.FormattedValue: ("conversion",),
    ast.AnnAssign: ("simple",), ast.comprehension: ("is_async",), ast.ExceptHandler: ("name",),
    ast.Global: ("names",), ast.Nonlocal: ("names",), ast.TypeIgnore: ("lineno", "tag"),
}
# List fields whose items are all nodes (the others, ``Dict.keys`` or ``arguments.kw_defaults``
# with their None, ``MatchClass.kwd_attrs``' names, fields of later versions, are filtered).
_NODE_LISTS = {
    "body", "orelse", "finalbody", "handlers", "decorator_list", "targets", "elts", "args", "keywords",
    "generators", "ifs", "comparators", "values", "patterns", "kwd_patterns", "cases", "items",
    "type_ignores", "posonlyargs", "kwonlyargs", "defaults", "bases",
}
# node type -> (field, its list's items are all nodes) for each field that may hold a node
_PLANS: Dict[Type[ast.AST], Tuple[Tuple[str, bool], ...]] = {}
# Node types the walk also lists in ``Tree.walk``'s order (whatever the candidate types), for
# the parts that each walked the whole module for them (the index, the call tables, use counts);
# types in one group share one list, in which they are interleaved as the walk meets them.
WALKED_GROUPS: Tuple[Tuple[Type[ast.AST], ...], ...] = (
    (ast.Name, ast.Attribute), (ast.Import, ast.ImportFrom), (ast.FunctionDef, ast.AsyncFunctionDef), (ast.Call,),
    (ast.ClassDef,), (ast.ExceptHandler, ast.MatchAs, ast.MatchStar, ast.MatchMapping), (ast.Constant,),
    (ast.Return,), (ast.Global, ast.Nonlocal), (ast.JoinedStr,))
_SPACES = re.compile(r"\s+")
_TIGHT = re.compile(r"([(\[{]) | (?=([)\]}.]))")



def parse(data: Union[str, bytes], filename: str = "<unknown>") -> ast.Module:
    """``ast.parse`` without the warnings compiling prints (``1[0]``, ``"\\d"``): they are
    about the user's code, not ours, and would be printed once per file checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        warnings.simplefilter("ignore", DeprecationWarning)
        return ast.parse(data, filename=filename)


def source_order(node: Located) -> Tuple[int, int, int, int]:
    """Sort key: by where nodes start, an outer node before the inner one starting there."""
    # typeshed's end positions are Optional (a node built by hand has none); a parsed node's
    # never are, so ``or 0`` changes no value: it tells the type checker, and unlike ``cast``
    # it costs no call (this key sorts every candidate node).
    return (node.lineno, node.col_offset, -(node.end_lineno or 0), -(node.end_col_offset or 0))


class CharSpan(NamedTuple):
    """Where a node is, with character columns (what findings report)."""

    line: int
    column: int
    end_line: int
    end_column: int


class Source:
    """A file's text, ``ast`` tree, and (from one walk) every node's parent and children and
    the candidate nodes by type. Raises SyntaxError, ValueError or UnicodeDecodeError."""

    def __init__(self, data: bytes, candidate_types: Tuple[Type[ast.AST], ...] = CANDIDATE_TYPES) -> None:
        self.text = decode_source(data)  # the cookie by PEP 263's rules, after a long first line too
        self.tree = parse(data)
        self._lines: Optional[List[bytes]] = None
        self.parents: Dict[ast.AST, ast.AST] = {}
        self.children: Dict[ast.AST, List[ast.AST]] = {}  # node -> its child nodes, in field order
        # The candidate types are node types with a position (statements, expressions...).
        self.candidates: Dict[Type[ast.AST], List[Located]] = {t: [] for t in candidate_types}
        self._walked: Optional[Dict[Type[ast.AST], List[ast.AST]]] = None
        self._index()

    def walked(self, node_type: Type[ast.AST]) -> List[ast.AST]:
        """The module's nodes of ``node_type`` (one of :data:`WALKED_GROUPS`; with the others of
        its group), in ``Tree.walk``'s order: listed by the walk that indexed the tree (or, for
        a tree ``engine.reparse`` spliced, by one walk when first asked). Not to be changed."""
        if self._walked is None:
            self._walked = walked = _walked_lists()
            todo: List[ast.AST] = [self.tree]
            kids = self.children
            while todo:
                node = todo.pop()
                listed = walked.get(node.__class__)
                if listed is not None:
                    listed.append(node)
                todo.extend(kids[node])
        return self._walked[node_type]

    def _index(self) -> None:
        """Parents and children of every node, the candidate nodes by type, and the nodes of
        :data:`WALKED_GROUPS`, in one walk (per node type, only the fields that may hold a
        node are read: :func:`_plan`)."""
        parents, kids, candidates = self.parents, self.children, self.candidates
        self._walked = walked = _walked_lists()
        filed: Dict[Type[ast.AST], Tuple[Optional[List[Any]], Optional[List[Any]]]] = {
            t: (candidates.get(t), walked.get(t)) for t in (*candidates, *walked)}
        todo: List[ast.AST] = [self.tree]
        pop, push, node_type, plans = todo.pop, todo.extend, ast.AST, _PLANS
        while todo:
            node = pop()
            cls = node.__class__
            lists = filed.get(cls)
            if lists is not None:
                found, listed = lists
                if found is not None:
                    found.append(node)
                if listed is not None:
                    listed.append(node)
            plan = plans.get(cls)
            if plan is None:
                plan = _plan(cls)
            if not plan:  # (names, constants, aliases...)
                kids[node] = []
                continue
            mine: List[ast.AST] = []
            for name, pure in plan:
                value = getattr(node, name, None)
                if value.__class__ is list:
                    if pure:
                        mine += value
                    else:
                        mine += [child for child in value if isinstance(child, node_type)]
                elif isinstance(value, node_type):
                    mine.append(value)
            for child in mine:
                parents[child] = node
            kids[node] = mine
            push(mine)
        for found in candidates.values():
            found.sort(key=source_order)

    @property
    def lines(self) -> List[bytes]:
        """The text's lines as UTF-8 bytes, the unit of ``ast``'s columns."""
        if self._lines is None:
            self._lines = self.text.encode("utf-8", "surrogatepass").splitlines(keepends=True)
        return self._lines

    def segment(self, node: Located) -> str:
        """The source text of ``node``, exactly as written."""
        lines = self.lines
        end_line, end_column = cast(int, node.end_lineno), cast(int, node.end_col_offset)  # typeshed: Optional
        first, last = node.lineno - 1, end_line - 1
        if first == last:
            return lines[first][node.col_offset:end_column].decode("utf-8", "replace")
        parts = [lines[first][node.col_offset:], *lines[first + 1:last], lines[last][:end_column]]
        return b"".join(parts).decode("utf-8", "replace")

    def snippet(self, node: Located, limit: int = 80) -> str:
        """The source of ``node`` on one line, for a message: whitespace runs (line breaks
        included) collapsed, none just inside brackets or before a dot; long ones cut."""
        text = _SPACES.sub(" ", self.segment(node).strip())
        text = _TIGHT.sub(lambda m: m.group(1) or "", text)
        return text if len(text) <= limit else text[:limit - 1] + "…"

    def char_column(self, line: int, column: int) -> int:
        """A byte column of ``line`` (1-based) as a character column."""
        if not 1 <= line <= len(self.lines):
            return column
        raw = self.lines[line - 1]
        if raw.isascii():
            return column
        return len(raw[:column].decode("utf-8", "replace"))

    def char_span(self, node: Located) -> CharSpan:
        """(line, column, end line, end column) with character columns."""
        end_line, end_column = cast(int, node.end_lineno), cast(int, node.end_col_offset)  # typeshed: Optional
        return CharSpan(node.lineno, self.char_column(node.lineno, node.col_offset),
                        end_line, self.char_column(end_line, end_column))


def _plan(cls: Type[ast.AST]) -> Tuple[Tuple[str, bool], ...]:
    """The fields of ``cls`` that may hold nodes, in field order (what the walk reads)."""
    skip = {*_LEAF_FIELDS, *_SCALAR_FIELDS.get(cls, ())}
    if cls in (ast.Import, ast.ImportFrom):
        pure = {"names"}  # (aliases; ``Global.names`` are strings)
    elif cls is ast.MatchClass:
        pure = {"patterns", "kwd_patterns"}
    else:
        pure = _NODE_LISTS
    plan = _PLANS[cls] = tuple((f, f in pure) for f in cls._fields if f not in skip)
    return plan


def _walked_lists() -> Dict[Type[ast.AST], List[ast.AST]]:
    """An empty list per group of :data:`WALKED_GROUPS`, under each type of the group."""
    lists: Dict[Type[ast.AST], List[ast.AST]] = {}
    for group in WALKED_GROUPS:
        shared: List[ast.AST] = []
        for t in group:
            lists[t] = shared
    return lists
