"""Building and applying fixes on libcst's tree: the only place a file is parsed by libcst.

The passes decide on CPython's ``ast``; a finding with a fix carries a ``Plan`` (where the
libcst node it rewrites starts, and how to build the rewrite from it). Here a file that has
such findings is parsed by libcst once, each plan's node is found by its position, its
:class:`~codemod.findings.Fix` is built, and the chosen fixes are applied in one traversal.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from typing import (
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Protocol,
    Sequence,
    Set,
    Tuple,
    Union,
    cast,
)

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from codemod import debug
from codemod.findings import Edit, Finding, Fix, Span
from codemod.fixes import real_text
from codemod.fixes.anchored import Anchored
from codemod.fixes.site import Anchor, Block, FixSite, Line, Plan

Lines = Tuple[int, int]  # (first, last) line, 1-based, inclusive


class ParsedSource(Protocol):
    """What :func:`statement_edits` reads of a file (the analysis' ``Source`` has it; the
    fixes do not import the analysis)."""

    tree: ast.Module

    @property
    def lines(self) -> List[bytes]: ...


class FixApplier(cst.CSTTransformer):
    """Replaces nodes, by identity of the original, with what their fixes build.

    Several fixes may target one node (two insertions into one line); they run in descending
    ``Fix.order`` so that positional insertions do not shift each other.
    """

    def __init__(self, fixes: Iterable[Fix]) -> None:
        super().__init__()
        self._fixes: Dict[int, List[Fix]] = {}  # id of the original node -> its fixes
        seen = set()
        for fix in _with_companions(fixes):
            if id(fix) in seen:
                continue  # one fix shared by several findings (one wrap for a run of updates)
            seen.add(id(fix))
            self._fixes.setdefault(id(fix.node), []).append(fix)
        for group in self._fixes.values():
            group.sort(key=lambda f: f.order, reverse=True)

    # libcst declares the result of the same type as the node; a fix may return another
    # (``x += y`` -> ``x = x + y``), which libcst accepts where the parent's field allows it.
    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]:
        result: Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]] = updated_node
        for fix in self._fixes.get(id(original_node), ()):
            if not isinstance(result, cst.CSTNode):
                break  # a flattened result takes no further edits; such a fix is built last
            result = fix.build(result)
        return result


class _Pruned(FixApplier):
    """A :class:`FixApplier` that enters only the nodes whose span (``positions``) holds the
    span of some fix's node, and counts the fixed nodes it reached. libcst rebuilds every node
    a transformer enters; a function's fixes touch a few of its statements."""

    def __init__(self, fixes: Iterable[Fix], positions: Mapping[cst.CSTNode, CodeRange],
                 path: Optional[Set[int]] = None) -> None:
        super().__init__(fixes)
        self._positions = positions
        self._path = path  # where only some statements are positioned: the nodes around them
        self.reached: Set[int] = set()  # ids of the fixed nodes reached
        spans: List[Tuple[Tuple[int, int], Tuple[int, int]]] = []
        for group in self._fixes.values():
            found = positions.get(group[0].node)
            if found is None and path is not None and id(group[0].node) in path:
                continue  # a node around the positioned statements: always entered
            if found is None:  # (not a node of this tree): enter every node
                spans = []
                self._positions = {}
                self._path = None
                break
            spans.append(((found.start.line, found.start.column), (found.end.line, found.end.column)))
        self._spans = spans

    def on_visit(self, node: cst.CSTNode) -> bool:
        found = self._positions.get(node)
        if found is None:
            return self._path is None or id(node) in self._path
        start, end = (found.start.line, found.start.column), (found.end.line, found.end.column)
        return any(start <= a and b <= end for a, b in self._spans)

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel[cst.CSTNode]]:
        if id(original_node) in self._fixes:
            self.reached.add(id(original_node))
        return super().on_leave(original_node, updated_node)


def applied(site: "_Site", fixes: List[Fix]) -> cst.Module:
    """``site``'s module with ``fixes`` applied (as ``module.visit(FixApplier(fixes))``),
    entering only the nodes that hold a fix's node; where some fixed node was not reached
    (a node outside its parent's span), the whole tree is visited again as before."""
    pruned = _Pruned(fixes, site.positions, site.path)
    result = site.module.visit(pruned)
    if len(pruned.reached) == len(pruned._fixes):
        return result
    return site.module.visit(FixApplier(fixes))


def _with_companions(fixes: Iterable[Fix]) -> Iterator[Fix]:
    """The fixes and the companions they bring (``Fix.also``: an import a wrap needs)."""
    for fix in fixes:
        yield fix
        yield from fix.also


class _Site(FixSite):
    """libcst's tree of one file, indexed by where nodes start."""

    def __init__(self, wrapper: MetadataWrapper, only: Optional[Anchored] = None) -> None:
        """``only``: the positions of the statements the fixes are in (``anchored``); without
        it every node of the tree is positioned."""
        self._module = wrapper.module
        self._junk = junk_of(wrapper)
        self._starts: Dict[Anchor, List[cst.CSTNode]] = {}
        self._containers: Dict[int, Tuple[Line, int]] = {}  # id of a small statement -> where
        self._blocks: Dict[int, Tuple[Block, int]] = {}  # id of a statement -> where
        self.path: Optional[Set[int]] = None  # ids of the nodes around the positioned ones
        if only is None:
            for i, stmt in enumerate(self._module.body):
                self._blocks[id(stmt)] = (self._module, i)
            self.positions = wrapper.resolve(PositionProvider)  # node -> its span
        else:
            self._blocks.update(only.blocks)
            self.positions, self.path = only.positions, only.path
        for node, rng in self.positions.items():
            self._starts.setdefault((rng.start.line, rng.start.column), []).append(node)
            if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for i, small in enumerate(node.body):
                    self._containers[id(small)] = (node, i)
            elif isinstance(node, cst.IndentedBlock):
                for i, inner in enumerate(node.body):
                    self._blocks[id(inner)] = (node, i)

    @property
    def module(self) -> cst.Module:
        return self._module

    @property
    def junk(self) -> real_text.Junk:
        return self._junk

    def find(self, anchor: Anchor, type_name: str) -> Optional[cst.CSTNode]:
        kind = getattr(cst, type_name)
        if self._junk:  # columns of the real text, on a line libcst got without its form feed
            anchor = (anchor[0], real_text.shift(self._junk, *anchor))
        return next((n for n in self._starts.get(anchor, ()) if isinstance(n, kind)), None)

    def container(self, stmt: cst.BaseSmallStatement) -> Tuple[Line, int]:
        return self._containers[id(stmt)]

    def block(self, stmt: cst.BaseStatement) -> Tuple[Block, int]:
        return self._blocks[id(stmt)]


class _Wrapper(MetadataWrapper):
    """libcst's tree of a text it was given without the form feeds at the start of some of its
    lines (``real_text``): ``junk`` says what was taken off which line."""

    __slots__ = ["junk"]

    def __init__(self, module: cst.Module, junk: real_text.Junk) -> None:
        super().__init__(module, unsafe_skip_copy=True)
        self.junk = junk


def parse(data: bytes) -> MetadataWrapper:
    """libcst's tree of ``data`` (raises libcst's ParserSyntaxError)."""
    cut, junk = real_text.take_off(data)
    if junk:
        return _Wrapper(cst.parse_module(cut), junk)
    return MetadataWrapper(cst.parse_module(data), unsafe_skip_copy=True)  # fresh: no copy needed


def junk_of(wrapper: MetadataWrapper) -> real_text.Junk:
    """What :func:`parse` took off the lines of the text it gave libcst (nearly always nothing)."""
    return wrapper.junk if isinstance(wrapper, _Wrapper) else {}


def build_fixes(wrapper: MetadataWrapper, findings: Iterable[Finding]) -> None:
    """Build the ``Fix`` of every finding that has a plan; a plan whose node cannot be found
    (it should not happen) leaves its finding without a fix rather than guessing."""
    site = None
    built: Dict[int, Optional[Fix]] = {}  # a plan shared by several findings is built once
    for finding in findings:
        plan = finding.plan
        if plan is None or finding.fix is not None:
            continue
        site = site or _Site(wrapper)
        node = site.find(plan.anchor, plan.node_type)
        if id(plan) not in built:
            built[id(plan)] = plan.make(node, site) if node is not None else None
        fix = built[id(plan)]
        if fix is None:
            _dropped(finding, "no libcst node" if node is None else "the plan built no fix")
            finding.plan, finding.fixable = None, False
            continue
        finding.fix, finding.fix_title = fix, fix.title


def _dropped(finding: Finding, why: str) -> None:
    """A plan that built no fix (which should not happen) is dropped; ``-v`` says so."""
    if debug.enabled():
        plan = finding.plan
        where = f"{plan.anchor[0]}:{plan.anchor[1]} {plan.node_type}" if plan is not None else "?"
        print(f"debug: dropped the fix plan of {finding.code} at {where}: {why}", file=sys.stderr)


def statement_edits(source: ParsedSource, findings: Iterable[Finding]) -> None:
    """Give each finding its title and one-fix edit, parsing with libcst only the top-level
    statement its fix is in, once for all the findings there (an editor asks for one fix at a
    time; parsing and positioning a whole 1,000-line file costs about 0.4 s, one function a
    few milliseconds)."""
    # (first, last) line -> (site, text), or None where libcst cannot parse it
    parsed: Dict[Lines, Optional[Tuple[_Site, str]]] = {}
    for finding in findings:
        plan = cast(Plan, finding.plan)  # callers pass findings with a plan (engine: add_edits)
        if plan.whole_module:  # it edits the module too (adds an import): parse it all
            first, last = 1, len(source.lines)
        else:
            first, last = _top_level_lines(source.tree, plan.anchor[0])
        if (first, last) not in parsed:
            raw = b"".join(source.lines[first - 1:last])
            try:
                parsed[first, last] = (_Site(parse(raw)), raw.decode("utf-8"))
            except cst.ParserSyntaxError:
                parsed[first, last] = None
        entry = parsed[first, last]
        if entry is None:
            _dropped(finding, "libcst cannot parse its top-level statement")
            finding.plan, finding.fixable = None, False
            continue
        site, text = entry
        junk = site.junk
        node = site.find((plan.anchor[0] - first + 1, plan.anchor[1]), plan.node_type)
        fix = plan.make(node, site) if node is not None else None
        if fix is None:
            _dropped(finding, "no libcst node" if node is None else "the plan built no fix")
            finding.plan, finding.fixable = None, False
            continue
        finding.fix_title = fix.title
        edit = single_edit(site.module, fix, text, junk, site)
        s = edit.span
        finding.edit = Edit(Span(s.line + first - 1, s.column, s.end_line + first - 1, s.end_column), edit.content)


def _top_level_lines(tree: ast.Module, line: int) -> Lines:
    """(first, last) line of the module-level statement(s) holding ``line``, decorators and
    statements sharing its lines (``a = 1; b = 2``) included."""
    body = tree.body
    first = last = line
    for stmt in body:
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        end = cast(int, stmt.end_lineno)  # typeshed: Optional (hand-built nodes); parsed: set
        if start <= line <= end:
            first, last = start, end
            break
    for stmt in body:  # others on those lines
        end = cast(int, stmt.end_lineno)
        if stmt.lineno <= last and end >= first:
            first, last = min(first, stmt.lineno), max(last, end)
    return first, last


def apply_fixes(module: cst.Module, fixes: Sequence[Fix], path: str,
                junk: Optional[real_text.Junk] = None) -> Tuple[str, bytes]:
    """(new text, new bytes) with ``fixes`` applied in one traversal; raises ``SyntaxError``
    if the result would not parse (a bug of ours: it is never written). ``junk``: what
    :func:`parse` took off the lines (``junk_of``), put back."""
    fixed_module = module.visit(FixApplier(fixes))
    fixed = fixed_module.code
    _must_parse(fixed, path)
    if junk:
        fixed = real_text.put_back(junk, module.code, fixed)
        return fixed, fixed.encode(module.encoding)
    return fixed, fixed_module.bytes


def _must_parse(text: str, path: str) -> None:
    """Raise ``SyntaxError`` unless CPython parses ``text`` (its warnings about the user's code,
    such as ``"\\d"``, are not ours to print)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ast.parse(text, filename=path)


def single_edit(module: cst.Module, fix: Fix, before: Optional[str] = None,
                junk: Optional[real_text.Junk] = None, site: Optional[_Site] = None) -> Edit:
    """The smallest text replacement that applies this one fix to the original text
    (``before``: that text, when the caller has it: libcst gives back what it parsed;
    ``junk``: what :func:`parse` took off its lines, put back; ``site``: the module's, whose
    positions let the fix be applied entering only the nodes that hold it, :func:`applied`)."""
    after = (applied(site, [fix]) if site is not None and site.module is module
             else module.visit(FixApplier([fix]))).code
    if junk:
        after = real_text.put_back(junk, module.code, after)
        if before is None:
            before = real_text.put_back(junk, module.code, module.code)
    before = module.code if before is None else before
    if before.endswith("\r") and not after.endswith(("\r", "\n")):
        after += "\r"  # libcst drops the last line break of a CR-only text
    return text_edit(before, after)


def text_edit(before: str, after: str) -> Edit:
    """The one replacement, of whole lines, that turns ``before`` into ``after``."""
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end_b, end_a = len(before), len(after)
    while end_b > start and end_a > start and before[end_b - 1] == after[end_a - 1]:
        end_b -= 1
        end_a -= 1
    # Whole lines read better in an editor's preview than a few changed characters.
    start = _line_start(before, start)
    next_break = _BREAK.search(before, end_b)
    grow = (len(before) if next_break is None else next_break.start()) - end_b
    return Edit(_span(before, start, end_b + grow), after[start:end_a + grow])


_BREAK = re.compile(r"\r\n|\r|\n")  # what ends a line, as Python and editors count them


def _line_start(text: str, offset: int) -> int:
    """Where the line holding ``offset`` starts (after the last break before it)."""
    last = 0
    for m in _BREAK.finditer(text, 0, offset):
        last = m.end()
    return last


def _span(text: str, start: int, end: int) -> Span:
    """Lines counted at ``\\n``, ``\\r\\n`` and a lone ``\\r`` (a CR-only file has one line per ``\\r``)."""
    def line_col(offset: int) -> Tuple[int, int]:
        breaks = list(_BREAK.finditer(text, 0, offset))
        return len(breaks) + 1, offset - (breaks[-1].end() if breaks else 0)

    (l1, c1), (l2, c2) = line_col(start), line_col(end)
    return Span(l1, c1, l2, c2)


def apply_edit(text: str, edit: Edit) -> str:
    """``text`` with ``edit`` made (its lines counted as :func:`text_edit` counts them)."""
    starts = [0] + [m.end() for m in _BREAK.finditer(text)]

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column

    span = edit.span
    return text[:offset(span.line, span.column)] + edit.content + text[offset(span.end_line, span.end_column):]
