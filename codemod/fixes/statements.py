"""Fixes built on the statements they touch: libcst parses the smallest block holding a fix
(its innermost function, else its top-level statement), not the whole module, and every byte
outside it is kept.

``fix`` used to parse (and position) every file with a fix whole with libcst: on torch's
sources that cost more than the analysis. Here the findings' fixes are grouped by the innermost
function whose body holds them (where the fixes of a top-level statement do not all have one,
or theirs overlap: by the top-level statement, ``apply._top_level_lines``). Each region's lines
are parsed alone (a function's with its indentation taken off), the fixes built and applied
there, and the edited text spliced back between the untouched bytes: lines the fixes left alone
as they were, new and changed lines with the function's indentation put back.

The result is the text the whole-module way gives, byte for byte, or nothing (the caller then
parses the module whole, as before). libcst prints new code with the module's default
indentation and line break, detected from the first ones in the text it parses; a region
parsed alone must see the same ones, so the whole file's are worked out here as libcst does
(:func:`default_indent`) and a region where they differ goes the whole-module way. So does
every fix that may edit the module itself or a top-level statement as a whole (an import to
add; a plan anchored at column 0, which may insert a statement among the module's, where
comments above it belong to the statement in the module but lie outside the lines parsed
here), a file not in UTF-8, with a form feed or a lone CR, a function with a line less
indented than itself (a continuation), a changed line inside a string or blank, and a region
libcst does not parse alone. A file libcst cannot parse whole gets the fixes of the regions it
parses.
"""

from __future__ import annotations

import ast
import difflib
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple, cast

import libcst as cst

from codemod.findings import Finding, Fix
from codemod.fixes.anchored import Anchored, anchored
from codemod.fixes.apply import (
    Lines,
    ParsedSource,
    _dropped,
    _must_parse,
    _Site,
    _top_level_lines,
    applied,
    parse,
)
from codemod.fixes.real_text import _string_lines
from codemod.fixes.site import Plan

_NEWLINE = re.compile(r"\r\n?|\n")
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]")


def default_newline(text: str) -> str:
    """The line break libcst makes new lines with: the first one in the text ("\\n" if none)."""
    found = _NEWLINE.search(text)
    return found.group(0) if found else "\n"


def default_indent(tree: ast.Module, lines: List[bytes]) -> str:
    """The indentation libcst makes new blocks with: that of the first line indented by a block
    (its first INDENT token), or four spaces. That line starts the first statement, in the
    order of lines, that starts its line at a column above 0 (every logical line before it
    starts at column 0)."""
    for top in tree.body:
        best: Optional[ast.stmt] = None
        for node in _statements(top):  # (statements lie only in blocks: no expression walked)
            if (node is not top and isinstance(node, ast.stmt) and node.col_offset > 0
                    and (best is None or node.lineno < best.lineno)
                    and not lines[node.lineno - 1][:node.col_offset].strip(b" \t")):
                best = node
        if best is not None:
            return lines[best.lineno - 1][:best.col_offset].decode("utf-8")
    return " " * 4


def _simple_only(tree: ast.Module, first: int, last: int) -> bool:
    """The top-level statements on lines ``first`` to ``last`` hold no block (no statement
    inside them): libcst's tree of them has no indentation of its own."""
    for stmt in tree.body:
        if stmt.lineno <= last and cast(int, stmt.end_lineno) >= first:
            if isinstance(stmt, ast.Match) or any(isinstance(n, ast.stmt) for n in ast.iter_child_nodes(stmt)):
                return False
    return True


_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _innermost_def(tops: List[ast.stmt], line: int, column: int) -> Optional[ast.stmt]:
    """The innermost function (of the statements ``tops``) whose body, on lines of its own
    below its header, holds ``(line, column)``: the smallest block a fix there is built in."""
    best: Optional[ast.stmt] = None
    for top in tops:
        for node in _statements(top):
            if (isinstance(node, _FUNCS) and node.body and node.body[0].lineno > node.lineno
                    and _first(node.body[0]) <= line <= cast(int, node.end_lineno) and column > node.col_offset
                    and (best is None or node.lineno > best.lineno)):
                best = node
    return best


def _statements(top: ast.stmt) -> Iterator[ast.AST]:
    """``top`` and the statements (and handlers, cases) in its blocks, at any depth: where every
    function of it is (a function is a statement; expressions hold none)."""
    todo: List[ast.AST] = [top]
    while todo:
        node = todo.pop()
        yield node
        for field in _BLOCK_FIELDS:
            todo.extend(getattr(node, field, None) or ())


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _first(stmt: ast.stmt) -> int:
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


Region = Tuple[int, int, bytes]  # (first, last) line and the indentation taken off its lines


def _regions(tree: ast.Module, lines: List[bytes], top: Lines, group: List[Finding],
             held: Dict[Region, List[ast.stmt]]) -> Dict[Region, List[Finding]]:
    """The findings of one top-level statement by the smallest region each is built in: its
    innermost function where every one has one and they do not overlap, else the statement.
    ``held`` gets each region's ``ast`` statements."""
    out: Dict[Region, List[Finding]] = {}
    tops = [s for s in tree.body if s.lineno <= top[1] and cast(int, s.end_lineno) >= top[0]]
    whole = {(top[0], top[1], b""): group}
    held[top[0], top[1], b""] = tops
    for finding in group:
        plan = cast(Plan, finding.plan)
        func = _innermost_def(tops, *plan.anchor)
        if func is None:
            return whole
        first, last = _first(func), cast(int, func.end_lineno)
        indent = lines[func.lineno - 1][:func.col_offset]
        if indent.strip(b" \t") or not all(lines[d.lineno - 1].startswith(indent + b"@")
                                           for d in getattr(func, "decorator_list", ())):
            return whole  # something else before it on its lines
        out.setdefault((first, last, indent), []).append(finding)
        held[first, last, indent] = [func]
    spans = sorted(out)
    if any(a[1] >= b[0] for a, b in zip(spans, spans[1:])):
        return whole  # one function inside another
    return out


def statement_fixes(source: ParsedSource, data: bytes, findings: List[Finding],
                    path: str) -> Optional[Tuple[str, bytes]]:
    """(new text, new bytes) with the fixes of ``findings`` (all with a plan) built and applied
    statement by statement; None where the whole module must be parsed instead (nothing is
    changed on the findings then). Raises ``SyntaxError`` if the result would not parse, as
    ``apply.apply_fixes`` does. Findings whose plan builds no fix lose it, as there."""
    if b"\f" in data or re.search(rb"\r(?!\n)", data) or data.startswith(b"\xef\xbb\xbf"):
        return None  # form feeds (``real_text``), CR-only breaks, a BOM: the whole module
    head = data.split(b"\n", 2)[:2]
    if any(_COOKIE.match(line) for line in head) and not re.search(rb"coding[:=][ \t]*utf[-_]?8\b", b"\n".join(head), re.I):
        return None  # another encoding: libcst's module encodes the result in it
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if getattr(source, "text", text) != text:  # the analysis' lines are not these bytes'
        return None
    groups: Dict[Lines, List[Finding]] = {}
    for finding in findings:
        plan = cast(Plan, finding.plan)
        if plan.whole_module or plan.anchor[1] == 0:
            return None
        groups.setdefault(_top_level_lines(source.tree, plan.anchor[0]), []).append(finding)
    lines = source.lines
    regions: Dict[Region, List[Finding]] = {}
    held: Dict[Region, List[ast.stmt]] = {}
    for top, group in groups.items():
        regions.update(_regions(source.tree, lines, top, group, held))
    indent, newline = default_indent(source.tree, lines), default_newline(text)
    strings = _string_lines(source.tree, getattr(source, "children", None), getattr(source, "walked", None))
    parsed: Dict[Region, Tuple[_Site, List[str], List[bytes]]] = {}
    parsed_whole: List[bool] = []  # whether libcst parses the whole module, asked once
    own_indent = False
    for first, last, prefix in regions:
        original = lines[first - 1:last]
        cut = [line[len(prefix):] if line.startswith(prefix) and n not in strings else line
               for n, line in enumerate(original, first)]
        if prefix and any(not line.startswith(prefix) and line.strip() and n not in strings
                          for n, line in enumerate(original, first)):
            return None  # a line less indented than the function (a continuation, a comment)
        raw = b"".join(cut)
        try:
            wrapper = parse(raw)
        except Exception:  # noqa: BLE001 - libcst's ParserSyntaxError or its tokenizer's own
            return None
        module = wrapper.module
        if module.default_newline != newline:
            return None
        if module.default_indent != indent and prefix:
            if _module_parses(data, parsed_whole):
                return None
            own_indent = True  # libcst cannot parse the module (tabs and spaces mixed in a block):
            # this function parses alone, and new blocks in it take its own indentation
        elif module.default_indent != indent:
            if not _simple_only(source.tree, first, last):
                return None
            from libcst.metadata import MetadataWrapper

            wrapper = MetadataWrapper(module.with_changes(default_indent=indent), unsafe_skip_copy=True)
        before = _LINE.findall(raw.decode("utf-8"))
        only = _anchored(wrapper.module, held[first, last, prefix], regions[first, last, prefix], first, before)
        parsed[first, last, prefix] = (_Site(wrapper, only), before, original)
    # Every region parsed as the module's: build the fixes there, apply them, splice.
    out: List[bytes] = []
    done = 0  # lines of the file copied so far
    for (first, last, prefix), group in sorted(regions.items()):
        site, before, original = parsed[first, last, prefix]
        fixes: List[Fix] = []
        built: Dict[int, Optional[Fix]] = {}
        for finding in group:
            plan = cast(Plan, finding.plan)
            line, column = plan.anchor
            node = site.find((line - first + 1, column - len(prefix)), plan.node_type)
            if id(plan) not in built:
                built[id(plan)] = plan.make(node, site) if node is not None else None
            fix = built[id(plan)]
            if fix is None:
                _dropped(finding, "no libcst node" if node is None else "the plan built no fix")
                finding.plan, finding.fixable = None, False
                continue
            finding.fix, finding.fix_title = fix, fix.title
            fixes.append(fix)
        out += lines[done:first - 1]
        if fixes:
            edited = applied(site, fixes).code
            back = _indented(before, original, edited, prefix.decode("utf-8"), first, strings)
            if back is None:
                return None
            out.append(back.encode("utf-8"))
        else:
            out += original
        done = last
    out += lines[done:]
    fixed_bytes = b"".join(out)
    fixed = fixed_bytes.decode("utf-8")
    if own_indent:
        try:
            compile(fixed, path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):  # (TabError too): no fix rather than a guess
            return None
    _must_parse(fixed, path)
    return fixed, fixed_bytes


def _anchored(module: "cst.Module", stmts: List[ast.stmt], group: List[Finding], first: int,
              text: List[str]) -> Optional[Anchored]:
    """The positions of the statements holding ``group``'s fixes in a region's tree (from line
    ``first``), or None for the whole tree's: where a plan's node type could be a block
    around them (an ``IndentedBlock``, which libcst positions from its statements)."""
    kinds = {cast(Plan, f.plan).node_type for f in group}
    if any(not hasattr(cst, k) or issubclass(cst.IndentedBlock, getattr(cst, k)) for k in kinds):
        return None
    return anchored(module, stmts, {cast(Plan, f.plan).anchor[0] - first + 1 for f in group}, first - 1, text)


def _module_parses(data: bytes, asked: List[bool]) -> bool:
    """Whether libcst parses the whole module (``asked`` keeps the answer): where it does, the
    whole module's parse gives the text a fix is to have; where it does not (a block mixing tabs
    and spaces, which CPython reads and libcst's tokenizer refuses), a function that parses alone
    is fixed with its own indentation, the only text there is."""
    if not asked:
        try:
            parse(data)
            asked.append(True)
        except Exception:  # noqa: BLE001 - libcst's ParserSyntaxError or its tokenizer's own
            asked.append(False)
    return asked[0]


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _indented(before: List[str], original: List[bytes], edited: str, prefix: str, first: int,
              strings: Set[int]) -> Optional[str]:
    """The region's fixed lines with the function's indentation put back: lines the fixes left
    alone as they were, new and changed ones after ``prefix``; None where that cannot be told
    (a changed line inside a string, or blank)."""
    if not prefix:
        return edited
    after = _LINE.findall(edited)
    try:
        inside = _string_lines(ast.parse(edited))
    except (SyntaxError, ValueError):
        return None
    out: List[str] = []
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            if any((first + i in strings) != (j + 1 in inside) for i, j in zip(range(i1, i2), range(j1, j2))):
                return None  # a line matched across a string's edge
            out += [o.decode("utf-8") for o in original[i1:i2]]
            continue
        for j in range(j1, j2):
            if j + 1 in inside or not after[j].strip():
                return None
            out.append(prefix + after[j])
    return "".join(out)

