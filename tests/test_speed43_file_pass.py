"""Speed work (issue 27, stop 43) on the per-file pass that must change no answer: the source's one
walk reads only the fields of a node that may hold nodes; ``param_class`` (``act_layer(...)``, the
builders' module class parameter) asks for its function's flow only where the callee is one of
the function's parameters; ``Dataflow.reaching`` and its loop binding answer a name no binding or
no loop binds without walking up the tree."""

from __future__ import annotations

import ast
import pathlib
from typing import Dict, List

import pytest

from codemod.analysis.model import SemanticModel
from codemod.analysis.source import CANDIDATE_TYPES, WALKED_GROUPS, Source
from codemod.analysis.syntax import FUNCTIONS

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::7] + sorted((ROOT / "codemod" / "analysis").glob("*.py"))

SHAPES = '''
import a.b as c
from .x import (y as z, w)
G = 1
def f(a, /, b=1, *args, c, d=2, e, **kw):
    global G
    def g():
        nonlocal a
        a = 1
    x: int = 3
    print(f"{a!r:>{b}} {c=}")
    match kw:
        case {"k": 1, **rest}: pass
        case Point(1, y=2, z=[a, *others]) | None as q: pass
        case [1, 2, *_]: pass
        case True: pass
    try:
        pass
    except* ValueError as err:
        pass
    async def h():
        async with a as b, c:
            async for i in b: await i
        return [x async for x in y if x if not x]
    return {**kw, 1: 2}, {1, 2}, lambda q, *, r=1: q < r <= 3 != 4, (yield), (yield from z)
class K(B, metaclass=M):
    @dec
    def m(self) -> int: del self.x[1:2:3]; assert x, "m"; raise E from F
    while x: break
    else: continue
    with open(f) as (a, b): ...
'''

_LEAF_FIELDS = {"ctx", "op", "ops", "type_comment"}  # (shared singletons: a comparison's operators too)


def _reference(tree: ast.AST):
    """Parents, children, candidates and walked lists by the generic walk (every field)."""
    parents: Dict[ast.AST, ast.AST] = {}
    kids: Dict[ast.AST, List[ast.AST]] = {}
    candidates: Dict[type, list] = {t: [] for t in CANDIDATE_TYPES}
    walked: Dict[type, list] = {}
    for group in WALKED_GROUPS:
        shared: list = []
        for t in group:
            walked[t] = shared
    todo = [tree]
    while todo:
        node = todo.pop()
        if type(node) in candidates:
            candidates[type(node)].append(node)
        if type(node) in walked:
            walked[type(node)].append(node)
        mine = []
        for name in node._fields:
            if name in _LEAF_FIELDS:
                continue
            value = getattr(node, name, None)
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    parents[child] = node
                    mine.append(child)
        kids[node] = mine
        todo.extend(mine)
    for found in candidates.values():
        found.sort(key=lambda n: (n.lineno, n.col_offset, -n.end_lineno, -n.end_col_offset))
    return parents, kids, candidates, walked


@pytest.mark.parametrize("path", ["shapes", *FILES[::3]], ids=str)
def test_the_walk_files_what_the_generic_walk_does(path):
    data = SHAPES.encode() if path == "shapes" else pathlib.Path(path).read_bytes()
    source = Source(data)
    parents, kids, candidates, walked = _reference(source.tree)
    assert list(source.parents.items()) == list(parents.items())  # (in order: the walk's)
    assert list(source.children.items()) == list(kids.items())
    assert source.candidates == candidates
    assert {t: source.walked(t) for t in walked} == walked


BUILDER = '''
import torch.nn as nn

class Block(nn.Module):
    def __init__(self, dim, act_layer=nn.ReLU):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = act_layer(inplace=True)
        self.norm = make_norm(dim)

def helper(x):
    return len(x) + max(x, 1)

block = Block(4)
'''


def _calls(model: SemanticModel, name: str) -> List[ast.Call]:
    return [c for c in model.tree.source.walked(ast.Call) if isinstance(c, ast.Call)
            and isinstance(c.func, ast.Name) and c.func.id == name]


def test_param_class_runs_no_flow_for_a_callee_that_is_no_parameter():
    from codemod.analysis.summaries import param_class

    model = SemanticModel(Source(BUILDER.encode()))
    chains = model.summaries.chains
    for name in ("make_norm", "len", "max"):
        for call in _calls(model, name):
            assert param_class(chains, call) is None
    assert not model.binder._flows  # no function's dataflow was gathered for them
    (act,) = _calls(model, "act_layer")
    assert param_class(chains, act) == "torch.nn.ReLU"  # the parameter's own answer is unchanged


LOOPS = '''
def f(xs, w):
    total = 0
    for x in xs:
        if x:
            y = x * w
            total = total + y
    while total:
        total = total - 1
    return total
'''


def test_reaching_walks_up_only_where_a_loop_binds_the_name(monkeypatch):
    from codemod.analysis.tree import Tree

    model = SemanticModel(Source(LOOPS.encode()))
    func = next(n for n in model.tree.source.walked(ast.FunctionDef) if isinstance(n, FUNCTIONS))
    flow = model.binder.flow(func)
    body = func.body[1].body[0].body  # the statements under `if x:`
    walked = []
    real = Tree.ancestors

    def counted(self, node):
        walked.append(node)
        return real(self, node)

    monkeypatch.setattr(Tree, "ancestors", counted)
    assert model.dataflow.reaching(flow, "nothing", body[0]) == []
    assert not walked  # no binding: nothing to look for
    found = model.dataflow.reaching(flow, "w", body[0])
    assert [b.form for b in found] == ["param"]
    assert walked.count(body[0]) == 1  # the blocks around it; bound by no loop: no loop binding looked for
    loop = model.dataflow.reaching(flow, "x", body[0])
    assert [b.form for b in loop] == ["for"] and body[0] in walked  # the loop's own binding, as before
