"""Names: what a name or attribute chain refers to through imports (per scope: function-local
imports, parameters that shadow an import, unshadowed builtins), and which names a module uses
(for fresh names a fix may introduce)."""

from __future__ import annotations

import ast
import builtins
from typing import Callable, Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple, cast

from codemod import torch_api
from codemod.analysis.binder import Binder
from codemod.analysis.syntax import BODIES, FUNCTIONS, Owner, target_key
from codemod.analysis.tree import Tree, function_names

_BUILTIN_NAMES = frozenset(dir(builtins))


# Python's own: ``typing.cast(T, v)`` "returns the value unchanged" (its documentation).
_PYTHON_IDENTITIES = {"typing.cast": 1}


def identity_argument(call: ast.AST, torch_name: Callable[[ast.AST], Optional[str]],
                      qualified_names: Callable[[ast.AST], Set[str]]) -> Optional[ast.expr]:
    """:meth:`Names.identity_argument`, for a part that resolves names its own way."""
    if not isinstance(call, ast.Call) or call.keywords:
        return None
    index = torch_api.IDENTITY_FUNCTIONS.get(torch_name(call.func) or "")
    if index is None and isinstance(call.func, (ast.Name, ast.Attribute)):
        index = next((_PYTHON_IDENTITIES[q] for q in qualified_names(call.func) if q in _PYTHON_IDENTITIES), None)
    if index is None or index >= len(call.args) or any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return None
    return call.args[index]


class ModuleNames(NamedTuple):
    imports: Dict[str, Set[str]]  # name -> qualified names of the module-level imports binding it
    bound: Set[str]  # other names bound at module level


class Names:
    """Import resolution for one module (remembered per name and scope)."""

    def __init__(self, tree: Tree, binder: Binder) -> None:
        self.tree = tree
        self.binder = binder
        self.module = tree.module
        self._resolved: Dict[Tuple[str, Owner], Set[str]] = {}
        self._module_imports: Optional[ModuleNames] = None
        self._torch_names: Dict[ast.AST, Optional[str]] = {}
        self._torch_heads: Optional[FrozenSet[str]] = None
        self._bound_in_functions: Optional[FrozenSet[str]] = None

    def qualified_names(self, node: ast.AST) -> Set[str]:
        """What a name or attribute chain refers to through imports (``nn.ReLU`` ->
        {"torch.nn.ReLU"}), ``builtins.len`` for an unshadowed builtin; else empty."""
        key = target_key(node)
        if key is None:
            return set()
        head, _, rest = key.partition(".")
        found = self._resolve(head, node)
        return {f"{q}.{rest}" if rest else q for q in found}

    def _resolve(self, name: str, node: ast.AST) -> Set[str]:
        owner = self.tree.owner(node)
        key = (name, owner)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self._resolve_in(name, owner)
        return found

    def _resolve_in(self, name: str, owner: Owner) -> Set[str]:
        if isinstance(owner, FUNCTIONS) and name not in self.bound_in_functions():
            owner = self.module  # no function binds it: each scope up to the module's defers
        if isinstance(owner, FUNCTIONS):
            flow = self.binder.flow(owner)
            if name in flow.bindings and name not in flow.declared:
                return flow.imports.get(name, set())
            return self._resolve(name, owner)  # the enclosing function's, or the module's
        imports, bound = self.module_names()
        if name in imports:
            return imports[name]
        if name not in bound and name in _BUILTIN_NAMES:
            return {f"builtins.{name}"}
        return set()

    def bound_in_functions(self) -> FrozenSet[str]:
        """Every plain name some function of the module may bind in its own body (a superset
        of the keys of each function's ``Binder.flow`` bindings without a dot: ``tree.function_names``,
        which leaves out the module's own top-level functions and classes). A name outside it
        resolves in a function as in the module, without that function's dataflow (which
        resolving it ran before)."""
        if self._bound_in_functions is None:
            self._bound_in_functions = function_names(self.tree)
        return self._bound_in_functions

    def module_names(self) -> ModuleNames:
        """The names the module's top level imports, and the others it binds."""
        if self._module_imports is None:
            imports: Dict[str, Set[str]] = {}
            bound: Set[str] = set()
            todo: List[ast.stmt] = list(self.module.body)
            while todo:
                stmt = todo.pop()
                if isinstance(stmt, ast.Import):
                    for a in stmt.names:
                        key = a.asname or a.name.split(".")[0]
                        imports.setdefault(key, set()).add(a.name if a.asname else key)
                elif isinstance(stmt, ast.ImportFrom):
                    for a in stmt.names:
                        if a.name != "*" and not stmt.level and stmt.module:
                            imports.setdefault(a.asname or a.name, set()).add(f"{stmt.module}.{a.name}")
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bound.add(stmt.name)
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                        bound.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
                else:
                    for field in (*BODIES, "handlers"):
                        todo.extend(getattr(stmt, field, ()))
            self._module_imports = ModuleNames(imports, bound)
        return self._module_imports

    def torch_name(self, node: ast.AST) -> Optional[str]:
        """The qualified name of a name or attribute ``node`` when it resolves into torch
        (remembered: every pass asks it of every call)."""
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        known = self._torch_names
        if node in known:  # (a sentinel for .get() would be an ``object`` to the type checker)
            return known[node]
        head: ast.expr = node
        while isinstance(head, ast.Attribute):
            head = head.value
        if isinstance(head, ast.Name) and head.id not in self.torch_heads():
            known[node] = None  # no import binds its head to torch: resolving it could not say torch
            return None
        found = known[node] = next(
            (n for n in self.qualified_names(node) if n == "torch" or n.startswith("torch.")), None
        )
        return found

    def identity_argument(self, call: ast.AST) -> Optional[ast.expr]:
        """The argument a call hands back itself (``torch.jit._unwrap_optional(h)`` is ``h``,
        ``torch.jit.annotate(T, h)`` too: ``torch_api.IDENTITY_FUNCTIONS``, measured; and
        ``typing.cast(T, h)``), or None: the result is that tensor, with its kind, its grad and
        its view origin."""
        return identity_argument(call, self.torch_name, self.qualified_names)

    def torch_heads(self) -> FrozenSet[str]:
        """The names some import of the module, at any depth, binds to torch or a part of it
        (``import torch``, ``import torch.nn as nn``, ``from torch.nn import functional as F``).
        Every qualified name comes from an import (the module's, :meth:`module_names`, or a
        function's, ``Binder.visit_Import``), keyed by the name it binds: a chain whose head is
        none of these never resolves into torch, and :meth:`torch_name` answers it without the
        function's dataflow (which resolving a name inside a function runs; a cold ``check``
        asked it of every call)."""
        if self._torch_heads is None:
            heads = set()
            for stmt in self.tree.source.walked(ast.Import):
                if isinstance(stmt, ast.Import):
                    for a in stmt.names:
                        if _is_torch(a.name if a.asname else a.name.split(".")[0]):
                            heads.add(a.asname or a.name.split(".")[0])
                else:
                    found = cast(ast.ImportFrom, stmt)
                    if not found.level and found.module and _is_torch(found.module):
                        heads.update(a.asname or a.name for a in found.names if a.name != "*")
            self._torch_heads = frozenset(heads)
        return self._torch_heads


def _is_torch(qualified: str) -> bool:
    return qualified == "torch" or qualified.startswith("torch.")


class UsedNames:
    """Every name used in a module, and the fresh ones handed out so far."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self.module = tree.module
        self._names: Optional[Set[str]] = None

    @property
    def picked(self) -> bool:
        """Whether a fix asked for a fresh name (which depends on every name in the file)."""
        return self._names is not None

    def fresh_name(self, wanted: str) -> str:
        """``wanted``, or ``wanted2``, ``wanted3``...: a name used nowhere in the module."""
        if self._names is None:
            names: Set[str] = set()
            for node in self.tree.walk(self.module):
                if isinstance(node, ast.Name):
                    names.add(node.id)
                elif isinstance(node, ast.Attribute):
                    names.add(node.attr)
                elif isinstance(node, ast.arg):
                    names.add(node.arg)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(node.name)
                elif isinstance(node, ast.keyword) and node.arg:
                    names.add(node.arg)
                elif isinstance(node, ast.alias):
                    names.update((node.asname or node.name).split("."))
            self._names = names
        name, n = wanted, 1
        while name in self._names:
            n += 1
            name = f"{wanted}{n}"
        self._names.add(name)
        return name
