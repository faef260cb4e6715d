"""Building and applying fixes on libcst's tree: the only place a file is parsed by libcst.

The passes decide on CPython's ``ast``; a finding with a fix carries a ``Plan`` (where the
libcst node it rewrites starts, and how to build the rewrite from it). Here a file that has
such findings is parsed by libcst once, each plan's node is found by its position, its
:class:`~codemod.findings.Fix` is built, and the chosen fixes are applied in one traversal.
"""

from __future__ import annotations

import ast
import warnings
from typing import Iterable, Optional

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from codemod.findings import Edit, Finding, Fix, Span
from codemod.fixes.site import FixSite


class FixApplier(cst.CSTTransformer):
    """Replaces nodes, by identity of the original, with what their fixes build.

    Several fixes may target one node (two insertions into one line); they run in descending
    ``Fix.order`` so that positional insertions do not shift each other.
    """

    def __init__(self, fixes: Iterable[Fix]) -> None:
        super().__init__()
        self._fixes: dict = {}
        for fix in fixes:
            self._fixes.setdefault(id(fix.node), []).append(fix)
        for group in self._fixes.values():
            group.sort(key=lambda f: f.order, reverse=True)

    def on_leave(self, original_node, updated_node):
        result = updated_node
        for fix in self._fixes.get(id(original_node), ()):
            if not isinstance(result, cst.CSTNode):
                break  # a flattened result takes no further edits; such a fix is built last
            result = fix.build(result)
        return result


class _Site(FixSite):
    """libcst's tree of one file, indexed by where nodes start."""

    def __init__(self, wrapper: MetadataWrapper) -> None:
        self._module = wrapper.module
        self._starts: dict = {}
        self._containers: dict = {}
        self._blocks: dict = {}
        for i, stmt in enumerate(self._module.body):
            self._blocks[id(stmt)] = (self._module, i)
        for node, rng in wrapper.resolve(PositionProvider).items():
            self._starts.setdefault((rng.start.line, rng.start.column), []).append(node)
            if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for i, small in enumerate(node.body):
                    self._containers[id(small)] = (node, i)
            elif isinstance(node, cst.IndentedBlock):
                for i, stmt in enumerate(node.body):
                    self._blocks[id(stmt)] = (node, i)

    @property
    def module(self) -> cst.Module:
        return self._module

    def find(self, anchor: tuple, type_name: str) -> Optional[cst.CSTNode]:
        kind = getattr(cst, type_name)
        return next((n for n in self._starts.get(anchor, ()) if isinstance(n, kind)), None)

    def container(self, stmt: cst.BaseSmallStatement) -> tuple:
        return self._containers[id(stmt)]

    def block(self, stmt: cst.BaseStatement) -> tuple:
        return self._blocks[id(stmt)]


def parse(data: bytes) -> MetadataWrapper:
    """libcst's tree of ``data`` (raises libcst's ParserSyntaxError)."""
    return MetadataWrapper(cst.parse_module(data), unsafe_skip_copy=True)  # fresh: no copy needed


def build_fixes(wrapper: MetadataWrapper, findings: Iterable[Finding]) -> None:
    """Build the ``Fix`` of every finding that has a plan; a plan whose node cannot be found
    (it should not happen) leaves its finding without a fix rather than guessing."""
    site = None
    for finding in findings:
        plan = finding.plan
        if plan is None or finding.fix is not None:
            continue
        site = site or _Site(wrapper)
        node = site.find(plan.anchor, plan.node_type)
        fix = plan.make(node, site) if node is not None else None
        if fix is None:
            finding.plan, finding.fixable = None, False
            continue
        finding.fix, finding.fix_title = fix, fix.title


def statement_edits(source, findings: Iterable[Finding]) -> None:
    """Give each finding its title and one-fix edit, parsing with libcst only the top-level
    statement its fix is in, once for all the findings there (an editor asks for one fix at a
    time; parsing and positioning a whole 1,000-line file costs about 0.4 s, one function a
    few milliseconds)."""
    parsed: dict = {}  # (first, last) line -> (site, text), or None where libcst cannot parse it
    for finding in findings:
        plan = finding.plan
        first, last = _top_level_lines(source.tree, plan.anchor[0])
        if (first, last) not in parsed:
            text = b"".join(source.lines[first - 1:last])
            try:
                parsed[first, last] = (_Site(parse(text)), text.decode("utf-8"))
            except cst.ParserSyntaxError:
                parsed[first, last] = None
        site, text = parsed[first, last] or (None, None)
        node = site.find((plan.anchor[0] - first + 1, plan.anchor[1]), plan.node_type) if site else None
        fix = plan.make(node, site) if node is not None else None
        if fix is None:
            finding.plan, finding.fixable = None, False
            continue
        finding.fix_title = fix.title
        edit = single_edit(site.module, fix, text)
        s = edit.span
        finding.edit = Edit(Span(s.line + first - 1, s.column, s.end_line + first - 1, s.end_column), edit.content)


def _top_level_lines(tree: ast.Module, line: int) -> tuple:
    """(first, last) line of the module-level statement(s) holding ``line``, decorators and
    statements sharing its lines (``a = 1; b = 2``) included."""
    body = tree.body
    first = last = line
    for stmt in body:
        start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        if start <= line <= stmt.end_lineno:
            first, last = start, stmt.end_lineno
            break
    for stmt in body:  # others on those lines
        if stmt.lineno <= last and stmt.end_lineno >= first:
            first, last = min(first, stmt.lineno), max(last, stmt.end_lineno)
    return first, last


def apply_fixes(module: cst.Module, fixes: list, path: str) -> tuple:
    """(new text, new bytes) with ``fixes`` applied in one traversal; raises ``SyntaxError``
    if the result would not parse (a bug of ours: it is never written)."""
    fixed_module = module.visit(FixApplier(fixes))
    fixed = fixed_module.code
    _must_parse(fixed, path)
    return fixed, fixed_module.bytes


def _must_parse(text: str, path: str) -> None:
    """Raise ``SyntaxError`` unless CPython parses ``text`` (its warnings about the user's code,
    such as ``"\\d"``, are not ours to print)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ast.parse(text, filename=path)


def single_edit(module: cst.Module, fix: Fix, before: Optional[str] = None) -> Edit:
    """The smallest text replacement that applies this one fix to the original text
    (``before``: that text, when the caller has it: libcst gives back what it parsed)."""
    before = module.code if before is None else before
    after = module.visit(FixApplier([fix])).code
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end_b, end_a = len(before), len(after)
    while end_b > start and end_a > start and before[end_b - 1] == after[end_a - 1]:
        end_b -= 1
        end_a -= 1
    # Whole lines read better in an editor's preview than a few changed characters.
    start = before.rfind("\n", 0, start) + 1
    line_end = before.find("\n", end_b)
    grow = (len(before) if line_end < 0 else line_end) - end_b
    return Edit(_span(before, start, end_b + grow), after[start:end_a + grow])


def _span(text: str, start: int, end: int) -> Span:
    def line_col(offset: int):
        line = text.count("\n", 0, offset) + 1
        return line, offset - (text.rfind("\n", 0, offset) + 1)

    (l1, c1), (l2, c2) = line_col(start), line_col(end)
    return Span(l1, c1, l2, c2)
