"""Steps that keep a view a view for sure, where the op in general may copy.

A view of a multi-output view (``q`` of ``q, k, v = x.chunk(3)``) is refused in place as the
output itself is: PyTorch passes the refusal on to every view of it (measured with torch 2.13:
``q.reshape(...)``, ``q.permute(...)``, einops' ``rearrange(q, ...)``, each written in place,
raise "... is a view and is being modified inplace. This view is the output of a function that
returns multiple views"). A step that copies instead (``reshape`` merging dimensions whose
strides do not line up, ``contiguous`` of a permuted tensor) hands back a fresh tensor, which may
be written. Two forms are views whatever the strides, and are read here:

- a ``reshape`` that splits one dimension of the tensor and keeps the others, seen from the
  tensor's own unpacked shape: ``b, n, hd = t.shape`` then ``t.reshape(b, n, h, hd // h)`` (or
  ``torch.reshape(t, shape)`` with ``shape = (b, n, h, hd // h)``). Splitting one dimension
  never needs a copy (its new strides are multiples of its old one);
- einops' ``rearrange(t, pattern)`` whose pattern groups axes only on its left side (splits)
  and none on its right (no merge): einops runs a ``reshape`` that splits, then a ``permute``.

The static side never runs einops: the pattern string is read. What is not one of these forms
stays "may copy" (the finding possible, not proven).
"""

from __future__ import annotations

import ast
import re
from typing import List, Optional, Sequence

from codemod.analysis.binder import Binder, Binding
from codemod.analysis.dataflow import Dataflow
from codemod.analysis.syntax import Located
from codemod.analysis.tree import Tree

_AXIS = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*|\.\.\.|1)$")


def einops_splits_only(pattern: str) -> bool:
    """Whether an einops ``rearrange`` pattern only splits axes (groups on its left side) and
    reorders them: no group of two or more axes on its right (a merge may copy), no ellipsis
    inside a group, every token an axis name, ``...``, ``1`` or ``()``."""
    if pattern.count("->") != 1:
        return False
    left, right = pattern.split("->")
    for side, merge_allowed in ((left, True), (right, False)):
        groups = _groups(side)
        if groups is None:
            return False
        for group in groups:
            if len(group) > 1 and (not merge_allowed or "..." in group):
                return False
    return True


def _groups(side: str) -> Optional[List[List[str]]]:
    """The parenthesised groups of one side of a pattern (a lone axis is a group of one); None
    where the side is not well formed."""
    groups: List[List[str]] = []
    current: Optional[List[str]] = None
    for token in re.findall(r"\(|\)|[^\s()]+", side):
        if token == "(":
            if current is not None:
                return None
            current = []
        elif token == ")":
            if current is None:
                return None
            groups.append(current)
            current = None
        elif not _AXIS.match(token):
            return None
        elif current is not None:
            current.append(token)
        else:
            groups.append([token])
    return groups if current is None else None


class ReshapeSplits:
    """Whether a ``reshape`` of a tensor name splits one of its dimensions and keeps the rest,
    read from the tensor's shape unpacked into names before it (see the module docstring)."""

    def __init__(self, tree: Tree, binder: Binder, dataflow: Dataflow) -> None:
        self.tree = tree
        self.binder = binder
        self.dataflow = dataflow

    def splits_one(self, tensor: ast.expr, shape: Sequence[ast.expr], at: Located) -> bool:
        """``tensor`` (a name) reshaped to ``shape`` (the elements, or one name bound once to a
        tuple or list of them) at ``at`` is a view for sure: the elements are the names its
        shape was unpacked into, in order, except one dimension replaced by one or more
        elements (the split; a wrong product makes the reshape raise, not copy)."""
        if not isinstance(tensor, ast.Name):
            return False
        elements = self._elements(shape, at)
        dims = self._unpacked_dims(tensor, at)
        if elements is None or dims is None:
            return False
        names = [e.id if isinstance(e, ast.Name) else None for e in elements]
        n = len(dims)
        for i in range(n):
            tail = n - 1 - i
            if len(elements) - i - tail < 1:
                continue
            if names[:i] == dims[:i] and names[len(names) - tail:] == dims[i + 1:]:
                return True
        return False

    def _elements(self, shape: Sequence[ast.expr], at: Located) -> Optional[List[ast.expr]]:
        if len(shape) == 1 and isinstance(shape[0], (ast.Tuple, ast.List)):
            shape = shape[0].elts
        elif len(shape) == 1 and isinstance(shape[0], ast.Name):
            value = self._single_value(shape[0].id, at)
            if not isinstance(value, (ast.Tuple, ast.List)):
                return None
            shape = value.elts
        if not shape or any(isinstance(e, ast.Starred) for e in shape):
            return None
        return list(shape)

    def _reaching(self, key: str, at: Located) -> List[Binding]:
        flow = self.binder.flow(self.tree.owner(at))
        return list(self.dataflow.reaching(flow, key, at))

    def _single_value(self, key: str, at: Located) -> Optional[ast.expr]:
        bindings = self._reaching(key, at)
        if len(bindings) != 1 or bindings[0].form != "assign" or bindings[0].value is None:
            return None
        return bindings[0].value

    def _unpacked_dims(self, tensor: ast.Name, at: Located) -> Optional[List[Optional[str]]]:
        """The names ``tensor``'s shape was unpacked into (``b, n, d = t.shape`` / ``t.size()``),
        where that one statement binds each name reaching ``at`` and ``tensor`` is the same
        binding there as at ``at``."""
        found: Optional[ast.Assign] = None
        for stmt in self._unpackings(tensor.id, at):
            names = [e.id for e in stmt.targets[0].elts]  # type: ignore[attr-defined]
            if all(self._bound_by(name, stmt, at) for name in names):
                if found is not None:
                    return None
                found = stmt
        if found is None:
            return None
        before = {id(b.stmt) for b in self._reaching(tensor.id, found)}
        now = {id(b.stmt) for b in self._reaching(tensor.id, at)}
        if not before or before != now:
            return None
        return [e.id for e in found.targets[0].elts]  # type: ignore[attr-defined]

    def _unpackings(self, key: str, at: Located) -> List[ast.Assign]:
        owner = self.tree.owner(at)
        found = []
        for node in self.tree.walk(owner):
            if isinstance(node, ast.Assign) and self.tree.owner(node) is owner and len(node.targets) == 1 \
                    and isinstance(node.targets[0], (ast.Tuple, ast.List)) \
                    and all(isinstance(e, ast.Name) for e in node.targets[0].elts) \
                    and _shape_of(node.value) == key:
                found.append(node)
        return found

    def _bound_by(self, name: str, stmt: ast.Assign, at: Located) -> bool:
        bindings = self._reaching(name, at)
        return len(bindings) == 1 and bindings[0].stmt is stmt


def _shape_of(value: ast.expr) -> Optional[str]:
    """``t`` of ``t.shape`` or ``t.size()``."""
    if isinstance(value, ast.Attribute) and value.attr == "shape" and isinstance(value.value, ast.Name):
        return value.value.id
    if isinstance(value, ast.Call) and not value.args and not value.keywords \
            and isinstance(value.func, ast.Attribute) and value.func.attr == "size" \
            and isinstance(value.func.value, ast.Name):
        return value.func.value.id
    return None
