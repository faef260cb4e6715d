"""Speed work (issue 27, stop 57) that must change no result: a body's names are gathered once
where once tells all (``Binder.flow``).

- A body with no nested scope (no ``def``, ``class`` or ``lambda`` in it) gives the same flow
  with or without its nested scopes' loads: the walk for one serves both.
- The parts that read only the module's bindings (a global's values, what a module called by
  name was built from) ask for its own walk (``nested=False``), not the walk of every function
  and class body in it: the bindings are the same.
- ``Calls`` asks whether a function binds the name of a top-level function it calls only where
  some function may bind that name at all (``tree.bound_in_function_bodies``, which the names layer asks too).

Each claim the speed rests on is checked here against the walks themselves, over fixtures, the
tool's own sources and a small case; and the walks saved are shown gone.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

from codemod.analysis.binder import Binder
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.syntax import FUNCTIONS
from codemod.analysis.tree import Tree

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::5] + sorted((ROOT / "codemod").rglob("*.py"))

CASE = b'''
import torch
from helpers import scale as sc
G = 1
def top(x):
    return x
class Outer:
    def m(self, a, /, b, *args, k=(w := 2), **kw):
        import os.path
        from sys import argv as av
        for i, (j, *rest) in enumerate(a):
            with open(i) as (f, g):
                pass
        try:
            pass
        except ValueError as err:
            pass
        match a:
            case [first, *more]:
                pass
            case {"k": v, **others}:
                pass
            case Point(x=px) as whole:
                pass
        y = [z for z in b if (q := z)]
        def inner(c=top(1)):
            local_in_inner = c
            return lambda d: d + local_in_inner
        class Local:
            attr = 1
        return top(a) + sc(b)
def plain(x):
    t = top(x)
    t += 1
    return t
def shadows(x):
    top = x
    return top(x)
async def coroutine(x):
    async for item in x:
        await item
    return top(x)
'''


def _sources():
    for path in FILES:
        try:
            yield path.name, Source(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
    yield "case", Source(CASE)


SOURCES = list(_sources())


def _bodies(source: Source):
    yield source.tree
    yield from (n for n in ast.walk(source.tree) if isinstance(n, FUNCTIONS))


def _nested_scopes(owner: ast.AST) -> bool:
    body = owner.body if isinstance(owner, ast.Module) else [*owner.args.defaults, *owner.args.kw_defaults, *owner.body]
    return any(isinstance(n, (*FUNCTIONS, ast.ClassDef, ast.Lambda))
               for stmt in body if stmt is not None for n in ast.walk(stmt))


def _shape(flow):
    """A flow as plain values (the bindings' nodes by identity)."""
    return ({k: [(b.key, b.start, b.end, id(b.stmt), id(b.value), b.form, tuple(b.sources)) for b in bs]
             for k, bs in flow.bindings.items()},
            {k: [(pos, id(n)) for pos, n in uses] for k, uses in flow.loads.items()},
            flow.loops, flow.declared, flow.params, flow.imports, flow.returns_value)


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_both_walks_bind_alike_and_one_without_nested_scopes_is_the_other(name, source):
    for owner in _bodies(source):
        alone, whole = Binder(source).flow(owner, nested=False), Binder(source).flow(owner, nested=True)
        assert list(_shape(alone)[0].items()) == list(_shape(whole)[0].items())  # (the bindings, in order)
        if not _nested_scopes(owner):
            assert _shape(alone) == _shape(whole)


@pytest.mark.parametrize("name,source", SOURCES, ids=[n for n, _ in SOURCES])
def test_the_names_functions_may_bind_hold_every_functions_bindings(name, source):
    from codemod.analysis.tree import bound_in_function_bodies

    bound = bound_in_function_bodies(Tree(source))
    binder = Binder(source)
    for owner in _bodies(source):
        if isinstance(owner, FUNCTIONS):
            assert {k for k in binder.flow(owner, nested=False).bindings if "." not in k} <= bound, owner.name
    if name == "case":
        assert "plain" not in bound and "Outer" not in bound and "top" in bound  # (`top = x` in `shadows`)


def test_a_body_without_nested_scopes_is_walked_once_for_both():
    source = Source(CASE)
    plain = next(n for n in ast.walk(source.tree) if isinstance(n, ast.FunctionDef) and n.name == "plain")
    method = next(n for n in ast.walk(source.tree) if isinstance(n, ast.FunctionDef) and n.name == "m")
    binder = Binder(source)
    assert binder.flow(plain, nested=False) is binder.flow(plain)
    alone = binder.flow(method, nested=False)
    whole = binder.flow(method)
    assert alone is not whole and "local_in_inner" in whole.loads and "local_in_inner" not in alone.loads


@pytest.mark.parametrize("shadowed", [False, True])
def test_a_call_of_a_top_level_function_gathers_no_flow_where_no_function_binds_its_name(shadowed):
    text = CASE.replace(b"    top = x\n    return top(x)", b"    return top(x)") if not shadowed else CASE
    model = SemanticModel(Source(text))
    top = model.module.body[3]
    assert isinstance(top, ast.FunctionDef) and top.name == "top"
    callers = {getattr(s.caller, "name", "<module>") for s in model.calls.sites(top)}
    assert {"m", "inner", "plain", "coroutine"} <= callers
    assert ("shadows" in callers) is not shadowed  # (`top = x` there: a local)
    flows = {getattr(owner, "name", "<module>") for owner, _ in model.binder._flows}
    if shadowed:  # some function binds `top`: each calling one is asked
        assert {"shadows", "plain", "coroutine"} <= flows
    else:
        assert not flows


def test_a_modules_own_walk_serves_what_reads_its_bindings_alone():
    model = SemanticModel(Source(CASE + b"unit = torch.nn.ReLU()\ndef uses(x):\n    return unit(x)\n"))
    call = next(n for n in ast.walk(model.module) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "unit")
    assert model._module_values(call.func)
    model.summaries.targets.callee(call)
    assert (model.module, True) not in model.binder._flows
