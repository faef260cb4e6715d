"""Speed work (issue 27, stop 53) that must change no result: the parts that still walked a whole
module (or statement) with ``ast.walk`` read what the source's one walk filed instead: the names
functions declare ``global``/``nonlocal`` (the index's ``ModuleFacts.names``), the lines inside
strings and the default indentation of a file with fixes (``fixes.statements``), the names a class
body binds (``ClassFact.assigned``). Each answer is compared with the walk it replaced (written
out here), over fixtures, the tool's own sources and a small case; and the walks are shown gone
(no ``ast.walk`` call)."""

from __future__ import annotations

import ast
import pathlib
from typing import Optional, Set

import pytest

from codemod.analysis import indexing
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.syntax import FUNCTIONS
from codemod.fixes import real_text, statements

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::6] + sorted((ROOT / "codemod").rglob("*.py"))

CASE = b'''
import torch
COUNT = 0
NAME = "a"
def bump():
    global COUNT, NAME
    COUNT += 1
class Holder:
    global LATE
    x = y = 1
    import os.path as p, sys
    def m(self):
        def inner():
            nonlocal self
            global OTHER
        return f"""{self}
multi {COUNT}"""
    if True:
        class Inner: pass
        def twice(self): pass
    def twice(self): pass
def outer():
    v = 1
    def inner():
        nonlocal v
        v += 1
    s = """one
two"""
    return inner
if x:
  y = 1
'''


def _walked_global_names(model: SemanticModel) -> Set[str]:  # (the walk of stop 52)
    parent, found = model.tree.parent, set()
    for node in ast.walk(model.module):
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            scope = parent(node)
            while scope is not None and not isinstance(scope, (*FUNCTIONS, ast.ClassDef, ast.Module)):
                scope = parent(scope)
            if isinstance(scope, FUNCTIONS):
                found.update(node.names)
    return found


def _walked_indent(tree: ast.Module, lines) -> str:  # (the walk of stop 52)
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


def _walked_assigned(model: SemanticModel, cls: ast.ClassDef) -> Set[str]:  # (the walk of stop 52)
    defined, assigned = {}, set()
    for stmt in cls.body:
        if isinstance(stmt, FUNCTIONS):
            defined[stmt.name] = defined.get(stmt.name, 0) + 1
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                assigned.add(node.id)
            elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
                assigned.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                assigned.update((a.asname or a.name).split(".")[0] for a in node.names)
    assigned.update(name for name, count in defined.items() if count > 1)
    return assigned


def _sources():
    yield "case", CASE
    for path in FILES:
        yield str(path.relative_to(ROOT)), path.read_bytes()


SOURCES = list(_sources())


@pytest.mark.parametrize("name,data", SOURCES, ids=[n for n, _ in SOURCES])
def test_the_listed_nodes_answer_as_the_walks_did(name, data):
    source = Source(data)
    model = SemanticModel(source)
    if "global" in source.text:
        assert indexing._declared_in_functions(model) == _walked_global_names(model)
    assert statements.default_indent(source.tree, source.lines) == _walked_indent(source.tree, source.lines)
    assert real_text._string_lines(source.tree, walked=source.walked) == real_text._string_lines(source.tree)
    resolver = indexing._Resolver(model, "m", frozenset({"m"}), False, indexing._imports(model), frozenset())
    classes = [c for c in model.module.body if isinstance(c, ast.ClassDef)]
    facts = indexing._classes(model, resolver)
    assert [set(f.assigned) for f in facts] == [_walked_assigned(model, c) for c in classes]


def test_the_case_has_what_the_answers_turn_on():
    source = Source(CASE)
    model = SemanticModel(source)
    assert indexing._declared_in_functions(model) == {"COUNT", "NAME", "self", "OTHER", "v"}
    assert statements.default_indent(source.tree, source.lines) == "    "
    assert {17, 28} <= real_text._string_lines(source.tree, walked=source.walked)


def test_no_whole_walk_is_left(monkeypatch):
    """What these parts read comes from the lists the source's walk filed: ``ast.walk`` is not
    called (stop 52 walked the module, its statements and each class body for them)."""
    source = Source(CASE)
    model = SemanticModel(source)
    resolver = indexing._Resolver(model, "m", frozenset({"m"}), False, indexing._imports(model), frozenset())

    walked, real = [], ast.walk

    def walk(node):
        walked.append(node)
        return real(node)

    monkeypatch.setattr(ast, "walk", walk)
    indexing._declared_in_functions(model)
    statements.default_indent(source.tree, source.lines)
    real_text._string_lines(source.tree, source.children, source.walked)
    indexing._classes(model, resolver)
    monkeypatch.undo()
    assert walked == []
