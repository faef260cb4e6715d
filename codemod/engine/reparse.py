"""An editor's next version of a file, parsed where the edit is: the top-level statements the
edit left alone keep their ``ast`` nodes (moved by the lines it added or took away), the lines
between them are parsed again.

An edit near the top of a 1,000-line module moved every function: their findings were already
reused (``engine.incremental``), but the whole module was parsed and walked again, most of the
time of the round. Here the previous version's tree is taken over instead:

- the lines both versions share at the start and at the end are found; the top-level statements
  lying wholly in them (statements sharing a line with one that does not, left out) are kept;
- the lines between the last kept statement before the edit and the first one after it (the
  gaps between statements included) are parsed alone, as a module; their positions are moved
  to the file's lines, and those of the kept statements after the edit by the number of lines
  the edit added or removed;
- parents, children and candidate nodes by type come from the previous version's, with the
  nodes of the replaced statements left out and the new ones walked.

The result is the tree CPython gives for the whole text: a top-level statement starts at
column 0, so once the lines between two kept statements parse alone (every bracket and string
closed, no block left open to an indented line after them), the tokens of the kept statements
are what they were. Where that cannot be told (the lines do not parse alone, a kept line ends
with a backslash, an encoding cookie or a BOM, other candidate types), None: parse it all.
The previous version's tree is changed in place: it belongs to the new one afterwards.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Tuple, Type

from codemod.analysis.source import Source, parse
from codemod.encoding import decode_source


def _first(stmt: ast.stmt) -> int:
    return min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])


def _nodes(children: Dict[ast.AST, List[ast.AST]], top: ast.AST) -> List[ast.AST]:
    out, todo = [], [top]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(children.get(node, ()))
    return out


def reparse(old: Source, data: bytes, candidate_types: Tuple[Type[ast.AST], ...]) -> Optional[Source]:
    """The :class:`Source` of ``data``, built from ``old`` (the previous version's, taken over:
    do not use it afterwards); None where it must be parsed whole."""
    if data.startswith(b"\xef\xbb\xbf") or set(old.candidates) != set(candidate_types):
        return None
    try:
        text = decode_source(data)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError):
        return None  # reported by the whole parse
    lines = text.encode("utf-8", "surrogatepass").splitlines(keepends=True)
    before = old.lines
    head = b"".join(lines[:2]) + b"".join(before[:2])
    if b"coding" in head:  # a cookie: the text as parsed may not be these lines
        return None
    n_old, n_new = len(before), len(lines)
    a = 0
    limit = min(n_old, n_new)
    while a < limit and before[a] == lines[a]:
        a += 1
    b = 0
    while b < limit - a and before[n_old - 1 - b] == lines[n_new - 1 - b]:
        b += 1
    if a == n_old == n_new:
        b = 0
    body = old.tree.body
    spans = [(_first(s), s.end_lineno or s.lineno) for s in body]
    k = 0  # statements kept before the edit: body[:k]
    while k < len(body) and spans[k][1] <= a:
        k += 1
    while k and k < len(body) and spans[k][0] <= spans[k - 1][1]:
        k -= 1  # a statement on the last kept one's line is not kept
    j = len(body)  # statements kept after the edit: body[j:]
    while j > k and spans[j - 1][0] > n_old - b:
        j -= 1
    while j < len(body) and j > k and spans[j - 1][1] >= spans[j][0]:
        j += 1
    if k and before[spans[k - 1][1] - 1].rstrip(b"\r\n").endswith(b"\\"):
        return None
    delta = n_new - n_old
    first = spans[k - 1][1] + 1 if k else 1  # the lines parsed again, in the new text
    last = (spans[j][0] - 1 + delta) if j < len(body) else n_new
    if last < first - 1 or (last >= first and lines[last - 1].rstrip(b"\r\n").endswith(b"\\")):
        return None
    try:
        region = parse(b"".join(lines[first - 1:last]).decode("utf-8", "surrogatepass"))
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError):
        return None
    # Took over from here on: ``old``'s tree becomes the new one.
    for stmt in region.body:
        ast.increment_lineno(stmt, first - 1)
    children, parents = old.children, old.parents
    removed = [n for stmt in body[k:j] for n in _nodes(children, stmt)]
    kept_after = body[j:]
    if delta:
        for stmt in kept_after:
            for node in _nodes(children, stmt):
                if hasattr(node, "end_lineno"):  # a node with a position
                    moved: Any = node
                    moved.lineno += delta
                    if moved.end_lineno is not None:
                        moved.end_lineno += delta
    fresh = object.__new__(Source)
    fresh.text, fresh._lines = text, lines
    fresh.parents, fresh.children = {}, {}
    fresh.candidates = {t: [] for t in candidate_types}
    fresh.tree = region
    fresh._index()
    module = ast.Module(body=[*body[:k], *region.body, *kept_after], type_ignores=[])
    gone = set(map(id, removed))
    for node in removed:
        parents.pop(node, None)
        children.pop(node, None)
    del children[old.tree]
    del fresh.children[region]
    parents.update(fresh.parents)
    children.update(fresh.children)
    for stmt in module.body:
        parents[stmt] = module
    children[module] = list(module.body)
    candidates: Dict[Type[ast.AST], list] = {}
    for t in candidate_types:
        mine = [n for n in old.candidates[t] if id(n) not in gone]
        split = next((i for i, n in enumerate(mine) if n.lineno >= first), len(mine))
        candidates[t] = mine[:split] + fresh.candidates[t] + mine[split:]
    new = object.__new__(Source)
    new.text, new._lines, new.tree = text, lines, module
    new._walked = None  # listed again when asked: the splice changed the walk's order
    new.parents, new.children, new.candidates = parents, children, candidates
    old.parents, old.children, old.candidates = {}, {}, {t: [] for t in candidate_types}
    return new

