"""Reusing the findings of unchanged top-level functions and classes between two analyses of
one file, as an editor sends edit after edit — also when the edit moved them.

The analysis of a function or class (a *unit*) reads its own text and, of the rest of the
module, the context: the module-level statements that are not functions or classes (imports,
assignments, ``if``/``try`` blocks), in order with the names of the others, the keys whose
requires_grad the module turns off anywhere (``analysis.leaves``), and whether the module (or a file
linked to it by imports) makes another dtype than float32, int64 and bool (``analysis.dtype``). It also reads the
units it is connected to: the ones it names, those naming it (grad mode across calls, mutation
contracts, summaries of the classes it builds), and so on — taken here as the units joined by a
word (a name in the text, comments and strings included: more is only less reuse; docstrings
and ``__all__``'s names left out) that is the name of a unit or of a ``global``, directly or through module-level
statements (and a module-level name bound from a unit joins the units naming it).

So a unit's key is: the settings, the context, and the text of every statement of its
*component* (the statements connected to it, itself included) with their lines counted from the
component's first one. Absolute positions are not in the key: a unit whose component moved
as a whole by ``d`` lines has the findings it had, ``d`` lines lower — spans, fix anchors, and
the lines its messages name (``at line 8``), which then lie in the component. A message that
names a line outside it (a module-level statement), or where the file's own text says
``line <number>`` (a message could quote it), is reused only where no statement moved. A fix's
text edit is never reused: it is built again from the plan, on the new text. One thing reads
the whole file: a fix that needs a fresh name (``h_value``) must not collide with any name
anywhere, so a round that picked one stores nothing.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import re
import unicodedata
from collections import Counter
from typing import Dict, FrozenSet, List, Optional, Sequence, Set, Tuple

from codemod.analysis.project import integral_only
from codemod.findings import Finding, Span

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")  # where statements hold statements
_HOLDERS = (*_DEFS, ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
            *((ast.TryStar,) if hasattr(ast, "TryStar") else ()), ast.Match, ast.ExceptHandler, ast.match_case)
_WORD = re.compile(r"\w+")
_GLOBAL = re.compile(r"^[ \t]*global[ \t]+([\w \t,]+)", re.M)
LINE_REF = re.compile(r"\bline (\d+)\b")  # how messages name a line: "at line 8", "(line 8)"
_QUOTABLE = re.compile(r"\bline\s+\d")  # in the file's text: a message quoting it could say "line 8"


@dataclasses.dataclass(frozen=True)
class Unit:
    """A top-level function or class, as this file has it."""

    first: int  # its first line (decorators included)
    end: int
    key: bytes  # what its findings depend on, positions left out
    component: Tuple[Tuple[int, int], ...]  # the lines of the statements it depends on


@dataclasses.dataclass(frozen=True)
class Entry:
    """The findings of a unit as analysed at line ``first`` (never handed out: copies are)."""

    first: int
    findings: Tuple[Finding, ...]
    layout: Optional[bytes] = None  # set: reusable only where every statement is where it was


@dataclasses.dataclass
class Reuse:
    """What one analysis takes from the one before, and what it needs to store its own."""

    units: Dict[ast.stmt, Unit]
    layout: bytes  # every top-level statement's lines
    may_move: bool  # whether a message's lines can be told from the file's text
    reused: List[Finding] = dataclasses.field(default_factory=list)
    skip: Set[ast.stmt] = dataclasses.field(default_factory=set)  # the units reused

    def skipped_lines(self) -> FrozenSet[int]:
        """The lines of the reused units (no other statement has a node on them)."""
        return frozenset(line for stmt in self.skip
                         for line in range(self.units[stmt].first, self.units[stmt].end + 1))


def context_digest(source, settings) -> bytes:
    """What the analysis of any one function or class reads outside it."""
    h = hashlib.sha256(repr(settings).encode())
    for stmt in source.tree.body:
        h.update(b"\0")
        h.update(f"def {stmt.name}".encode() if isinstance(stmt, _DEFS) else source.segment(stmt).encode())
    return h.digest()


def units(source, settings) -> Tuple[Dict[ast.stmt, Unit], bytes]:
    """Each top-level function or class -> its :class:`Unit`; and the layout digest."""
    body: Sequence[ast.stmt] = source.tree.body
    lines = source.lines
    spans, texts = [], []
    for stmt in body:
        first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
        spans.append((first, stmt.end_lineno or stmt.lineno))
        texts.append(b"".join(lines[first - 1:spans[-1][1]]))
    layout = hashlib.sha256(repr(spans).encode()).digest()
    masked = _without_docstrings(source)
    roots = _components(body, [b"".join(masked[a - 1:b]) for a, b in spans])
    members: Dict[int, List[int]] = {}
    for i in range(len(body)):
        members.setdefault(roots[i], []).append(i)
    digest = context_digest(source, settings)
    out: Dict[ast.stmt, Unit] = {}
    for group in members.values():
        if not any(isinstance(body[i], _DEFS) for i in group):
            continue
        start = spans[group[0]][0]
        h = hashlib.sha256(digest)
        for i in group:
            h.update(f"\0{spans[i][0] - start}:{spans[i][1] - start}\0".encode() + texts[i])
        common = h.digest()
        component = tuple(spans[i] for i in group)
        for place, i in enumerate(group):
            if isinstance(body[i], _DEFS):
                key = hashlib.sha256(common + str(place).encode()).digest()
                out[body[i]] = Unit(spans[i][0], spans[i][1], key, component)
    return out, layout


def _without_docstrings(source) -> List[bytes]:
    """The file's lines with every docstring and the strings of ``__all__`` blanked out:
    ``See :class:`ReLU```, in ``Tanh``'s, joins nothing (nothing reads a docstring but people)."""
    lines = list(source.lines)
    for stmt in source.tree.body:  # `__all__ = ["ReLU", ...]`: names for `import *`, no use
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            getattr(stmt, "target", None) if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else None
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name) and target.id == "__all__" and isinstance(value, (ast.List, ast.Tuple)) \
                and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
            _blank(lines, value)
    todo: List[ast.AST] = [source.tree]
    while todo:
        node = todo.pop()
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, *_DEFS)) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            _blank(lines, body[0])
        for field in _BLOCKS:
            todo.extend(child for child in getattr(node, field, None) or () if isinstance(child, _HOLDERS))
    return lines


def _blank(lines: List[bytes], node: ast.expr) -> None:
    """Spaces over ``node``'s text in ``lines`` (UTF-8 byte columns, as ``ast`` counts)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start, end = node.col_offset, node.end_col_offset or 0
    if first == last:
        lines[first] = lines[first][:start] + b" " * (end - start) + lines[first][end:]
        return
    lines[first] = lines[first][:start] + b" " * (len(lines[first]) - start)
    for i in range(first + 1, last):
        lines[i] = b" " * len(lines[i])
    lines[last] = b" " * end + lines[last][end:]


def _components(body: Sequence[ast.stmt], texts: List[bytes]) -> List[int]:
    """Statement index -> the index of its component's representative (union-find), statements
    joined by a word of one that names another unit or a ``global``."""
    words = [set(_WORD.findall(t.decode("utf-8", "surrogatepass"))) for t in texts]
    if not all(t.isascii() for t in texts):  # Python reads identifiers NFKC-normalised
        words = [{unicodedata.normalize("NFKC", w) for w in found} for found in words]
    owners: Dict[str, List[int]] = {}
    for i, stmt in enumerate(body):
        if isinstance(stmt, _DEFS):
            owners.setdefault(stmt.name, []).append(i)
        for match in _GLOBAL.finditer(texts[i].decode("utf-8", "surrogatepass")):
            for name in re.split(r"[\s,]+", match.group(1).strip()):
                owners.setdefault(unicodedata.normalize("NFKC", name), []).append(i)
    # A module-level binding made from a unit (``block = Block()``, ``b = block``) joins the
    # units that name it: a call ``block(x)`` runs ``Block.forward``. Others (``log = ...``)
    # hold nothing of a unit: joining their users would only cost reuse.
    binders = {i: _bound(stmt) for i, stmt in enumerate(body)
               if not isinstance(stmt, (*_DEFS, ast.Import, ast.ImportFrom))}
    changed = True
    while changed:
        changed = False
        for i, names in list(binders.items()):
            if words[i] & owners.keys():
                for name in names:
                    owners.setdefault(name, []).append(i)
                del binders[i]
                changed = True
    parent = list(range(len(body)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, found in enumerate(words):
        for name in found & owners.keys():
            for j in owners[name]:
                a, b = find(i), find(j)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return [find(i) for i in range(len(body))]


def _bound(stmt: ast.stmt) -> Set[str]:
    """The names a module-level statement binds (in ``if``/``try`` blocks too)."""
    out: Set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, (*_DEFS, ast.alias)):
            out.add(node.name if not isinstance(node, ast.alias) else (node.asname or node.name).split(".")[0])
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            out.add(node.rest)
    return out


def reusable(source, settings, previous, model, index: Optional[str] = None,
             other_lines: bool = True) -> Reuse:
    """This file's units, and the findings ``previous`` (this file's result before an edit) had
    for those whose key it knows, moved to where they are now. ``model``: the file's
    ``SemanticModel``, for the facts it gathers over the whole module by something other than a
    name (the keys whose requires_grad some code turns off, whether it makes another dtype than
    float32/int64/bool). ``index``: what a project index
    answers this file (its digest); a message may then name a line of another file, so only
    what did not move is reused, unless ``other_lines`` is False: nothing the index answers
    names a line (``ProjectIndex.names_other_lines``)."""
    text = source.text
    frozen = sorted(model.leaves.frozen()) if "requires_grad" in text or not text.isascii() else ()
    # whether a rewrite can promote: the whole file's dtypes decide (none other; integral ones only)
    one_dtype = (model.other_dtype is None, integral_only(model.other_dtype))
    found, layout = units(source, (settings, index, frozen, one_dtype))
    plan = Reuse(found, layout, (index is None or not other_lines) and not _QUOTABLE.search(source.text))
    old = previous.statements if previous is not None and previous.statements else {}
    counts = Counter(unit.key for unit in found.values())
    for stmt, unit in found.items():
        entry = old.get(unit.key) if counts[unit.key] == 1 else None
        if entry is None or (entry.layout is not None and entry.layout != layout):
            continue
        plan.reused += [moved(f, unit.first - entry.first) for f in entry.findings]
        plan.skip.add(stmt)
    return plan


def remember(plan: Reuse, found: List[Finding], previous) -> Dict[bytes, Entry]:
    """Key -> :class:`Entry`, for every unit: the new findings by the lines they start on (as
    copies: an editor later adds edits to its own), the reused ones as they were."""
    old = previous.statements if previous is not None and previous.statements else {}
    out: Dict[bytes, Entry] = {}
    by_line: Dict[int, Unit] = {}
    mine: Dict[bytes, List[Finding]] = {}
    for stmt, unit in plan.units.items():
        if stmt in plan.skip:
            out[unit.key] = old[unit.key]
        else:
            mine[unit.key] = []
            for line in range(unit.first, unit.end + 1):
                by_line[line] = unit
    for f in found:
        unit = by_line.get(f.span.line)
        if unit is not None:
            mine[unit.key].append(moved(f, 0))
    counts = Counter(unit.key for unit in plan.units.values())
    for stmt, unit in plan.units.items():
        if unit.key in mine and counts[unit.key] == 1:  # (two units of one key: kept by neither)
            findings = tuple(mine[unit.key])
            fixed = not plan.may_move or not all(_moves_with(f, unit.component) for f in findings)
            out[unit.key] = Entry(unit.first, findings, plan.layout if fixed else None)
    return out


def _moves_with(f: Finding, component: Tuple[Tuple[int, int], ...]) -> bool:
    """Whether every line ``f`` names (in its message, its fix's anchor) lies in the component,
    and so moves with it."""
    lines = [int(m.group(1)) for m in LINE_REF.finditer(f.message)]
    if f.plan is not None:
        lines.append(f.plan.anchor[0])
    return all(any(a <= line <= b for a, b in component) for line in lines)


def moved(f: Finding, d: int) -> Finding:
    """A copy of ``f`` as found ``d`` lines lower, without a built fix or edit (those point into
    the text they were built on; a code action builds them again from the plan)."""
    out = object.__new__(Finding)  # a shallow copy (copy.copy is several times slower)
    out.__dict__.update(f.__dict__)
    out.fix = out.edit = out.fix_title = None
    if d:
        span = f.span
        out.span = Span(span.line + d, span.column, span.end_line + d, span.end_column)
        out.message = LINE_REF.sub(lambda m: f"line {int(m.group(1)) + d}", f.message)
        if f.plan is not None:
            out.plan = dataclasses.replace(f.plan, anchor=(f.plan.anchor[0] + d, f.plan.anchor[1]))
    return out
