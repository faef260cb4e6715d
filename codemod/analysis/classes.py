"""Classes and scopes indexed once: what ``self.<attr>`` is assigned anywhere in a class,
which buffers it registers, and the calls in a class, function or module by callee key."""

from __future__ import annotations

import ast
from typing import Dict, List, NamedTuple, Optional, Set, Tuple, Union, cast

from codemod.analysis.kinds import Kind
from codemod.analysis.source import source_order
from codemod.analysis.syntax import call_args, first_arg, target_key
from codemod.analysis.tree import Tree

# What ``self.<attr>`` is given: an expression, or the Kind a registration makes it.
AttrValue = Union[ast.expr, Kind]
Calls = Dict[Optional[str], List[ast.Call]]  # callee key (None: none) -> calls, in source order


class ClassIndex(NamedTuple):
    attrs: Dict[str, List[AttrValue]]  # self.<attr> -> values assigned (ast nodes; Kinds for registrations)
    buffers: Set[str]  # names registered with register_buffer
    calls: Calls


def paired(target: ast.expr, value: Optional[ast.expr]) -> List[Tuple[ast.expr, ast.expr]]:
    """(target, the value it is given) of an assignment: ``self.a, self.b = None, cfg`` gives
    each its element (displays of one length, nothing starred); another unpacking gives none."""
    if value is None:
        return []
    if not isinstance(target, (ast.Tuple, ast.List)):
        return [(target, value)]
    if not isinstance(value, (ast.Tuple, ast.List)) or len(value.elts) != len(target.elts) \
            or any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return []
    return [pair for t, v in zip(target.elts, value.elts) for pair in paired(t, v)]


class Classes:
    """One index per class, one call table per scope (two caches, one kind of entry each)."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self._classes: Dict[ast.ClassDef, ClassIndex] = {}
        self._calls: Dict[ast.AST, Calls] = {}
        self._writes: Optional[Dict[str, List[ast.expr]]] = None
        self._mentions: Optional[Dict[str, List[ast.expr]]] = None

    def _class_index(self, cls: ast.ClassDef) -> ClassIndex:
        """One walk of a class: ``self.<attr>`` values, buffers, and calls by callee key."""
        found = self._classes.get(cls)
        if found is not None:
            return found
        attrs: Dict[str, List[AttrValue]] = {}
        buffers: Set[str] = set()
        calls: Calls = {}
        for node in self.tree.walk(cls):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t, value in (pair for t in targets for pair in paired(t, node.value)):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        attrs.setdefault(t.attr, []).append(value)
            elif isinstance(node, ast.Call):
                callee = target_key(node.func)
                calls.setdefault(callee, []).append(node)
                if callee in ("self.register_buffer", "self.register_parameter"):
                    first = first_arg(node)
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        if callee == "self.register_buffer":
                            buffers.add(first.value)
                        if len(call_args(node)) >= 2:
                            kind = Kind.PARAMETER if callee == "self.register_parameter" else Kind.TENSOR
                            attrs.setdefault(first.value, []).append(kind)
        for found_calls in calls.values():
            found_calls.sort(key=source_order)
        found = ClassIndex(attrs, buffers, calls)
        self._classes[cls] = found
        return found

    def class_attrs(self, cls: ast.ClassDef) -> Dict[str, List[AttrValue]]:
        """``self.<attr>`` -> values assigned to it anywhere in the class (Kinds for registrations)."""
        return self._class_index(cls).attrs

    def class_buffers(self, cls: ast.ClassDef) -> Set[str]:
        return self._class_index(cls).buffers

    def attribute_writes(self, attr: str) -> List[ast.expr]:
        """The places anywhere in the module that change ``<x>.<attr>`` or an item of it:
        ``x.attr = v`` / ``del x.attr`` / ``x.attr += v`` (the ``Attribute`` stored) and
        ``x.attr[i] = v`` / ``del x.attr[i]`` (the ``Subscript`` stored), of any ``x``,
        ``self`` included. Mutating calls (``x.attr.append(m)``) are the caller's to read."""
        if self._writes is None:
            self._writes = {}
            for node in self.tree.source.walked(ast.Name):  # names and attributes
                if not isinstance(node, ast.Attribute):
                    continue
                if not isinstance(node.ctx, ast.Load):
                    self._writes.setdefault(node.attr, []).append(node)
                    continue
                up = self.tree.parent(node)
                if isinstance(up, ast.Subscript) and up.value is node and not isinstance(up.ctx, ast.Load):
                    self._writes.setdefault(node.attr, []).append(up)
        return self._writes.get(attr, [])

    def mentions(self, word: str) -> List[ast.expr]:
        """The module's names ``word`` and attributes ``<x>.word``, any context, in the indexing
        walk's order: where to start looking up for what is done to them."""
        if self._mentions is None:
            self._mentions = {}
            for node in self.tree.source.walked(ast.Name):  # names and attributes
                word_of = node.id if isinstance(node, ast.Name) else cast(ast.Attribute, node).attr
                self._mentions.setdefault(word_of, []).append(cast(ast.expr, node))
        return self._mentions.get(word, [])

    def calls_in(self, scope: ast.AST) -> Calls:
        """Callee key -> the calls in ``scope`` (a class, function or module), found once;
        calls of something without a key (``f()(x)``) under None."""
        if isinstance(scope, ast.ClassDef):
            return self._class_index(scope).calls
        if scope not in self._calls:
            found: Calls = {}
            # The module's calls were listed when its tree was indexed (in the walk's order).
            nodes = self.tree.source.walked(ast.Call) if scope is self.tree.module else self.tree.walk(scope)
            for call in nodes:
                if isinstance(call, ast.Call):
                    found.setdefault(target_key(call.func), []).append(call)  # None: no key
            for calls in found.values():
                calls.sort(key=source_order)
            self._calls[scope] = found
        return self._calls[scope]
