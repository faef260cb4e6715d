"""Injected callables: what a callable handed to a constructor and stored runs (issue 24, stop 44).

``Residual(fn)`` keeps ``self.fn = fn`` and its ``forward`` calls ``self.fn(x)``; ``Layer(d,
activation=None)`` keeps ``self.activation = activation``. What such a call runs is what the
constructions of the class pass for the parameter: followed here through parameters handed on
(``Net(act=...)`` builds ``Layer(d, act)``, whose ``__init__`` stores it) and names bound once,
down to the expressions written at the end of the chain (``nn.Sequential(nn.LayerNorm(d), ...)``,
``nn.ReLU()``, ``Gate(d)``, ``torch.tanh``). The set is closed or nothing is said: every
construction the file and the run's other files show is followed (``Chains._param_values``, handed
in as ``ParamValues``: None where a caller may be unseen, another file passes something other
than a literal, or a parameter is left to no default), and one value that is no plain expression
of the file (an import, a loop variable, an unpacked element) leaves it unknown.

Which of those expressions saves what is the callers' business (``summaries.CallTargets`` for
chains and the project's classes, ``hazard.OpSaves`` for torch modules and functions): a save is
proven only where every expression makes it. This module reads the syntax and the flow only.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, List, NamedTuple, Optional, Sequence, Set, Tuple, cast

from codemod.analysis.facts import Facts
from codemod.analysis.syntax import FUNCTIONS, Function

# The values an expression may hold, as ``Chains._param_values`` joins them (None: not known).
Values = Callable[[ast.expr, int], Optional[FrozenSet[object]]]
# ``Chains._param_values(func, param, depth, values)``: what the calls of ``func`` (a class's
# ``__init__`` or a module-level function) give ``param``, each through ``values``.
ParamValues = Callable[[Function, str, int, Values], Optional[FrozenSet[object]]]

_MAX_DEPTH = 6  # parameters handed on through this many constructions


class Stored(NamedTuple):
    """``self.<attr> = <param>`` in ``init``: the one value the class gives the attribute."""

    init: Function
    param: str
    called: bool = False  # ``self.net = make_net(i, o)``: what calling the parameter returns is kept


class Foreign(ast.expr):
    """What a construction in another file passes, as the index says (``project.HANDED``:
    ``new:pkg.mod.RMSELoss``, ``torch-new:torch.nn.ReLU``...): an expression of no file, placed
    after every line of this one (``passed`` sorts by place). Only this module's readers
    (``summaries.passed_target``, ``hazard`` on torch callables) make anything of it; any
    other reading of an expression sees no literal, no name, no call: unknown."""

    _fields = ()

    def __init__(self, what: str) -> None:
        super().__init__(lineno=1 << 30, col_offset=0, end_lineno=1 << 30, end_col_offset=0)
        self.what = what

    @property
    def kind(self) -> str:
        return self.what.partition(":")[0]

    @property
    def name(self) -> str:
        return self.what.partition(":")[2]


class Passed(NamedTuple):
    """One expression a construction passes (at the end of the chain of parameters), hashable by node."""

    expr: ast.expr


def stored_parameter(model: Facts, cls: ast.ClassDef, values: Sequence[object], attr: str) -> Optional[Stored]:
    """``self.fn = fn`` where ``values`` (what the class sets ``self.<attr>`` to) is that one name,
    in ``cls.__init__``, reached only by the parameter; None otherwise, or where a subclass of the
    file sets the attribute too (its instances hold what it sets). ``self.net = make_net(i, o)``,
    the parameter called (a factory handed in: ``lambda i, o: Net(i, o)``): ``Stored.called``.
    Whether the attribute is replaced from outside is the caller's check
    (``summaries.set_from_outside``)."""
    if len(values) != 1:
        return None
    value = values[0]
    called = isinstance(value, ast.Call) and isinstance(value.func, ast.Name)
    name = cast(ast.Call, value).func if called else value
    if not isinstance(name, ast.Name):
        return None
    init = model.owner(name)
    if not (isinstance(init, FUNCTIONS) and init.name == "__init__" and model.parent(init) is cls):
        return None
    bindings = model.reaching(model.flow(init), name.id, model.statement_of(name))
    if not bindings or any(b.form != "param" for b in bindings):
        return None
    if _set_by_a_subclass(model, cls, attr):
        return None
    return Stored(init, name.id, called)


def made(expr: ast.expr) -> Optional[ast.expr]:
    """What calling a factory handed in returns, where it shows: the body of ``lambda i, o:
    Net(i, o)``, or the ``injected.Foreign`` of what another file's lambda builds; None else."""
    if isinstance(expr, ast.Lambda):
        return expr.body
    if isinstance(expr, Foreign) and expr.kind == "lambda":
        return Foreign(expr.name)
    return None


def _set_by_a_subclass(model: Facts, cls: ast.ClassDef, attr: str) -> bool:
    """A class of the file derived from ``cls`` (at any depth) writes ``self.<attr>``."""
    derived: Set[str] = {cls.name}
    classes = [s for s in model.module.body if isinstance(s, ast.ClassDef)]
    grew = True
    while grew:
        grew = False
        for other in classes:
            if other.name not in derived and any(isinstance(b, ast.Name) and b.id in derived for b in other.bases):
                derived.add(other.name)
                grew = True
    for write in model.attribute_writes(attr):
        owner = model.enclosing_class(write)
        if owner is not None and owner is not cls and owner.name in derived:
            return True
    return False


def passed(model: Facts, stored: Stored, param_values: ParamValues,
           used_elsewhere: Callable[[ast.ClassDef], bool]) -> Optional[List[ast.expr]]:
    """The expressions every construction of the class passes for the stored parameter (its
    default where one passes none), parameters handed on followed; None where one is unseen:
    where another file may build one of the family (the class, or one of the file derived from
    it) with arguments ``param_values`` does not follow (``used_elsewhere``: a subclass there)."""
    cls = model.parent(stored.init)
    if not isinstance(cls, ast.ClassDef):
        return None
    top = {s.name: s for s in model.module.body if isinstance(s, ast.ClassDef)}
    family = [cls, *(other for other in top.values() if other is not cls and _derives(other, cls, top))]
    if any(not _built_only_by_calls(model, c) or used_elsewhere(c) for c in family):
        return None

    def values(expr: ast.expr, depth: int) -> Optional[FrozenSet[object]]:
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Name) and model.torch_name(expr) is None:
            return _name_values(model, expr, depth, values, param_values)
        return frozenset({Passed(expr)})

    found = param_values(stored.init, stored.param, 0, values)
    if found is None or not found:
        return None
    if not all(isinstance(p, Passed) for p in found):
        return None
    return sorted((cast(Passed, p).expr for p in found), key=lambda e: (e.lineno, e.col_offset))  # (in file order)


def _built_only_by_calls(model: Facts, cls: ast.ClassDef) -> bool:
    """The file names ``cls`` only to build it (``Cls(...)``), derive from it or test an instance
    (``isinstance``, ``super(Cls, self)``), and its methods build no instance of their own class
    (``cls(...)``, ``type(self)(...)``, ``self.__class__(...)``): a class handed on as a value
    (a registry, a ``partial``, a factory's argument) is built with arguments no call here shows."""
    for node in model.mentions(cls.name):
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            continue
        up = model.parent(node)
        if isinstance(up, ast.Call) and (up.func is node or isinstance(up.func, ast.Name) and up.func.id in (
                "isinstance", "issubclass", "super")):
            continue
        if isinstance(up, ast.ClassDef) and node in up.bases:
            continue
        if isinstance(up, ast.Tuple) and isinstance(model.parent(up), ast.Call):
            continue  # `isinstance(m, (Cls, Other))`
        return False
    for call in ast.walk(cls):
        func = call.func if isinstance(call, ast.Call) else None
        if isinstance(func, ast.Name) and func.id == "cls" or isinstance(func, ast.Call) and isinstance(
                func.func, ast.Name) and func.func.id == "type" or isinstance(func, ast.Attribute) and func.attr == "__class__":
            return False
    return True


def _name_values(model: Facts, name: ast.Name, depth: int, values: Values,
                 param_values: ParamValues) -> Optional[FrozenSet[object]]:
    """What a name may hold where it is read: a parameter of a constructor or a module-level
    function (what their calls pass), a name bound by whole assignments, or a function defined at
    the top of the file (the name itself: it runs as it is); None for anything else (an import, a
    loop variable, an unpacked element, another global)."""
    owner = model.owner(name)
    bindings = model.reaching(model.flow(owner), name.id, model.statement_of(name))
    if not bindings and owner is not model.module:
        bindings = model.flow(model.module).bindings.get(name.id, [])  # a global: a function of the file?
        return frozenset({Passed(name)}) if len(bindings) == 1 and _top_function(model, bindings[0].stmt) else None
    if not bindings:
        return None
    out: FrozenSet[object] = frozenset()
    for b in bindings:
        if b.form == "def" and _top_function(model, b.stmt):
            found: Optional[FrozenSet[object]] = frozenset({Passed(name)})  # `Residual(block_fn)`
        elif b.form == "param" and isinstance(owner, FUNCTIONS):
            found = param_values(owner, name.id, depth + 1, values)
        elif b.form == "assign" and b.value is not None:
            found = values(b.value, depth + 1)
        else:
            found = None
        if found is None:
            return None
        out |= found
    return out


def _top_function(model: Facts, stmt: object) -> bool:
    """``stmt`` is a function defined at the module's top level (not a class, not an import)."""
    return isinstance(stmt, FUNCTIONS) and model.parent(stmt) is model.module


def overrides(model: Facts, cls: ast.ClassDef, attr: str, closed: Callable[[ast.ClassDef], bool]
              ) -> Optional[List[Tuple[Function, ast.ClassDef]]]:
    """A template method's hook: ``self.compute(...)`` in a method of ``cls``, which neither it
    nor its bases of the file define but as ``raise NotImplementedError``, runs the ``compute``
    of the instance's class: for each class of the file derived from ``cls`` (and ``cls``), the
    nearest definition up its chain of bases. A chain whose nearest one is abstract, or that
    ends at ``object`` with none, raises before anything runs after the call (it adds nothing).
    None where one may run something unseen: a chain reaching a base of another module (it may
    define the name: ``nn.Module.train``), several bases, the name set as an attribute, a
    decorated definition, or a class of the chain used where the file cannot see
    (``closed``: another file may derive from it)."""
    if attr.startswith("__"):
        return None
    top = {s.name: s for s in model.module.body if isinstance(s, ast.ClassDef)}
    place = {id(s): i for i, s in enumerate(model.module.body)}
    derived = [cls]
    for other in top.values():  # (in file order: a base comes first)
        if other is not cls and _derives(other, cls, top):
            derived.append(other)
    found: List[Tuple[Function, ast.ClassDef]] = []
    for start in derived:
        if not closed(start):
            return None
        step: Optional[ast.ClassDef] = start
        while step is not None:
            if attr in model.class_attrs(step):
                return None  # `self.compute = ...`: an attribute, not (only) the method
            method = next((s for s in step.body if isinstance(s, FUNCTIONS) and s.name == attr), None)
            if method is not None:
                if method.decorator_list:
                    return None
                if not abstract(method):
                    found.append((method, step))
                break
            if not step.bases:
                break  # `object` defines no such name
            if len(step.bases) != 1 or not isinstance(step.bases[0], ast.Name) or step.bases[0].id not in top:
                return None  # a base this file does not show (or several)
            base = top[step.bases[0].id]
            if place[id(base)] >= place.get(id(step), len(place)):  # (a nested class runs after the module)
                # the name's last class is this one or one below it (`class GCNConv(GCNConv)` over an
                # import): not what the name holds where the class runs; following it never ended
                return None
            step = base
    if not found:
        return None
    return list(dict.fromkeys(found))


def _derives(other: ast.ClassDef, cls: ast.ClassDef, top: Dict[str, ast.ClassDef], depth: int = 0) -> bool:
    """``other`` is derived from ``cls`` through the file's classes (by name)."""
    if depth > 8:
        return False
    for base in other.bases:
        if isinstance(base, ast.Name) and (base.id == cls.name or (
                base.id in top and top[base.id] is not other and _derives(top[base.id], cls, top, depth + 1))):
            return True
    return False


def abstract(method: Function) -> bool:
    """Its body (after a docstring) is only ``raise NotImplementedError(...)``: a run raises there."""
    body = [s for s in method.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc
    name = exc.func if isinstance(exc, ast.Call) else exc
    return isinstance(name, ast.Name) and name.id == "NotImplementedError"
