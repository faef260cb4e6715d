"""Speed work (issue 27, stop 55) that must change no result: questions asked many times over
with one answer are worked out once, and walks that read a whole module or function for a few
nodes read what the source's walk filed instead.

- ``Dataflow.reaching`` and ``Dataflow.aliases``: the kinds, the views and the hazards ask the
  same (flow, key, place) about three times over (a cold ``check`` of torch's nn, optim, autograd
  and distributions: 9,469 questions of ``reaching``, 2,753 different; 903 of ``aliases``, 268).
- ``calls``: how a module names ``torch.nn.Module`` and whether constructing a class surely runs
  its ``__init__`` (``Calls.bound_runs``), once per tree (the index pass and the file pass share
  it); the ``__new__`` looked for among the names the walk listed, not by walking the class.
- ``indexing.collect``: whether a top-level function holds a grad-off ``with`` is asked once per
  function (twice before), and looked for among its statements only (not its expressions).

Each answer is compared with the code it replaced (written out here) over fixtures, the tool's
own sources and small cases, and the repeated work is shown gone."""

from __future__ import annotations

import ast
import pathlib
from typing import Dict, FrozenSet, Set

import pytest

from codemod.analysis import calls, dataflow, indexing
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.syntax import FUNCTIONS, target_key

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::5] + sorted((ROOT / "codemod" / "analysis").rglob("*.py"))

CASE = b'''
import torch
import torch.nn as nn
from torch import nn as tnn
Other = 1
class Plain(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(d))
    def forward(self, x):
        return x * self.w
class Child(Plain):
    def __init__(self, d):
        super().__init__(d)
class Made(tnn.Module):
    def __init__(self):
        super().__init__()
    def build(self):
        __new__ = object.__new__
        return __new__(Made)
class Meta(nn.Module, metaclass=type):
    def __init__(self):
        super().__init__()
def helper(x, y):
    with torch.no_grad():
        z = x * 2
        def inner(a):
            with torch.enable_grad():
                return a
    y = [v for v in (lambda q: q)(x)]
    return z, y
def plain(x):
    if x:
        for i in range(3):
            x = x + i
    return x
def uses():
    a = torch.zeros(3)
    b = a
    c = b.view(-1)
    for _ in range(2):
        a = a + 1
    c.add_(1)
    return a, b, c
'''


def _sources():
    yield "case", CASE
    for path in FILES:
        yield str(path.relative_to(ROOT)), path.read_bytes()


SOURCES = list(_sources())


def _walked_module_class_names(tree) -> FrozenSet[str]:  # (the walk of stop 54)
    names: Set[str] = set()
    bound: Dict[str, int] = {}
    for stmt in tree.module.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                local = a.asname or a.name.partition(".")[0]
                bound[local] = bound.get(local, 0) + 1
                if a.name in ("torch", "torch.nn") and a.asname is None:
                    names.add("torch.nn.Module")
                elif a.name == "torch.nn" and a.asname:
                    names.add(f"{a.asname}.Module")
                elif a.name == "torch" and a.asname:
                    names.add(f"{a.asname}.nn.Module")
        elif isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                local = a.asname or a.name
                bound[local] = bound.get(local, 0) + 1
                if stmt.module == "torch" and a.name == "nn" and not stmt.level:
                    names.add(f"{local}.Module")
                elif stmt.module == "torch.nn" and a.name == "Module" and not stmt.level:
                    names.add(local)
        else:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    bound[n.id] = bound.get(n.id, 0) + 2
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                        and tree.parent(n) is tree.module:
                    bound[n.name] = bound.get(n.name, 0) + 2
    return frozenset(n for n in names if bound.get(n.partition(".")[0], 0) == 1)


def _walked_names_new(cls: ast.ClassDef) -> bool:  # (the walk of stop 54)
    return any(isinstance(n, ast.Name) and n.id == "__new__" for s in cls.body for n in ast.walk(s))


def _walked_holds_grad_off(model: SemanticModel, func) -> bool:  # (the walk of stop 54)
    return model.tree.parent(func) is model.module and any(
        isinstance(n, (ast.With, ast.AsyncWith)) and model.tree.owner(n) is func
        and model.grad.with_grad_state(n) is False for n in model.tree.walk(func))


@pytest.mark.parametrize("name,data", SOURCES, ids=[n for n, _ in SOURCES])
def test_the_answers_are_those_of_the_walks(name, data):
    model = SemanticModel(Source(data))
    tree = model.tree
    assert calls._module_class_names(tree) == _walked_module_class_names(tree)
    for cls in tree.source.walked(ast.ClassDef):
        assert calls._names_new(tree, cls) == _walked_names_new(cls)
    for func in tree.source.walked(ast.FunctionDef):
        assert indexing._holds_grad_off(model, func) == _walked_holds_grad_off(model, func)
        # the nodes looked at are the walk's own (in its order), those below expressions and
        # nested functions left out
        walked = [n for n in tree.walk(func) if isinstance(n, (ast.With, ast.AsyncWith)) and tree.owner(n) is func]
        assert [n for n in indexing._statements(tree, func) if isinstance(n, (ast.With, ast.AsyncWith))] == walked


def test_the_case_has_what_the_answers_turn_on():
    model = SemanticModel(Source(CASE))
    tree = model.tree
    assert calls._module_class_names(tree) == {"torch.nn.Module", "nn.Module", "tnn.Module"}
    classes = {c.name: c for c in tree.source.walked(ast.ClassDef)}
    named = [calls._names_new(tree, classes[c]) for c in ("Plain", "Child", "Made", "Meta")]
    assert named == [False, False, True, False]
    functions = {f.name: f for f in tree.source.walked(ast.FunctionDef)}
    assert indexing._holds_grad_off(model, functions["helper"]) is True
    assert indexing._holds_grad_off(model, functions["plain"]) is False
    inits = {c: f for c in ("Plain", "Child", "Made", "Meta")
             for f in classes[c].body if isinstance(f, FUNCTIONS) and f.name == "__init__"}
    assert {c: model.calls.bound_runs(f) for c, f in inits.items()} == \
        {"Plain": True, "Child": True, "Made": False, "Meta": False}


def test_a_tree_works_out_its_module_class_names_and_constructions_once(monkeypatch):
    """Each ``bound_runs`` of a class's ``__init__`` read the module's top-level statements
    whole again (and the class body for ``__new__``); now the tree keeps both answers, and a
    second model of the same source (the file pass after the index pass) reuses them."""
    source = Source(CASE)
    model = SemanticModel(source)
    read, real = [], calls._read_module_class_names
    monkeypatch.setattr(calls, "_read_module_class_names", lambda tree: read.append(tree) or real(tree))
    plain = [f for f in source.walked(ast.FunctionDef) if f.name == "__init__"]
    first = [model.calls.bound_runs(f) for f in plain]
    again = SemanticModel(source, shared=model.shared())
    assert [again.calls.bound_runs(f) for f in plain] == first
    assert read == [model.tree]


def test_collect_asks_each_function_once_whether_it_holds_grad_off(monkeypatch):
    """``collect(..., later=True)`` asked ``_holds_grad_off`` of a function twice (once itself, once
    through ``_fresh_returns``, which answers None for a function holding none)."""
    model = SemanticModel(Source(CASE))
    asked, real = [], indexing._holds_grad_off
    monkeypatch.setattr(indexing, "_holds_grad_off", lambda m, f: asked.append(f) or real(m, f))
    facts = indexing.collect(model, "m", frozenset({"m"}), later=True)
    assert len(asked) == len(facts.functions) == len(set(asked))
    fresh = {f.qualname: f.fresh_returns for f in facts.functions}
    assert fresh["m.helper"] == ("?",) and fresh["m.plain"] is None
    monkeypatch.undo()
    # and the facts are those worked out at once (``later=False``) once resolved
    now = indexing.collect(SemanticModel(Source(CASE)), "m", frozenset({"m"}), later=False)
    assert facts.resolved().functions == now.functions


def _flow_questions(model: SemanticModel):
    uses = next(f for f in model.tree.source.walked(ast.FunctionDef) if f.name == "uses")
    flow = model.flow(uses)
    return flow, uses.body


def test_reaching_and_aliases_are_worked_out_once_per_question(monkeypatch):
    model = SemanticModel(Source(CASE))
    flow, body = _flow_questions(model)
    ranges, real_range = [], model.tree.range
    monkeypatch.setattr(model.dataflow.tree, "range", lambda node: ranges.append(node) or real_range(node))
    first = model.dataflow.reaching(flow, "a", body[-1])
    asked = len(ranges)
    second = model.dataflow.reaching(flow, "a", body[-1])
    assert asked and len(ranges) == asked  # the second answer was not worked out again
    assert first == second and first is not second  # a list of the caller's own
    assert [target_key(b.stmt.targets[0]) if isinstance(b.stmt, ast.Assign) else None for b in first] == ["a"] * 2
    first.clear()
    assert model.dataflow.reaching(flow, "a", body[-1]) == second  # changing one changes no later answer
    bound, real_bound = [], model.dataflow._bound_from
    monkeypatch.setattr(model.dataflow, "_bound_from", lambda f, k, at: bound.append(k) or real_bound(f, k, at))
    at = model.tree.range(body[-2])[0]
    one = model.dataflow.aliases(flow, "c", at)
    count = len(bound)
    two = model.dataflow.aliases(flow, "c", at)
    assert count and len(bound) == count
    assert one == two and one.identity is not two.identity and one.views is not two.views
    assert "b" in one.views or "a" in one.views
    one.views.clear()
    assert model.dataflow.aliases(flow, "c", at) == two


@pytest.mark.parametrize("name,data", SOURCES[:12], ids=[n for n, _ in SOURCES[:12]])
def test_remembered_answers_are_those_worked_out_anew(name, data):
    """Questions about a module's bodies (keys they bind, at their first statements) answered
    twice by a dataflow that remembers, against a fresh model's answers worked out unremembered."""
    model, fresh = SemanticModel(Source(data)), SemanticModel(Source(data))
    owners = [model.module, *model.tree.source.walked(ast.FunctionDef)]
    twins = [fresh.module, *fresh.tree.source.walked(ast.FunctionDef)]
    reaching, aliases = dataflow.Dataflow.reaching.__wrapped__, dataflow.Dataflow.aliases.__wrapped__
    for owner, twin in zip(owners, twins):
        flow, other = model.flow(owner), fresh.flow(twin)
        for key in sorted(flow.bindings)[:6]:
            for stmt, same in zip(owner.body[:6], twin.body[:6]):
                want = [(b.start, b.end, b.form) for b in reaching(fresh.dataflow, other, key, same)]
                at = model.tree.range(stmt)[0]
                want_aliases = aliases(fresh.dataflow, other, key, at)
                for _ in range(2):
                    assert [(b.start, b.end, b.form) for b in model.dataflow.reaching(flow, key, stmt)] == want
                    assert model.dataflow.aliases(flow, key, at) == want_aliases
