"""Objects handed to a constructor and kept (issue 24, stop 57): ``GradCAM(net)`` with
``def __init__(self, net): self.net = net``, then ``self.net(x)`` in a method.

What such an attribute holds is what the constructions of the class pass for the parameter:
:func:`constructed_values` reads them where the set is closed: the class is built only by direct
calls of its name in this module (no subclass, no reference handed on, nothing of another file
of the run importing it or calling it), each call passes the parameter plainly (no ``*args`` /
``**kwargs``), and nothing writes the attribute but the class's own ``self.<attr> = <param>``.
A value that is a local name bound once, before the call, to one expression is followed to that
expression (``net = TinyYOLO(); GradCAM(net)``). Anything else is unknown: None.

The kind of the call's result (``tensor_kind``) and whether it requires grad (``views``) are read
from those values by the parts that ask. This module reads the syntax and the flow only.

The same for a function's parameter (:func:`called_values`, stop 58): ``def elbo_loss(vae, data):
out = vae(data)`` called only as ``elbo_loss(model, x)`` with ``model = BCVAE(...)``: ``vae`` holds
what every call passes, where that set is closed (a module-level function called only by its name
in this module, never handed on, no other file of the run importing or calling it, each call
passing the parameter plainly) and the parameter is never rebound.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Protocol

from codemod.analysis.binder import Binder
from codemod.analysis.calls import Calls
from codemod.analysis.classes import Classes
from codemod.analysis.dataflow import Dataflow
from codemod.analysis.binder import Binding, Flow
from codemod.analysis.syntax import FUNCTIONS, Function, Located, Owner
from codemod.analysis.tree import Tree

_NAME_DEPTH = 3  # a local name bound to a name bound to ... the value


def constructed_values(tree: Tree, binder: Binder, dataflow: Dataflow, classes: Classes, calls: Optional[Calls],
                       cls: ast.ClassDef, attr: str) -> Optional[List[ast.expr]]:
    """The expressions every construction of ``cls`` in this module passes for the ``__init__``
    parameter that ``self.<attr>`` holds, where that parameter is the attribute's only value;
    None where the set is not closed (see the module's docstring) or the attribute holds
    something else too."""
    if tree.parent(cls) is not tree.module:
        return None
    values = classes.class_attrs(cls).get(attr, [])
    if len(values) != 1 or not isinstance(values[0], ast.Name):
        return None
    name = values[0]
    init = tree.owner(name)
    if not (isinstance(init, FUNCTIONS) and init.name == "__init__" and tree.parent(init) is cls):
        return None
    reaching = dataflow.reaching(binder.flow(init), name.id, tree.statement_of(name))
    if not reaching or any(b.form != "param" for b in reaching):
        return None
    if any(not (isinstance(w, ast.Attribute) and isinstance(w.value, ast.Name) and w.value.id == "self"
                and tree.enclosing_class(w) is cls) for w in classes.attribute_writes(attr)):
        return None  # `obj.net = other`, or a subclass's own `self.net = ...`
    built = _constructions(tree, classes, calls, cls)
    if built is None:
        return None
    plain = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    found: List[ast.expr] = []
    for call in built:
        passed = _passed(init, plain, name.id, call)
        value = _followed(TreeFlows(tree, binder, dataflow), passed, 0) if passed is not None else None
        if value is None:
            return None
        found.append(value)
    return found or None


def _constructions(tree: Tree, classes: Classes, calls: Optional[Calls], cls: ast.ClassDef) -> Optional[List[ast.Call]]:
    """The calls ``Cls(...)`` of the module, where its name is used for nothing else (no base of
    another class, no reference, no rebinding) and no other file of the run names the class."""
    if any(isinstance(s, ast.ClassDef) and s is not cls and s.name == cls.name for s in tree.module.body):
        return None
    built = [c for c in classes.calls_in(tree.module).get(cls.name, []) if isinstance(c.func, ast.Name)]
    uses = [n for n in tree.source.walked(ast.Name) if isinstance(n, ast.Name) and n.id == cls.name]
    if not built or len(uses) != len(built) or any(not isinstance(n.ctx, ast.Load) for n in uses):
        return None
    if any(isinstance(a, ast.Starred) for c in built for a in c.args) or any(
            k.arg is None for c in built for k in c.keywords):
        return None
    project = calls.project if calls is not None else None
    if project is not None and calls is not None:
        qualname = f"{calls.module_name}.{cls.name}"
        if project.imported_elsewhere(qualname, calls.module_name) \
                or project.calls_in_other_modules(qualname, calls.module_name):
            return None
    return built


def _passed(init: ast.AST, plain: List[str], param: str, call: ast.Call) -> Optional[ast.expr]:
    """What ``call`` gives ``param`` of ``init``: by keyword, by position, or the default."""
    keyword = next((k.value for k in call.keywords if k.arg == param), None)
    if keyword is not None:
        return keyword
    if param in plain and plain.index(param) < len(call.args):
        return call.args[plain.index(param)]
    args = init.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional[len(positional) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    return defaults.get(param)


class Flows(Protocol):
    """What :func:`called_values` reads: where a node sits and the names' flow (``facts.Facts``
    has it; :class:`TreeFlows` gives it from the parts)."""

    @property
    def module(self) -> ast.Module: ...

    def parent(self, node: ast.AST) -> Optional[ast.AST]: ...

    def owner(self, node: ast.AST) -> Owner: ...

    def statement_of(self, node: Located) -> Located: ...

    def flow(self, owner: Owner, nested: bool = True) -> Flow: ...

    def reaching(self, flow: Flow, key: str, stmt: Located) -> List[Binding]: ...


class TreeFlows:
    """:class:`Flows` of a tree, its binder and its dataflow."""

    def __init__(self, tree: Tree, binder: Binder, dataflow: Dataflow) -> None:
        self.tree, self.binder, self.dataflow = tree, binder, dataflow
        self.module = tree.module

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self.tree.parent(node)

    def owner(self, node: ast.AST) -> Owner:
        return self.tree.owner(node)

    def statement_of(self, node: Located) -> Located:
        return self.tree.statement_of(node)

    def flow(self, owner: Owner, nested: bool = True) -> Flow:
        return self.binder.flow(owner, nested)

    def reaching(self, flow: Flow, key: str, stmt: Located) -> List[Binding]:
        return self.dataflow.reaching(flow, key, stmt)


def called_values(model: Flows, calls: Optional[Calls], func: Function, param: str) -> Optional[List[ast.expr]]:
    """The expressions every call of ``func`` passes for its parameter ``param``, where that set
    is closed (see the module's docstring); None where it is not, or the body rebinds ``param``."""
    if calls is None or model.parent(func) is not model.module or func.decorator_list:
        return None
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)]
    if param not in plain and param not in [a.arg for a in args.kwonlyargs]:
        return None
    bound = model.flow(func).bindings.get(param, [])
    if len(bound) != 1 or bound[0].form != "param":
        return None
    sites = calls.sites(func)
    if not sites or any(not s.called or not isinstance(s.node, ast.Call) or not isinstance(s.node.func, ast.Name)
                        for s in sites):
        return None
    project, qualname = calls.project, calls.qualname(func)
    if project is not None and (qualname is None or project.imported_elsewhere(qualname, calls.module_name)
                                or project.calls_in_other_modules(qualname, calls.module_name)):
        return None
    found: List[ast.expr] = []
    for site in sites:
        call = site.node
        assert isinstance(call, ast.Call)
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        passed = _passed(func, plain, param, call)
        value = _followed(model, passed, 0) if passed is not None else None
        if value is None:
            return None
        found.append(value)
    return found


def _followed(model: Flows, value: ast.expr, depth: int) -> Optional[ast.expr]:
    """``value``, or where it is a local name of a function, the one expression every binding
    reaching it assigns (``net = TinyYOLO()``); None where that is not one plain assignment."""
    if not isinstance(value, ast.Name):
        return value
    owner = model.owner(value)
    if not isinstance(owner, FUNCTIONS) or depth >= _NAME_DEPTH:
        return None
    reaching = model.reaching(model.flow(owner), value.id, model.statement_of(value))
    if len(reaching) != 1 or reaching[0].form != "assign" or reaching[0].value is None \
            or not isinstance(reaching[0].stmt, ast.Assign) or len(reaching[0].stmt.targets) != 1:
        return None
    return _followed(model, reaching[0].value, depth + 1)
