"""Speed work (issue 27, stop 42) that must change no answer: the parts that walked the whole
module for a few node types (classes, names, attributes, calls) read the lists the source's one
walk filed (``Tree.nodes``) instead. Each answer is compared here with the walk it replaced, over
fixtures and the analysis' own sources, and over small cases written for the order-sensitive ones."""

from __future__ import annotations

import ast
import pathlib

import pytest

from codemod.analysis.model import SemanticModel
from codemod.analysis.source import WALKED_GROUPS, Source
from codemod.analysis.syntax import FUNCTIONS, is_const, target_key

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::5] + sorted((ROOT / "codemod" / "analysis").glob("*.py"))

CASE = '''
import torch
import torch.nn as nn

class Base(nn.Module):
    scale = 2
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(3))
        self.register_buffer("b", torch.zeros(3))
        self.w.requires_grad = False
        other.attr = 1
        self.w.requires_grad_(False)
    def helper(self, x):
        return x * 2
    def forward(self, x):
        h = self.helper(x)
        h.detach_()
        return h + self.c

class Child(Base):
    pass

def Child():
    return 1

def f(x):
    setattr(x, "k", 1)
    y = x.requires_grad = False
    return "helper"
'''


def _models():
    yield "case", SemanticModel(Source(CASE.encode()))
    for path in FILES:
        yield str(path.relative_to(ROOT)), SemanticModel(Source(path.read_bytes()))


MODELS = list(_models())


@pytest.mark.parametrize("name,model", MODELS, ids=[n for n, _ in MODELS])
def test_the_module_walks_answer_as_before(name, model):
    tree = model.tree
    walked = list(tree.walk(tree.module))
    for group in WALKED_GROUPS:
        for t in group:
            assert tree.nodes(t) == [n for n in walked if isinstance(n, t)]
    # each function's own returns and the functions defined in it (grad mode's decorators, hooks...)
    for func in walked:
        if isinstance(func, FUNCTIONS):
            below = list(tree.walk(func))
            assert tree.returns(func) == [n for n in below if isinstance(n, ast.Return) and tree.owner(n) is func]
            assert tree.defined_in(func) == [n for n in below if isinstance(n, FUNCTIONS) and tree.owner(n) is func]
    # views: the names of the classes the module's classes extend
    assert model.views.returned.extended() == {b.id for c in walked if isinstance(c, ast.ClassDef)
                                               for b in c.bases if isinstance(b, ast.Name)}
    # tensor kinds: the methods the classes define, how often each name is read
    assert model.kinds.calls._own_methods() == frozenset(
        f.name for c in walked if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, FUNCTIONS))
    uses: dict = {}
    for n in walked:
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            uses[n.id] = uses.get(n.id, 0) + 1
    assert model.kinds.params._name_uses() == uses
    # leaves: what is frozen (as sets: the order of one key's statements is never read), the
    # definitions by name (where there is one), the attributes stored outside
    expected: dict = {}
    for node in walked if ("requires_grad" in tree.source.text or "detach_" in tree.source.text
                           or not tree.source.text.isascii()) else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "requires_grad_" and node.args and is_const(node.args[0], False):
            key = target_key(node.func.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "detach_" and not node.args and not node.keywords:
            key = target_key(node.func.value)
        elif isinstance(node, ast.Assign) and is_const(node.value, False) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "requires_grad":
            key = target_key(node.targets[0].value)
        else:
            continue
        expected.setdefault(key or "*", set()).add(tree.statement_of(node))
    assert {k: set(v) for k, v in model.leaves.frozen().items()} == expected
    defs: dict = {}
    for s in walked:
        if isinstance(s, (*FUNCTIONS, ast.ClassDef)):
            defs.setdefault(s.name, []).append(s)
    got = model.leaves._definitions()
    assert {k: len(v) for k, v in got.items()} == {k: len(v) for k, v in defs.items()}
    assert {k: v for k, v in got.items() if len(v) == 1} == {k: v for k, v in defs.items() if len(v) == 1}
    outside = set()
    for node in walked:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            outside.add(node.attr)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("setattr", "delattr") and len(node.args) >= 2:
            outside.add("*")
    assert model.leaves.chains._stored_outside() == outside
    # holders: every `self.<attr>` read in a class, set elsewhere or not
    for target in walked:
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self" \
                and tree.enclosing_class(target) is not None:
            assert model.holders.attribute_set_elsewhere(target) == _set_elsewhere(tree, walked, target.attr)


def _set_elsewhere(tree, walked, attr) -> bool:
    """``Holders.attribute_set_elsewhere`` as it was: one walk of the module."""
    for node in walked:
        if isinstance(node, ast.Attribute) and node.attr == attr and not isinstance(node.ctx, ast.Load) \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            return False
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(tree.parent(node), ast.ClassDef) \
                and attr in {t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                             if isinstance(t, ast.Name)}:
            return False
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("register_buffer", "register_parameter", "setattr"):
                named = [a for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                if not named or any(a.value == attr for a in named):
                    return False
    return True


def test_the_case_has_what_the_comparisons_need():
    model = SemanticModel(Source(CASE.encode()))
    assert set(model.leaves.frozen()) == {"self.w", "h"}  # (`y = x.requires_grad = False`: two targets)
    assert len(model.leaves._definitions()["Child"]) == 2
    assert model.leaves.chains._stored_outside() == {"attr", "requires_grad", "*"}


# ---------------------------------------------------------------------------------------------
# The index's calls through instances of other modules' classes are looked for only in a module
# that constructs such a class: the same facts as looking in every module.

import torch  # noqa: E402 - torch's own sources are the larger sample

from codemod.analysis import indexing  # noqa: E402
from codemod.analysis.indexing import collect  # noqa: E402
from codemod.analysis.project import module_name  # noqa: E402

TORCH_NN = pathlib.Path(torch.__file__).parent / "nn"
PACKAGE = sorted((TORCH_NN / "modules").glob("*.py"))[::3] + [TORCH_NN / "modules" / "__init__.py"]


def _all_bound(model, module, project, is_package):
    """The bound calls as found before: every module looked at."""
    resolver = indexing._resolver(model, module, project, is_package)
    return [(call, f) for call, f in indexing._instance_calls(model, resolver)]


@pytest.mark.parametrize("path", PACKAGE, ids=lambda p: p.name)
def test_bound_calls_only_where_another_module_s_class_is_built(path):
    project = frozenset(module_name(p) for p in PACKAGE) | {"torch.nn.modules.module", "torch.nn.modules.linear"}
    model = SemanticModel(Source(path.read_bytes()))
    module, is_package = module_name(path), path.name == "__init__.py"
    facts = collect(model, module, project, is_package, arguments=False)
    expected = _all_bound(model, module, project, is_package)
    assert [c.callee for c in facts.calls if c.bound] == [f for _, f in expected]


PKG = {
    "blocks": "import torch.nn as nn\nclass Block(nn.Module):\n    def forward(self, x):\n        return x\n",
    "net": ("import torch.nn as nn\nfrom pkg.blocks import Block\nclass Net(nn.Module):\n"
            "    def __init__(self):\n        self.b = Block()\n    def forward(self, x):\n"
            "        return self.b(x) + Block()(x)\n"),
    "local": ("import torch.nn as nn\nclass Own(nn.Module):\n    def forward(self, x):\n        return x\n"
              "class Net(nn.Module):\n    def __init__(self):\n        self.o = Own()\n"
              "    def forward(self, x):\n        return self.o(x)\n"),
}


def test_bound_calls_of_a_small_package():
    project = frozenset(f"pkg.{m}" for m in PKG)
    found = {}
    for name, text in PKG.items():
        model = SemanticModel(Source(text.encode()))
        facts = collect(model, f"pkg.{name}", project, arguments=False)
        found[name] = [c.callee for c in facts.calls if c.bound]
        assert found[name] == [f for _, f in _all_bound(model, f"pkg.{name}", project, False)]
    # an instance call lists the class's `forward` and its `__call__` (recall49a: a callable class of the project)
    assert found == {"blocks": [], "net": ["pkg.blocks.Block.forward", "pkg.blocks.Block.__call__"] * 2, "local": []}
