"""Start values: a tensor made with ``requires_grad=True`` whose own gradient nothing can observe.

``table = torch.zeros(n, k, requires_grad=True)`` and then ``table[i, j] = ...``: PyTorch refuses
every write into that leaf. Whether the writes were meant on the leaf (under ``no_grad``) or on a
copy shows in two things only: the leaf's own ``.grad``, and whether the written values stay
differentiable. Where nothing can observe the leaf's gradient, cloning it where it is made keeps
every gradient the code wrote and changes nothing else anyone can see: the fix is safe.

Observable is anything but a computation with the tensor: its name returned, bound to another
name, kept in a container or an attribute, handed to a function that is not torch's (the
project's code, an optimizer's constructor) or to ``torch.autograd`` / ``torch.optim`` /
``torch.nn``, its ``.grad`` (or hooks, ``requires_grad``, ``is_leaf``...) read, or read from a
nested scope. Only a name bound once in its function, by a statement with grad on (no ``with``
around it), is a start value.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Optional, Sequence, Tuple, Union, cast

from codemod.analysis.binder import Binder
from codemod.analysis.leaves import creates_leaf
from codemod.analysis.syntax import FUNCTIONS
from codemod.analysis.tree import Tree

FunctionLike = Union[ast.FunctionDef, ast.AsyncFunctionDef]

# A tensor's methods that reach its own gradient or identity in autograd (or change them).
_GRADIENT_METHODS = frozenset({
    "register_hook", "register_post_accumulate_grad_hook", "retain_grad", "requires_grad_", "detach_",
    "backward", "set_", "share_memory_", "data_ptr", "untyped_storage", "storage",
})
# Attributes that read the tensor's values or shape only (everything else is refused).
_VALUE_ATTRS = frozenset({"shape", "dtype", "device", "ndim", "T", "mT", "H", "real", "imag"})
# torch namespaces whose functions may keep the tensor, read its gradient or hand it on.
_KEEPING_NAMESPACES = ("torch.autograd", "torch.optim", "torch.nn", "torch.utils", "torch.func", "torch.jit",
                       "torch.save", "torch.distributed", "torch.compile")


class StartValues:
    """Which leaf names made with ``requires_grad=True`` are start values (see the module)."""

    def __init__(self, tree: Tree, binder: Binder, torch_name: Callable[[ast.AST], Optional[str]]) -> None:
        self.tree = tree
        self.binder = binder
        self.torch_name = torch_name
        self._found: Dict[Tuple[ast.AST, str], Optional[ast.Assign]] = {}

    def creation(self, name: ast.Name) -> Optional[ast.Assign]:
        """The statement ``c = <factory>(..., requires_grad=True)`` that makes the leaf ``name``
        holds, where that leaf's gradient cannot be observed; else None."""
        owner = self.tree.owner(name)
        key = (owner, name.id)
        if key not in self._found:
            self._found[key] = self._creation(owner, name.id) if isinstance(owner, FUNCTIONS) else None
        return self._found[key]

    def _creation(self, owner: ast.AST, name: str) -> Optional[ast.Assign]:
        flow = self.binder.flow(cast(FunctionLike, owner))
        if name in flow.declared or name in flow.params:
            return None
        bindings = flow.bindings.get(name, [])
        made = [b for b in bindings if b.form != "aug"]
        if len(made) != 1 or made[0].form != "assign":
            return None
        stmt = made[0].stmt
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.Call) and creates_leaf(stmt.value)):
            return None
        for anc in self.tree.ancestors(stmt):
            if anc is owner:
                break
            if isinstance(anc, (ast.With, ast.AsyncWith, ast.Try, ast.Lambda, ast.ClassDef)):
                return None  # grad mode or flow the clone would not share
        uses = [node for node in self.tree.walk(owner)
                if isinstance(node, ast.Name) and node.id == name and node is not stmt.targets[0]]
        if any(self.tree.owner(node) is not owner or not self._computed_with(node) for node in uses):
            return None
        writes = [self.tree.statement_of(node) for node in uses if _written(self.tree, node)]
        for node in uses:
            if _written(self.tree, node):  # a write that keeps the values, then another write
                own = self.tree.statement_of(node)
                if _saving_write(self.tree, node) and self._before_a_write(node, [w for w in writes if w is not own]):
                    return None
            elif not _unsaved(self.tree, node) and self._before_a_write(node, writes):
                return None  # autograd may keep what it reads, which a later write into the copy would change
        return stmt

    def _before_a_write(self, node: ast.Name, writes: Sequence[ast.AST]) -> bool:
        """A write into the tensor may run after ``node`` is read: one ends after it, or a loop
        around the read holds one."""
        at = (node.lineno, node.col_offset)
        if any((w.end_lineno or w.lineno, w.end_col_offset or 0) > at for w in writes):  # type: ignore[attr-defined]
            return True
        for anc in self.tree.ancestors(node):
            if isinstance(anc, FUNCTIONS):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor, ast.While)) and any(
                    anc.lineno <= w.lineno <= (anc.end_lineno or anc.lineno) for w in writes):  # type: ignore[attr-defined]
                return True
        return False

    def _computed_with(self, node: ast.Name) -> bool:
        """``node`` is used in a computation that cannot reach the leaf's gradient."""
        parent = self.tree.parent(node)
        if isinstance(node.ctx, ast.Store):
            return isinstance(parent, ast.AugAssign) and parent.target is node  # `c += v`: in place
        if isinstance(parent, ast.Subscript):
            return parent.value is node  # `c[i]`, `c[i] = v` (not `x[c]`: an index, kept by nothing)
        if isinstance(parent, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            return True
        if isinstance(parent, ast.AugAssign):
            return parent.value is node  # `y += c`
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = self.tree.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                return parent.attr not in _GRADIENT_METHODS
            return parent.attr in _VALUE_ATTRS
        if isinstance(parent, ast.Call) and any(a is node for a in parent.args):
            qualified = self.torch_name(parent.func)
            return qualified is not None and qualified.startswith("torch.") \
                and not qualified.startswith(_KEEPING_NAMESPACES)
        return False


def _indexed_top(tree: Tree, node: ast.expr) -> ast.expr:
    """``c[i][j]`` for the ``c`` in it: the outermost subscript whose base chain is ``node``."""
    parent = tree.parent(node)
    while isinstance(parent, ast.Subscript) and parent.value is node:
        node, parent = parent, tree.parent(parent)
    return node


def _written(tree: Tree, node: ast.Name) -> bool:
    """``node`` is the base of an in-place write: ``c[i] = v``, ``c += v``, ``c[i].fill_(v)``."""
    if isinstance(node.ctx, ast.Store):
        return True
    top = _indexed_top(tree, node)
    if isinstance(top, ast.Subscript) and isinstance(top.ctx, ast.Store):
        return True
    parent = tree.parent(top)
    if isinstance(parent, ast.Attribute) and parent.value is top and parent.attr.endswith("_") \
            and not parent.attr.startswith("_"):
        call = tree.parent(parent)
        return isinstance(call, ast.Call) and call.func is parent
    return False


def _unsaved(tree: Tree, node: ast.Name) -> bool:
    """``c[i] + v``, ``v - c[i]``, ``-c[i]``: a read (through indexing) that the op consuming it
    does not save for backward (an add, a subtraction or a negation saves no input)."""
    parent = tree.parent(_indexed_top(tree, node))
    if isinstance(parent, ast.BinOp):
        return isinstance(parent.op, (ast.Add, ast.Sub))
    return isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd))


# In-place methods whose backward keeps nothing of the tensor they write (its old or new values).
_UNSAVING_WRITES = frozenset({"fill_", "zero_", "copy_", "index_copy_", "index_fill_", "masked_fill_", "index_put_",
                              "scatter_", "add_", "sub_"})


def _saving_write(tree: Tree, node: ast.Name) -> bool:
    """A write whose backward may keep the tensor's values (``c[i] *= w``, ``c.mul_(w)``): a later
    write into it would break that (assignment, ``+=`` and ``-=`` keep nothing)."""
    top = _indexed_top(tree, node)
    parent = tree.parent(top)
    if isinstance(parent, ast.AugAssign) and parent.target is top:
        return not isinstance(parent.op, (ast.Add, ast.Sub))
    if isinstance(parent, ast.Attribute) and parent.value is top:
        return parent.attr not in _UNSAVING_WRITES
    return False
