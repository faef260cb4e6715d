"""Reusing the findings of unchanged top-level functions and classes between two analyses of
one file, as an editor sends edit after edit.

The analysis of a function or class reads its own text and position and, of the rest of the
module, only the context: the module-level statements that are not functions or classes
(imports, assignments, ``if``/``try`` blocks) and the names of the others. So a function or
class at the same place with the same text, in the same context and under the same settings,
has the same findings — as long as the code that calls it is unchanged too: grad mode across
calls and mutation contracts read the callers (``analysis.calls``), so a function's key also
holds the text of every top-level statement that names it, and of those that name those,
transitively. One thing reads the whole file: a fix that needs a fresh name (``h_value``)
must not collide with any name anywhere, so a round that picked one stores nothing.
"""

from __future__ import annotations

import ast
import hashlib

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def context_digest(source, settings) -> bytes:
    """What the analysis of any one function or class reads outside it."""
    h = hashlib.sha256(repr(settings).encode())
    for stmt in source.tree.body:
        h.update(b"\0")
        h.update(f"def {stmt.name}".encode() if isinstance(stmt, _DEFS) else source.segment(stmt).encode())
    return h.digest()


def statement_keys(source, digest: bytes) -> dict:
    """Each top-level function or class -> its key: context, lines (decorators included), place,
    and the text of the statements that call it (directly or through others)."""
    texts, keys = {}, {}
    for stmt in source.tree.body:
        if isinstance(stmt, _DEFS):
            first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
            texts[stmt] = (first, b"".join(source.lines[first - 1:stmt.end_lineno]))
    callers = _callers(source)
    for stmt, (first, text) in texts.items():
        h = hashlib.sha256(text)
        for other in _closure(stmt, callers):
            h.update(b"\0" + texts.get(other, (0, source.segment(other).encode()))[1])
        keys[stmt] = (digest, first, stmt.end_lineno, h.digest())
    return keys


def _callers(source) -> dict:
    """Top-level function or class -> the other top-level statements that name it."""
    defined = {stmt.name: stmt for stmt in source.tree.body if isinstance(stmt, _DEFS)}
    out: dict = {}
    if not defined:
        return out
    for stmt in source.tree.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id in defined:
                target = defined[node.id]
                if target is not stmt:
                    out.setdefault(target, set()).add(stmt)
    return out


def _closure(stmt, callers: dict) -> list:
    """The statements that name ``stmt``, those that name them, and so on, in source order."""
    seen, todo = set(), [stmt]
    while todo:
        for other in callers.get(todo.pop(), ()):
            if other not in seen and other is not stmt:
                seen.add(other)
                todo.append(other)
    return sorted(seen, key=lambda s: (s.lineno, s.col_offset))


def top_level(source, node: ast.AST) -> ast.AST:
    """The module-level statement that holds ``node``."""
    parents, tree = source.parents, source.tree
    while True:
        parent = parents.get(node)
        if parent is None or parent is tree:
            return node
        node = parent


def reusable(source, settings, previous) -> tuple:
    """(this file's keys by top-level function/class, the findings ``previous`` had for the
    unchanged ones, those unchanged statements)."""
    keys = statement_keys(source, context_digest(source, settings))
    old = previous.statements if previous is not None and previous.statements else {}
    reused, skip = [], set()
    for stmt, key in keys.items():
        if key in old:
            reused += old[key]
            skip.add(stmt)
    return keys, reused, skip


def remember(keys: dict, found: list, previous) -> dict:
    """Key -> findings, for every top-level function or class: the new findings by the lines
    they start on, the reused ones as they were."""
    old = previous.statements if previous is not None and previous.statements else {}
    out, by_line = {}, {}
    for key in keys.values():
        if key in old:
            out[key] = old[key]
        else:
            out[key] = []
            for line in range(key[1], key[2] + 1):
                by_line[line] = key
    for f in found:
        key = by_line.get(f.span.line)
        if key is not None:
            out[key].append(f)
    return out
