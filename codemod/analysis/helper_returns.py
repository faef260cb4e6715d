"""Which function of the file a call runs, for what it returns from what it is handed.

``q, mean = super().remove_mean(p.detach())`` hands a helper only what requires no grad; when
every value the helper returns is made from its parameters, constants and torch ops (no
attribute of ``self``, no global, no call it cannot read), nothing it returns can require grad
either (``requires_grad.Constants`` asks this). This part only names the helper: where the file
shows the one function a call can run, and which of its parameters is the receiver (``self`` or
``cls``: never a value handed by the call).

- ``helper(x)``: a module-level ``def`` the module binds once, no local of the caller's name;
- ``self.m(x)``: ``m`` of the caller's class, or of the one base class of the file it extends
  (a few levels up), where no class of the file extends the caller's class and nothing assigns
  an attribute ``m`` (``self.m = ...``, ``obj.m = ...``);
- ``super().m(x)``: ``m`` of the caller's one base class of the file (or one above it);
- ``C.m(x)``: a ``staticmethod`` of a top-level class ``C`` (or of its base classes of the file).

A method is followed undecorated or as a ``staticmethod``/``classmethod`` only; a class with more
than one base on the way leaves the call unresolved.

Where the chain of base classes leaves the file for another file of the run (``class
UnifQuantizer(Quantizer)``, ``Quantizer`` imported), the project index names the method
(:meth:`HelperCalls.foreign`: ``project.method_of`` up the classes' one-base chain) and says
whether its returns are constant when it is handed constants (``FunctionFact.constant_returns``,
computed in its own file); ``self.m(x)`` only where no class of the run may extend the caller's.
"""

from __future__ import annotations

import ast
from typing import Optional, Set, Tuple, cast

from codemod.analysis.facts import Facts, head_name, project_name
from codemod.analysis.project import extended, method_of
from codemod.analysis.syntax import FUNCTIONS, Function

_LEVELS = 4  # base classes climbed


class HelperCalls:
    """The helpers calls run (:func:`helper_of`), with the file's extended classes read once."""

    def __init__(self, model: Facts) -> None:
        self.model = model
        self._extended: Optional[Set[str]] = None

    def of(self, call: ast.Call) -> Optional[Tuple[Function, Optional[str]]]:
        if self._extended is None:
            self._extended = _extended(self.model)
        return helper_of(self.model, call, self._extended)

    def foreign(self, call: ast.Call) -> Optional[Tuple[str, bool]]:
        """The qualified name of the method of another file of the run that ``call`` runs
        (``super().m(x)``, ``self.m(x)``, ``C.m(x)``), where the file's chain of one base each
        leads there and the index names it (none where the file itself shows a method), and
        whether the call hands its receiver as its first argument (``C.m(obj, x)``)."""
        found = self._foreign(call)
        return (found[0], found[1]) if found is not None and found[0] is not None else None

    def _foreign(self, call: ast.Call) -> Optional[Tuple[Optional[str], bool]]:
        index = self.model.project
        func = call.func
        if index is None or not isinstance(func, ast.Attribute) or self.model.attribute_writes(func.attr):
            return None
        if self._extended is None:
            self._extended = _extended(self.model)
        receiver, model = func.value, self.model
        if isinstance(receiver, ast.Name) and receiver.id == "self" or isinstance(receiver, ast.Call) \
                and isinstance(receiver.func, ast.Name) and receiver.func.id == "super" \
                and not receiver.args and not receiver.keywords:
            cls = model.enclosing_class(call)
            if cls is None or model.module.body.count(cls) != 1:
                return None
            if isinstance(receiver, ast.Name):  # `self.m`: an override in a subclass would run
                if func.attr in model.class_attrs(cls) or cls.name in self._extended \
                        or extended(index, f"{model.module_name}.{cls.name}"):
                    return None
                return _foreign_method(model, cls, func.attr, 0, include=True), False
            return _foreign_method(model, cls, func.attr, 0, include=False), False
        if isinstance(receiver, (ast.Name, ast.Attribute)) and _top_level(model, head_name(receiver)) is None:
            name = project_name(model, receiver)
            return (method_of(index, name, func.attr), True) if name is not None else None
        return None


def helper_of(model: Facts, call: ast.Call, extended: Set[str]) -> Optional[Tuple[Function, Optional[str]]]:
    """The function ``call`` runs and the name of its receiver parameter (None for a plain
    function or a ``staticmethod``), where the file shows it alone (``extended``: the names of
    the classes the file's classes extend); None otherwise."""
    func = call.func
    if isinstance(func, ast.Name):
        return _module_function(model, func)
    if not isinstance(func, ast.Attribute):
        return None
    receiver = func.value
    if isinstance(receiver, ast.Name) and receiver.id == "self":
        cls = model.enclosing_class(call)
        if cls is None or model.module.body.count(cls) != 1 or func.attr in model.class_attrs(cls) \
                or model.attribute_writes(func.attr) or cls.name in extended:
            return None
        return _method(model, cls, func.attr, 0)
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super" \
            and not receiver.args and not receiver.keywords:
        cls = model.enclosing_class(call)
        if cls is None or model.module.body.count(cls) != 1 or model.attribute_writes(func.attr):
            return None
        base = _one_base(model, cls)
        return _method(model, base, func.attr, 1) if base is not None else None
    if isinstance(receiver, ast.Name):
        top = _top_level(model, receiver.id)
        if not isinstance(top, ast.ClassDef) or model.attribute_writes(func.attr):
            return None
        found = _method(model, top, func.attr, 0)
        return found if found is not None and found[1] is None else None  # `C.m(x)`: a staticmethod only
    return None


def _module_function(model: Facts, name: ast.Name) -> Optional[Tuple[Function, Optional[str]]]:
    if any(isinstance(a, FUNCTIONS) and name.id in model.flow(a).bindings for a in model.ancestors(name)):
        return None  # a local, or an enclosing function's name
    top = _top_level(model, name.id)
    if not isinstance(top, FUNCTIONS) or top.decorator_list:
        return None
    return top, None


def _top_level(model: Facts, name: str) -> Optional[ast.stmt]:
    """The module's one top-level statement binding ``name`` (a ``def`` or a ``class``)."""
    bound = model.flow(model.module, nested=False).bindings.get(name, [])
    if len(bound) != 1:
        return None
    stmt = bound[0].stmt
    return stmt if isinstance(stmt, (*FUNCTIONS, ast.ClassDef)) and stmt in model.module.body else None


def _extended(model: Facts) -> Set[str]:
    """The names of the classes the file's classes extend (their methods may be overridden)."""
    return {b.id if isinstance(b, ast.Name) else b.attr for c in model.source.walked(ast.ClassDef)
            for b in cast(ast.ClassDef, c).bases if isinstance(b, (ast.Name, ast.Attribute))}


def _one_base(model: Facts, cls: ast.ClassDef) -> Optional[ast.ClassDef]:
    """The one base class of ``cls``, a top-level class of the file."""
    if len(cls.bases) != 1 or not isinstance(cls.bases[0], ast.Name):
        return None
    base = _top_level(model, cls.bases[0].id)
    return base if isinstance(base, ast.ClassDef) else None


def _method(model: Facts, cls: ast.ClassDef, name: str, depth: int) -> Optional[Tuple[Function, Optional[str]]]:
    """``name`` as ``cls`` defines it, or the base classes of the file above it (one base each)."""
    bound = [s for s in cls.body if isinstance(s, FUNCTIONS) and s.name == name
             or isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                 isinstance(t, ast.Name) and t.id == name for t in ast.walk(s) if isinstance(t, ast.Name))]
    if len(bound) > 1 or bound and not isinstance(bound[0], FUNCTIONS):
        return None
    if not bound:
        base = _one_base(model, cls) if depth < _LEVELS else None
        return _method(model, base, name, depth + 1) if base is not None else None
    method = bound[0]
    assert isinstance(method, FUNCTIONS)
    decorators = [d.id for d in method.decorator_list if isinstance(d, ast.Name)]
    if len(decorators) != len(method.decorator_list) or len(decorators) > 1 \
            or decorators and decorators[0] not in ("staticmethod", "classmethod"):
        return None
    if decorators == ["staticmethod"]:
        return method, None
    params = [a.arg for a in (*method.args.posonlyargs, *method.args.args)]
    return (method, params[0]) if params else None


def _foreign_method(model: Facts, cls: ast.ClassDef, name: str, depth: int, include: bool) -> Optional[str]:
    """Up the file's chain of one base each from ``cls`` (itself too with ``include``): None where a
    class of the file on the way binds ``name`` (the file shows the method: ``helper_of``); the
    index's method where the chain reaches a class of another file of the run."""
    if include and any(isinstance(s, FUNCTIONS) and s.name == name or isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
                       and any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(s)) for s in cls.body):
        return None
    if depth >= _LEVELS or len(cls.bases) != 1 or not isinstance(cls.bases[0], (ast.Name, ast.Attribute)):
        return None
    base = cls.bases[0]
    local = _top_level(model, base.id) if isinstance(base, ast.Name) else None
    if isinstance(local, ast.ClassDef):
        return _foreign_method(model, local, name, depth + 1, include=True)
    if local is not None:
        return None
    found = project_name(model, base)
    index = model.project
    return method_of(index, found, name, _LEVELS - depth) if found is not None and index is not None else None
