"""Fixes built on the statements they touch: libcst parses each top-level statement that holds
a fix, not the whole module, and every byte outside those statements is kept.

``fix`` used to parse (and position) every file with a fix whole with libcst: on torch's
sources that cost more than the analysis. Here the findings' fixes are grouped by the
top-level statement they are in (``apply._top_level_lines``: decorators and statements sharing
its lines included); each group's lines are parsed alone, the fixes built and applied there,
and the edited text spliced back between the untouched bytes.

The result is the text the whole-module way gives, byte for byte, or nothing (the caller then
parses the module whole, as before). libcst prints new code with the module's default
indentation and line break, detected from the first ones in the text it parses; a statement
parsed alone must see the same ones, so the whole file's are worked out here as libcst does
(:func:`default_indent`) and a statement where they differ goes the whole-module way. So does
every fix that may edit the module itself or a top-level statement as a whole (an import to
add; a plan anchored at column 0, which may insert a statement among the module's, where
comments above it belong to the statement in the module but lie outside the lines parsed
here), a file not in UTF-8, with a form feed or a lone CR, and a statement libcst does not
parse alone.
"""

from __future__ import annotations

import ast
import re
from typing import Dict, List, Optional, Tuple, cast

import libcst as cst

from codemod.findings import Finding, Fix
from codemod.fixes.apply import (
    FixApplier,
    Lines,
    ParsedSource,
    _dropped,
    _must_parse,
    _Site,
    _top_level_lines,
    parse,
)
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
        for node in ast.walk(top):
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
    text = source_text(data)
    if text is None or getattr(source, "text", text) != text:
        return None
    groups: Dict[Lines, List[Finding]] = {}
    for finding in findings:
        plan = cast(Plan, finding.plan)
        if plan.whole_module or plan.anchor[1] == 0:
            return None
        groups.setdefault(_top_level_lines(source.tree, plan.anchor[0]), []).append(finding)
    lines = source.lines
    indent = newline = None
    parsed: Dict[Lines, Tuple[_Site, str]] = {}
    for first, last in groups:
        raw = b"".join(lines[first - 1:last])
        try:
            wrapper = parse(raw)
        except Exception:  # noqa: BLE001 - libcst's ParserSyntaxError or its tokenizer's own
            return None
        module = wrapper.module
        if indent is None:
            indent, newline = default_indent(source.tree, lines), default_newline(text)
        if module.default_newline != newline:
            return None
        if module.default_indent != indent:
            if not _simple_only(source.tree, first, last):
                return None
            from libcst.metadata import MetadataWrapper

            wrapper = MetadataWrapper(module.with_changes(default_indent=indent), unsafe_skip_copy=True)
        parsed[first, last] = (_Site(wrapper), raw.decode("utf-8"))
    # Every statement parsed as the module's: build the fixes there, apply them, splice.
    out: List[bytes] = []
    done = 0  # lines of the file copied so far
    for (first, last), group in sorted(groups.items()):
        site, before = parsed[first, last]
        fixes: List[Fix] = []
        built: Dict[int, Optional[Fix]] = {}
        for finding in group:
            plan = cast(Plan, finding.plan)
            node = site.find((plan.anchor[0] - first + 1, plan.anchor[1]), plan.node_type)
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
        out.append((site.module.visit(FixApplier(fixes)).code if fixes else before).encode("utf-8"))
        done = last
    out += lines[done:]
    fixed_bytes = b"".join(out)
    fixed = fixed_bytes.decode("utf-8")
    _must_parse(fixed, path)
    return fixed, fixed_bytes


def source_text(data: bytes) -> Optional[str]:
    """The file's text when it is UTF-8 (what the analysis' lines are in), else None."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
