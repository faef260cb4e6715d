"""Issue 27's speed work: the facts read off the indexing walk answer as the walks they replace.

``arguments.hook_site`` walked every module again (over a tenth of a cold ``check``), and
``ModuleHazards._members_changed`` walked the whole module for each container it asked about. Each is
compared here with the walk it replaced (kept below, as it was), over programs written for the
purpose and over torch's own ``nn`` sources.
"""

from __future__ import annotations

import ast
import pathlib
import textwrap
from typing import Optional

import pytest
import torch

from codemod.analysis.arguments import _HOOK, _TENSOR_HOOKS, hook_site
from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.syntax import target_key

TORCH_NN = sorted((pathlib.Path(torch.__file__).parent / "nn").rglob("*.py"))


def walked_hook_site(module: ast.Module) -> Optional[str]:
    """``hook_site`` as it was: one breadth-first walk of the module."""
    for node in ast.walk(module):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
        if isinstance(node, (ast.Attribute, ast.Name)) and name is not None and _HOOK.match(name) \
                and name not in _TENSOR_HOOKS:
            return name
        if isinstance(node, ast.Attribute) and node.attr in ("forward", "__call__") \
                and isinstance(node.ctx, (ast.Store, ast.Del)):
            return f"{node.attr} replaced"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
                and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value in ("forward", "__call__"):
            return "setattr"
    return None


_MEMBER_CHANGES = frozenset({"insert", "append", "extend", "pop", "add_module", "register_module",
                             "__setitem__", "__delitem__", "apply"})


def walked_members_changed(model: SemanticModel, key: str, scope: ast.AST) -> bool:
    """``ModuleHazards._members_changed`` as it was: a walk of the module (of ``scope`` for a local)."""
    name = key.split(".")[-1]

    def through(node: ast.AST) -> bool:
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            inner = node.func if isinstance(node, ast.Call) else node.value
            if isinstance(inner, ast.Attribute) and inner.attr == name and key.startswith("self."):
                return True
            if isinstance(inner, ast.Name) and inner.id == name and not key.startswith("self."):
                return True
            node = inner
        return False

    where = model.module if key.startswith("self.") else scope
    for node in model.walk(where):
        if isinstance(node, (ast.Subscript, ast.Attribute)) and not isinstance(node.ctx, ast.Load) \
                and through(node):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _MEMBER_CHANGES and through(node.func):
            return True
    return False


HOOKS = [
    "import torch\nx = torch.ones(1)\n",
    "def f(m):\n    m.register_forward_hook(print)\n",
    "def f(t):\n    t.register_hook(print)\n",  # a tensor's hook: none of a module's
    "def f(m):\n    m.forward = lambda x: x\n",
    "def f(m):\n    del m.__call__\n",
    "def f(m):\n    y = m.forward(1)\n",  # read, not replaced
    "def f(m):\n    setattr(m, 'forward', print)\n",
    "def f(m):\n    setattr(m, 'other', print)\n",
    # Two places: the breadth-first walk names the shallower one, whatever the order in the text.
    "def f(m):\n    if m:\n        for x in m:\n            m.register_forward_pre_hook(x)\n"
    "class A:\n    _forward_hooks = {}\n",
    "class A:\n    def g(self):\n        self.forward = 1\n"
    "register_module_forward_hook(print)\n",
    "def f(m):\n    return m._backward_hooks\nsetattr(m, '__call__', f)\n",
]


@pytest.mark.parametrize("text", HOOKS)
def test_hook_site_names_what_the_walk_named(text):
    source = Source(text.encode())
    assert hook_site(source) == walked_hook_site(source.tree)


def test_hook_site_names_what_the_walk_named_over_torch_nn():
    found = 0
    for path in TORCH_NN:
        source = Source(path.read_bytes())
        assert hook_site(source) == walked_hook_site(source.tree), path
        found += hook_site(source) is not None
    assert found > 5  # torch.nn hooks modules in many files: both answers were compared


MEMBERS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, other):
            super().__init__()
            self.head = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(2, 2))
            self.body = nn.Sequential(nn.ReLU(inplace=True))
            self.tail = nn.Sequential(nn.ReLU(inplace=True))
            self.neck = nn.Sequential(nn.ReLU(inplace=True))
            self.ears = nn.Sequential(nn.ReLU(inplace=True))
            self.arms = nn.Sequential(nn.ReLU(inplace=True))
            self.legs = nn.Sequential(nn.ReLU(inplace=True))
            self.feet = nn.Sequential(nn.ReLU(inplace=True))
            other.body[0] = nn.Identity()
            self.tail[0].inplace = False
            self.neck.insert(0, nn.Identity())
            self.get().ears._modules["0"] = nn.Identity()
            self.arms.forward(1)
            del self.legs[0]

        def forward(self, x):
            return self.tail(self.head(x))


    def build():
        net = nn.Sequential(nn.ReLU(inplace=True))
        kept = nn.Sequential(nn.ReLU(inplace=True))
        moved = nn.Sequential(nn.ReLU(inplace=True))
        grown = nn.Sequential(nn.ReLU(inplace=True))
        net[0] = nn.Identity()
        kept(torch.ones(1))
        grown.append(nn.Identity())
        grown2 = grown
        return net, kept, moved, grown2


    def elsewhere(moved):
        moved[0] = nn.Identity()
        feet = nn.Sequential(nn.ReLU(inplace=True))
        feet.apply(print)
        (lambda: kept.extend([]))()
""")


def _pairs(model: SemanticModel):
    """(key, scope) for every name or attribute the module assigns, as the hazard asks them."""
    for node in model.walk(model.module):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            key = target_key(node.targets[0])
            if key is None:
                continue
            scope = model.enclosing_class(node) if key.startswith("self.") else model.owner(node)
            if scope is not None:
                yield key, scope


def test_members_changed_answers_as_the_walk_did():
    model = SemanticModel(Source(MEMBERS.encode()))
    answers = {key: model.hazards.modules._members_changed(key, scope) for key, scope in _pairs(model)}
    for key, scope in _pairs(model):
        assert model.hazards.modules._members_changed(key, scope) == walked_members_changed(model, key, scope), key
    assert {k for k, changed in answers.items() if changed} == {
        "self.body", "self.tail", "self.neck", "self.ears", "self.legs", "net", "grown", "feet"}


def test_members_changed_answers_as_the_walk_did_over_torch_nn():
    asked = 0
    for path in TORCH_NN:
        model = SemanticModel(Source(path.read_bytes()))
        for key, scope in _pairs(model):
            assert model.hazards.modules._members_changed(key, scope) == walked_members_changed(model, key, scope), \
                (path, key)
            asked += 1
    assert asked > 1000


# Light parts of the analysis a rerun may import: the index's plain data (``project``) and what
# the rules' modules read at import (``syntax``, ``kinds``, ``branches``); nothing that analyses.
_LIGHT = {"codemod.analysis", "codemod.analysis.project", "codemod.analysis.syntax", "codemod.analysis.kinds",
          "codemod.analysis.branches"}


def test_a_rerun_answered_from_the_cache_imports_no_analysis_and_no_libcst(tmp_path):
    import subprocess
    import sys

    from .conftest import ROOT

    (tmp_path / "a.py").write_text("import torch\n\n\ndef f(x):\n    h = torch.sigmoid(x)\n    h += 1\n"
                                   "    return h\n")
    (tmp_path / "b.py").write_text("import torch\nfrom a import f\n\n\ndef g(x):\n    return f(x) * 2\n")
    run = ("import runpy, sys\nsys.argv = ['inplacefix', 'check', '--no-progress', '.']\n"
           "try:\n    runpy.run_module('codemod', run_name='__main__')\nexcept SystemExit:\n    pass\n"
           "print('MODULES', ' '.join(sorted(sys.modules)))\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}

    def modules() -> set:
        out = subprocess.run([sys.executable, "-c", run], cwd=tmp_path, capture_output=True, text=True,
                             env=env, check=True).stdout
        assert "IPF" in out  # the finding, computed then answered from the cache
        return set(out.split("MODULES", 1)[1].split())

    first = modules()
    assert "codemod.analysis.hazard" in first and "codemod.analysis.model" in first  # it analysed
    again = modules()
    analysis = {m for m in again if m.startswith("codemod.analysis")}
    assert analysis <= _LIGHT, sorted(analysis - _LIGHT)
    assert "libcst" not in again and "torch" not in again
