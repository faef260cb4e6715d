"""A name indexed with a string is a mapping there, never a tensor.

A tensor refuses a ``str`` index (``IndexError``), so where a function reads or writes
``data[key]`` with ``key`` a string, ``data`` holds a dict (nequip's ``AtomicDataDict.Type``,
``Dict[str, Tensor]``): ``data[key] = v`` replaces an entry, it writes into no tensor. A key is a
string where it is a literal (``"pos"``, an f-string), a parameter annotated ``str`` that the
function never rebinds, a name bound only to string literals, or ``self.<attr>`` whose every
value in its class is such a string (``self.field = field`` with ``field: str``), or a constant
of another module of the run that the project index shows bound to string literals only
(``data[AtomicDataDict.NODE_ATTRS_KEY]``, ``from keys import NODE_KEY``, ``import pkg.keys as k;
k.NODE_KEY``; ``*`` imports followed: ``project.string_constant``). Only uses that the same
bindings of the name reach count (``data = tensor`` in between breaks the link).
"""

from __future__ import annotations

import ast
from typing import FrozenSet, List, Optional

from codemod.analysis.binder import Binding
from codemod.analysis.facts import Facts, project_name
from codemod.analysis.project import string_constant
from codemod.analysis.syntax import Located, Pos


def string_key(model: Facts, key: ast.expr, depth: int = 0) -> bool:
    """``key`` is surely a ``str`` (see the module)."""
    if isinstance(key, ast.JoinedStr) or isinstance(key, ast.Constant) and isinstance(key.value, str):
        return True
    if depth > 2:
        return False
    if isinstance(key, (ast.Name, ast.Attribute)) and model.project is not None:
        name = project_name(model, key)
        if name is not None and string_constant(model.project, name):
            return True  # a string constant of another module of the run
    if isinstance(key, ast.Name):
        owner = model.owner(model.statement_of(key))
        flow = model.flow(owner)
        bindings = model.reaching(flow, key.id, model.statement_of(key))
        if not bindings:
            return False
        for binding in bindings:
            if binding.form == "param":
                if not _annotated_str(binding.stmt):
                    return False
            elif binding.form != "assign" or binding.value is None or not string_key(model, binding.value, depth + 1):
                return False
        return True
    if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name) and key.value.id == "self":
        cls = model.enclosing_class(key)
        values = model.class_attrs(cls).get(key.attr, []) if cls is not None else []
        return bool(values) and all(isinstance(v, ast.expr) and string_key(model, v, depth + 1) for v in values) \
            and all(_own_write(model, w, cls) for w in model.attribute_writes(key.attr))
    return False


def _own_write(model: Facts, write: ast.expr, cls: Optional[ast.ClassDef]) -> bool:
    """``self.<attr> = ...`` in ``cls``, or in another class of the file that does not extend
    it (which sets its own instances'), never ``obj.<attr> = ...``."""
    if not (isinstance(write, ast.Attribute) and isinstance(write.value, ast.Name) and write.value.id == "self"):
        return False
    other = model.enclosing_class(write)
    return other is cls or cls is not None and other is not None and not any(
        isinstance(b, ast.Name) and b.id == cls.name or isinstance(b, ast.Attribute) and b.attr == cls.name
        for b in other.bases)


def _annotated_str(arg: Located) -> bool:
    return isinstance(arg, ast.arg) and isinstance(arg.annotation, ast.Name) and arg.annotation.id == "str"


def indexed_by_string(model: Facts, target: ast.AST, node: Located) -> bool:
    """``target`` (a name) is indexed with a string key in the function around ``node``, where
    the bindings that reach ``node`` reach that use too (the same value)."""
    if not isinstance(target, ast.Name):
        return False
    stmt = model.statement_of(node)
    owner = model.owner(stmt)
    flow = model.flow(owner)
    here = _starts(model.reaching(flow, target.id, stmt))
    if not here:
        return False
    for _, load in flow.loads.get(target.id, []):
        parent = model.parent(load)
        if not (isinstance(parent, ast.Subscript) and parent.value is load):
            continue
        index = parent.slice
        parts = index.elts if isinstance(index, ast.Tuple) else [index]
        if any(string_key(model, p) for p in parts) \
                and _starts(model.reaching(flow, target.id, model.statement_of(load))) == here:
            return True
    return False


def _starts(bindings: List[Binding]) -> Optional[FrozenSet[Pos]]:
    return frozenset(b.start for b in bindings) if bindings else None

