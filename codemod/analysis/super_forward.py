"""Which ``forward`` of the file ``super().forward(x)`` / ``super(Cls, self).forward(x)`` runs.

``output = super(EmbeddingNetL2, self).forward(x)`` runs the parent class's ``forward``; where
that class is of the file, kept.py asks whether *it* keeps what it returns. Named only where the
method resolution order is certain:

- the call is in a method of a top-level class ``Cls`` of the file that no class of the file (nor
  of the run, per the project index) extends: a subclass with more bases could put another
  class between ``Cls`` and its base;
- ``super()`` bare, or ``super(Cls, self)`` naming the enclosing class and the method's own
  first parameter (not rebound); ``super`` itself not rebound in the file;
- from ``Cls`` up to the class defining ``forward``: one base each, a top-level class of the file,
  no metaclass or other class keyword, no decorator, no ``__getattr__``/``__getattribute__``/
  ``__call__``/``__class__``; the ``forward`` found is an undecorated method;
- no name the parent's ``forward`` (or a method of the chain it calls as ``self.m``) reads as
  ``self.<name>`` is defined or stored by a class below it on the chain (``self.fc = Keeper()``
  in the subclass would make the parent's ``forward`` run the subclass's keeper).
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set, cast

from codemod.analysis.facts import Facts
from codemod.analysis.helper_returns import _extended, _top_level
from codemod.analysis.project import extended
from codemod.analysis.syntax import FUNCTIONS, Function

_LEVELS = 4
_TRICKS = frozenset({"__getattr__", "__getattribute__", "__call__", "__class__", "__init_subclass__"})


def super_forward(model: Facts, call: ast.Call) -> Optional[Function]:
    """The parent's ``forward`` ``call`` runs (see the module docstring); None where not certain."""
    cls = _certain_super(model, call)
    if cls is None or cls.name in _extended(model) or model.project is not None \
            and extended(model.project, f"{model.module_name}.{cls.name}"):
        return None
    chain = _chain(model, cls)
    if chain is None:
        return None
    below, owner = chain[:-1], chain[-1]
    forward = _defined(owner, "forward")
    if not isinstance(forward, FUNCTIONS) or forward.decorator_list:
        return None
    overridden = set().union(*(_names(c) for c in below))
    reads = _reads(model, forward, chain[1:])
    if reads & overridden or "*" in reads or "*" in overridden:  # (`getattr(self, name)`: any name)
        return None
    return forward


# What a subclass of a torch layer may define without changing what the layer's own ``forward``
# computes from its input: its construction, its ``forward`` (which makes the call), its printout.
_KEPT_LAYER_METHODS = frozenset({"__init__", "forward", "extra_repr", "reset_parameters"})


def super_torch_layer(model: Facts, call: ast.Call) -> Optional[str]:
    """``super().forward(x)`` in the ``forward`` of ``class Conv2d(nn.Conv2d)``: the torch layer
    class (``torch.nn.Conv2d``) whose ``forward`` it runs, so that it saves what that layer saves
    (its input, for a convolution). Only where the method resolution order is certain, as for
    :func:`super_forward` (no class of the file or of the run extends the class), the class has
    that one base, written as a torch ``nn`` class, no metaclass, decorator or attribute tricks,
    and it defines no method but its construction, ``forward``, ``extra_repr`` and
    ``reset_parameters`` and stores nothing the layer calls (``forward`` or a private name
    ending in ``forward``, ``self._conv_forward = ...``; no ``setattr`` of a computed name).
    The call hands its input by place, alone (``super().forward(x)``)."""
    cls = _certain_super(model, call)
    if cls is None or len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return None
    if cls.keywords or cls.decorator_list or len(cls.bases) != 1 or _names(cls) & _TRICKS:
        return None
    name = model.torch_name(cls.bases[0])
    short = name.rsplit(".", 1)[-1] if name else ""
    if name is None or not name.startswith("torch.nn.") or not short[:1].isupper() or _extends(model, cls):
        return None
    methods = {s.name for s in cls.body if isinstance(s, (*FUNCTIONS, ast.ClassDef))}
    stored = _names(cls) - methods
    if not methods <= _KEPT_LAYER_METHODS or "*" in stored or any(n.endswith("forward") for n in stored):
        return None
    return f"torch.nn.{short}"


def _extends(model: Facts, cls: ast.ClassDef) -> bool:
    """Some class of the file or of the run may extend ``cls`` (as :func:`extended`, by its
    name, but a base naming a torch class is none: ``class Conv2d(nn.Conv2d)`` extends torch's)."""
    for other in model.source.walked(ast.ClassDef):
        for base in cast(ast.ClassDef, other).bases:
            named = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else None
            if other is not cls and named == cls.name and not (model.torch_name(base) or "").startswith("torch."):
                return True
    project = model.project
    if project is None:
        return False
    own = f"{model.module_name}.{cls.name}"
    return any(b.rpartition(".")[2].lstrip("?") == cls.name and not b.startswith("torch.")
               for c in project.classes.values() if c.qualname != own for b in c.bases)


def _certain_super(model: Facts, call: ast.Call) -> Optional[ast.ClassDef]:
    """The class whose method makes ``call``, a ``super().forward(...)`` (or ``super(Cls,
    self).forward(...)``) that surely starts above it (whether a class extends it is the
    caller's to ask)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "forward" and isinstance(func.value, ast.Call)):
        return None
    sup = func.value
    if not (isinstance(sup.func, ast.Name) and sup.func.id == "super") or sup.keywords \
            or "super" in model.flow(model.module, nested=False).bindings:
        return None
    cls = model.enclosing_class(call)
    method = model.owner(call)
    if cls is None or not isinstance(method, FUNCTIONS) or method not in cls.body \
            or model.module.body.count(cls) != 1 or _top_level(model, cls.name) is not cls:
        return None
    params = [a.arg for a in (*method.args.posonlyargs, *method.args.args)]
    if not params or method.decorator_list:
        return None
    if sup.args:
        if len(sup.args) != 2 or not all(isinstance(a, ast.Name) for a in sup.args):
            return None
        named, receiver = sup.args
        assert isinstance(named, ast.Name) and isinstance(receiver, ast.Name)
        if named.id != cls.name or receiver.id != params[0] \
                or any(not isinstance(b.stmt, ast.arg) for b in model.flow(method).bindings.get(params[0], [])) \
                or params[0] in model.flow(method).declared:
            return None
    return cls


def _chain(model: Facts, cls: ast.ClassDef) -> Optional[List[ast.ClassDef]]:
    """``cls`` and its bases of the file up to the first that defines ``forward`` (``cls`` excluded
    from the search: ``super()`` starts above it)."""
    chain = [cls]
    current = cls
    for _ in range(_LEVELS):
        if current.keywords or current.decorator_list or _names(current) & _TRICKS \
                or len(current.bases) != 1 or not isinstance(current.bases[0], ast.Name):
            return None
        base = _top_level(model, current.bases[0].id)
        if not isinstance(base, ast.ClassDef) or model.module.body.count(base) != 1:
            return None
        chain.append(base)
        if base.keywords or base.decorator_list or _names(base) & _TRICKS:
            return None
        if _defined(base, "forward") is not None:
            return chain
        current = base
    return None


def _defined(cls: ast.ClassDef, name: str) -> Optional[ast.stmt]:
    bound = [s for s in cls.body if isinstance(s, (*FUNCTIONS, ast.ClassDef)) and s.name == name
             or isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
             and any(isinstance(t, ast.Name) and t.id == name for t in ast.walk(s))]
    return bound[0] if len(bound) == 1 else (cls if bound else None)


def _names(cls: ast.ClassDef) -> Set[str]:
    """What ``cls`` defines in its body or stores on an instance (``self.fc = ...``, any receiver)."""
    names = {s.name for s in cls.body if isinstance(s, (*FUNCTIONS, ast.ClassDef))}
    for s in cls.body:
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            names |= {t.id for t in ast.walk(s) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
    names |= {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
    names |= {n.args[1].value for n in ast.walk(cls) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
              and n.func.id == "setattr" and len(n.args) > 1 and isinstance(n.args[1], ast.Constant)
              and isinstance(n.args[1].value, str)}
    if any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "setattr"
           and not (len(n.args) > 1 and isinstance(n.args[1], ast.Constant)) for n in ast.walk(cls)):
        names.add("*")
    return names


def _reads(model: Facts, forward: Function, above: List[ast.ClassDef]) -> Set[str]:
    """The ``self.<name>`` reads of ``forward`` and of the chain's methods it calls that way;
    ``*`` where it reads through ``getattr``/``self.__dict__`` (any name)."""
    seen: Set[str] = set()
    pending: List[Function] = [forward]
    done: Set[int] = set()
    while pending:
        func = pending.pop()
        if id(func) in done:
            continue
        done.add(id(func))
        receiver = ([a.arg for a in (*func.args.posonlyargs, *func.args.args)] or [""])[0]
        for node in ast.walk(func):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == receiver:
                seen.add(node.attr)
                for cls in above:
                    found = _defined(cls, node.attr)
                    if isinstance(found, FUNCTIONS):
                        pending.append(found)
                        break
            elif isinstance(node, ast.Name) and node.id in ("getattr", "vars", "super"):
                seen.add("*")
    return seen
