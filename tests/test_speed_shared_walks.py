"""Speed work (issue 27) that must change no result: the walk that indexes a file's tree lists
the nodes other parts walked the whole module for, in the walk's order; ``self.<attr>`` reads in
``ast.walk``'s order from one walk; the calls through instances of a module's classes from one
pass; and what a call passes worked out for the index only where another module may ask it."""

from __future__ import annotations

import ast
import pathlib

import pytest

from codemod.analysis.indexing import collect
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import WALKED_GROUPS, Source
from codemod.analysis.syntax import FUNCTIONS
from codemod.analysis.tree import Tree
from codemod.analysis.views import _calls_running

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::7] + sorted((ROOT / "codemod" / "analysis").glob("*.py"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_walked_lists_are_the_walks_nodes_in_its_order(path):
    source = Source(path.read_bytes())
    walked = list(Tree(source).walk(source.tree))
    for group in WALKED_GROUPS:
        assert source.walked(group[0]) == [n for n in walked if isinstance(n, group)]
        assert all(source.walked(t) is source.walked(group[0]) for t in group)


def test_a_source_made_without_its_walk_lists_them_when_asked():
    source = Source(b"import torch\ndef f(x):\n    return g(x).y\n")
    expected = {t: list(source.walked(t)) for group in WALKED_GROUPS for t in group}
    source._walked = None  # as engine.reparse leaves a spliced tree
    assert {t: source.walked(t) for t in expected} == expected


HOLDER = '''
class Cache(nn.Module):
    def __init__(self):
        self.k = torch.zeros(3)
    def a(self):
        out = [self.k, 1]
        return (self.k,)
    def b(self, x):
        if x:
            def inner():
                return self.k
            return inner
        store(self.k)
'''


def test_self_reads_are_in_ast_walks_order():
    model = SemanticModel(Source(HOLDER.encode()))
    expected = [n for n in ast.walk(model.module) if isinstance(n, ast.Attribute) and n.attr == "k"
                and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Load)]
    assert model.holders._reads_of_self("k") == expected and len(expected) == 4
    write = next(n for n in ast.walk(model.module) if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store))
    assert model.holders.attribute_handed_out(write) == "line 7 returns it"  # the shallowest, not the first line


INSTANCES = '''
import torch.nn as nn
class Block(nn.Module):
    def forward(self, x):
        return x
class Other(nn.Module):
    def forward(self, x):
        return x
class Net(nn.Module):
    def __init__(self):
        self.b = Block()
        self.o = Other() if cond else Block()
    def forward(self, x):
        return self.o(self.b(x))
b = Block()
b = Block()
o = Other()
y = b(x) + o(x) + Block()(x) + Other()(x) + len(x)
for b in [Block()]:
    b(x)
mixed = Block()
mixed = Other()
z = mixed(x)
'''


def _reference_calls(requirement, cls):
    """The calls of ``cls``'s instances, as found before (every call of the module, for each class)."""
    def builds(value):
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == cls.name

    found = []
    for calls in requirement.classes.calls_in(requirement.tree.module).values():
        for call in calls:
            callee = call.func
            if builds(callee):
                found.append(call)
            elif isinstance(callee, ast.Name):
                bound = requirement.views._plain_bindings(callee.id, call)
                if bound and all(builds(x.value) for x in bound):
                    found.append(call)
            elif isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) and callee.value.id == "self":
                owner = requirement.tree.enclosing_class(callee)
                values = requirement.classes.class_attrs(owner).get(callee.attr, []) if owner is not None else []
                if values and all(builds(v) for v in values):
                    found.append(call)
    return found


def test_instance_calls_from_one_pass_are_those_of_the_scan_per_class():
    model = SemanticModel(Source(INSTANCES.encode()))
    requirement = model.views.requirement
    for cls in (s for s in model.module.body if isinstance(s, ast.ClassDef)):
        forward = next(f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == "forward")
        got = _calls_running(requirement, forward, True)
        assert got == _reference_calls(requirement, cls)
    block = model.module.body[1]
    assert len(_calls_running(requirement, block.body[0], True)) == 3  # self.b(x), Block()(x), b(x) in the loop


CALLER = '''
import torch
from pkg.helpers import scale
from pkg.both import twice

def own(t):
    return t * 2

def twice(t):
    return t

w = torch.zeros(3, requires_grad=True)
own(w)
scale(w)
twice(w)
'''


def test_what_a_call_passes_is_worked_out_where_another_module_may_ask():
    model = SemanticModel(Source(CALLER.encode()))
    facts = collect(model, "pkg.main", frozenset({"pkg.main", "pkg.helpers", "pkg.both"}))
    grad = {c.callee: c.args_grad for c in facts.calls if c.called}
    assert grad["pkg.helpers.scale"] == frozenset({"0"})  # another module's function: asked there
    assert grad["pkg.main.own"] == frozenset()  # this module's own: never asked of the index
    # defined here and imported from the project: the index may follow the import elsewhere
    assert grad["pkg.main.twice"] == frozenset({"0"})


CLASSES = '''
import torch
from pkg import helpers
from torch import nn

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def reset(self):
        self.fc.weight.zero_()

    def forward(self, x):
        self.reset()
        return helpers.scale(self.fc(x), torch.ones(2))
'''


def test_only_uses_that_may_name_an_indexed_function_are_sites():
    """``self.fc``, ``self.fc.weight``, ``torch.ones``, ``nn.Linear`` name nothing the index is
    asked about: the index pass leaves them out (they were half of torch's call sites)."""
    project = frozenset({"pkg.main", "pkg.helpers", "pkg"})
    facts = collect(SemanticModel(Source(CLASSES.encode())), "pkg.main", project)
    assert sorted(c.callee for c in facts.calls) == ["pkg.helpers.scale", "pkg.main.Net.reset"]
    # a class whose name is also imported (the index may follow the import): every self.<attr> stays
    shadowed = CLASSES.replace("from torch import nn\n", "from torch import nn\nfrom pkg.other import Net\n")
    facts = collect(SemanticModel(Source(shadowed.encode())), "pkg.main", project | {"pkg.other"})
    assert sorted(c.callee for c in facts.calls) == ["pkg.helpers.scale", "pkg.main.Net.fc", "pkg.main.Net.reset"]
