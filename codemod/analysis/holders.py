"""Holders: would rebinding a name lose a mutation that somebody else sees?

``p.mul_(wd)`` inside ``for p in params:`` changes the tensor the list holds; ``p = p.mul(wd)``
only rebinds the loop variable, which nobody reads again: a dead store, and the parameters are
no longer updated. This module answers the two questions that make a rebinding a dead store:
is the name read again after the statement (before something else rebinds it), and does
another holder keep the old object (the iterable of a loop, the object an attribute was read
from, the container an element was taken from, the caller of a function)?
"""

from __future__ import annotations

import ast
from typing import Callable, Collection, Dict, List, Literal, Optional, Set, Tuple, cast

from codemod.analysis.binder import Binder, Flow
from codemod.analysis.dataflow import Dataflow
from codemod.analysis.syntax import OWNERS, Located, Pos, bound_names, span, target_key
from codemod.analysis.tree import Tree

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
HolderProblem = Literal["dead-store", "held-elsewhere"]
# Methods of containers that hand out an element the container keeps holding.
_HOLDING_GETTERS = {"get", "setdefault", "__getitem__"}


class Holders:
    """Dead stores: reads after a statement, and who else holds a name's object."""

    def __init__(self, tree: Tree, binder: Binder, dataflow: Dataflow) -> None:
        self.tree = tree
        self.binder = binder
        self.dataflow = dataflow
        self._self_reads: Optional[Dict[str, List[ast.Attribute]]] = None  # attr -> self.<attr> loads
        # Whether a call returns a container (or tensor) of its own that no one else holds, its
        # elements too (``kept.container_fresh``, given by the model: the kept facts sit above).
        self.fresh_container: Optional[Callable[[ast.Call], bool]] = None

    def _reads_of_self(self, attr: str) -> List[ast.Attribute]:
        """The loads of ``self.<attr>`` in the module, in ``ast.walk``'s order (breadth first),
        found for every attribute in one walk (a walk of the module per attribute asked about)."""
        if self._self_reads is None:
            found: Dict[str, List[ast.Attribute]] = {}
            kids = self.tree.source.children
            nodes: List[ast.AST] = [self.tree.module]
            i = 0
            while i < len(nodes):
                node = nodes[i]
                i += 1
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                        and node.value.id == "self" and isinstance(node.ctx, ast.Load):
                    found.setdefault(node.attr, []).append(node)
                nodes.extend(kids[node])
            self._self_reads = found
        return self._self_reads.get(attr, [])

    def rebinding_loses(self, target: ast.Name, stmt: Located) -> Optional[Tuple[HolderProblem, str]]:
        """Would rebinding ``target`` at ``stmt`` (instead of mutating its object) hide the
        change from another holder of the object? ("dead-store", holder) when nothing reads the
        new binding either: the fix would only drop the mutation; ("held-elsewhere", holder) when
        it is read, but the holder still sees the old object. A function's parameter read
        again is left to the parameter rules (``Dataflow.alias_report``)."""
        owner = self.tree.owner(target)
        flow = self.binder.flow(owner)
        key = target.id
        if key in flow.declared:
            return None
        holder = self.held_by(flow, key, stmt)
        if holder is None:
            return None
        if not self.read_after(flow, key, stmt):
            return "dead-store", holder
        return None if holder == "the caller" else ("held-elsewhere", holder)

    def attribute_handed_out(self, target: ast.Attribute) -> Optional[str]:
        """Where a class of the module hands the tensor of ``self.x`` to another holder (any class:
        subclasses share the attribute), in words: a method
        returns or yields it (``return self.keys, self.values``), a call is given it
        (``torch._dynamo.mark_static_address(self.cumulative_length)``, ``register_buffer``,
        an append), or another name, attribute or container is bound to it. Such a holder keeps
        the old tensor after ``self.x = self.x.add(n)``: caches keep a static address on purpose.
        None where the class only reads it in place."""
        if not (isinstance(target.value, ast.Name) and target.value.id == "self"):
            return None
        if self.tree.enclosing_class(target) is None:
            return None
        attr = target.attr
        owner = self.tree.owner(target)
        write_start, write_end = self.tree.range(self.tree.statement_of(target))
        # `self.slots = f(x)` earlier in the same call: the tensor written is this call's own, and
        # handing it out after the write hands out the new one.
        fresh = any(b.form == "assign" and b.end <= write_start
                    for b in self.binder.flow(owner).bindings.get(f"self.{attr}", []))
        for node in self._reads_of_self(attr):  # this class's and its relatives' methods: subclasses share attributes
            if fresh and self.tree.owner(node) is owner and (node.lineno, node.col_offset) >= write_end:
                continue
            parent = self.tree.parent(node)
            while isinstance(parent, (ast.Tuple, ast.List, ast.Starred, ast.Dict)):
                parent = self.tree.parent(parent)  # `return self.keys, self.values`
            if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
                return f"line {node.lineno} returns it"
            if isinstance(parent, ast.Call) and node is not parent.func and (
                    node in parent.args or any(k.value is node for k in parent.keywords)
                    or any(isinstance(a, ast.Starred) and a.value is node for a in parent.args)):
                if not _copies_its_argument(parent):
                    return f"line {node.lineno} hands it to `{self.tree.code(parent.func).strip()}`"
            if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
                if fresh and self._dead_shorthand(parent, owner, self.tree.statement_of(target)):
                    continue  # `hot = self.onehot`, read only in arithmetic, and not after the write
                return f"line {node.lineno} binds another name to it"
        return None

    def _dead_shorthand(self, bind: ast.stmt, owner: ast.AST, write: Located) -> bool:
        """``hot = self.onehot`` before the write, in the write's function: a local name (no
        other binding, not global/nonlocal) read only as an operand of arithmetic (nothing keeps
        it) and never at or after the write, nor in a loop around the bind or the write, nor in
        a nested scope."""
        targets = bind.targets if isinstance(bind, ast.Assign) else [bind.target]  # type: ignore[attr-defined]
        if self.tree.owner(bind) is not owner or len(targets) != 1 or not isinstance(targets[0], ast.Name):
            return False
        if any(isinstance(a, _LOOPS) for a in self.tree.ancestors(bind)):
            return False
        key = targets[0].id
        flow = self.binder.flow(owner)
        if key in flow.declared or len(flow.bindings.get(key, [])) != 1:
            return False
        write_end = span(write)[1]
        loops = [span(a) for a in self.tree.ancestors(write) if isinstance(a, _LOOPS)]
        for pos, load in flow.loads.get(key, []):
            if pos >= write_end or self.tree.owner(load) is not owner or any(ls <= pos <= le for ls, le in loops):
                return False
            if not isinstance(self.tree.parent(load), (ast.BinOp, ast.UnaryOp, ast.Compare)):
                return False
        return True

    def attribute_set_elsewhere(self, target: ast.Attribute) -> bool:
        """``self.x`` that no code of this module binds (``self.x = ...``, a class-level ``x =
        ...``, ``register_buffer("x", ...)``, ``register_parameter``, ``setattr``): a parent class
        in another file, or the caller, set it, and who else holds its tensor is not known."""
        if not (isinstance(target.value, ast.Name) and target.value.id == "self"):
            return False
        if self.tree.enclosing_class(target) is None:
            return False
        attr = target.attr
        # (whether any node says so: the attributes, the class bodies' statements and the calls
        # are looked at apart, not in one walk's order)
        for node in self.tree.nodes(ast.Attribute):
            if isinstance(node, ast.Attribute) and node.attr == attr and not isinstance(node.ctx, ast.Load) \
                    and isinstance(node.value, ast.Name) and node.value.id == "self":
                return False  # (`other.x = self.x` shares the tensor: not a binding of its own)
        for cls in self.tree.nodes(ast.ClassDef):
            for node in cast(ast.ClassDef, cls).body:
                if isinstance(node, (ast.Assign, ast.AnnAssign)) \
                        and attr in {t.id for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                                     if isinstance(t, ast.Name)}:
                    return False  # a class attribute
        for node in self.tree.nodes(ast.Call):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("register_buffer", "register_parameter", "setattr"):
                    named = [a for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                    if not named or any(a.value == attr for a in named):
                        return False  # bound by name here (or by a name computed at run time)
        return True

    def read_after(self, flow: Flow, key: str, stmt: Located, ignore: Collection[ast.AST] = ()) -> bool:
        """Whether a load of ``key`` may see a binding made at ``stmt`` (:func:`read_after`)."""
        return read_after(self.tree, flow, key, stmt, ignore=ignore)

    def argument_read_after(self, flow: Flow, key: str, stmt: Located) -> bool:
        """Whether the caller reads the tensor it passes as ``key`` at ``stmt`` after the call:
        not where ``stmt`` binds the name again (``x, extra = f(x)``, ``x = f(x)``), so that every
        later load sees what the call returned, and nothing else holds what it passed (a value of
        its own, or the input of a ``forward``, whose callers pass values, not buffers to fill;
        not a loop's element, which its list still holds)."""
        if isinstance(stmt, ast.Assign) and "." not in key and any(key in bound_names(t) for t in stmt.targets):
            holder = self.held_by(flow, key, stmt)
            owner = flow.owner
            if holder is None or (holder == "the caller" and isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef))
                                  and owner.name == "forward"):
                return False
        return self.read_after(flow, key, stmt)

    def held_by(self, flow: Flow, key: str, stmt: Located) -> Optional[str]:
        """Who else holds the object ``key`` refers to at ``stmt``, in words; None when it
        is known to be this body's own (a fresh result) or cannot be told."""
        for anc in self.tree.ancestors(stmt):
            if isinstance(anc, OWNERS):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)) and key in bound_names(anc.target):
                if _is_range(anc.iter):
                    return None
                return "the loop's iterable"
        for binding in self.dataflow.reaching(flow, key, stmt):
            if binding.form == "param":
                return "the caller"
            if binding.form == "for" or isinstance(binding.stmt, (ast.For, ast.AsyncFor)):
                return None if _is_range(getattr(binding.stmt, "iter", None)) else "the loop's iterable"
            value = binding.value
            if binding.form != "assign" or value is None:
                continue
            holder = _holder_of(value, self.fresh_container)
            if holder is not None:
                return holder
        return None


    def holding_parameters(self, key: str, stmt: Located) -> Set[str]:
        """The parameters of the function around ``stmt`` that hold the tensor ``key`` names:
        ``for p in params:`` / ``for i, p in enumerate(params)`` / ``zip(params, grads)``, or
        ``p = params[i]``: the caller's container keeps what ``key`` refers to."""
        owner = self.tree.owner(stmt)
        if isinstance(owner, ast.Module):
            return set()
        params = self.binder.flow(owner).params
        found: Set[str] = set()
        for anc in self.tree.ancestors(stmt):
            if anc is owner:
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)) and key in bound_names(anc.target):
                found |= {n.id for n in ast.walk(anc.iter) if isinstance(n, ast.Name) and n.id in params}
        for binding in self.dataflow.reaching(self.binder.flow(owner), key, stmt):
            if binding.form != "assign" or binding.value is None:
                continue
            for value in _branches(binding.value):
                if isinstance(value, ast.Subscript) and target_key(value.value) in params:
                    found.add(str(target_key(value.value)))
        return found


def _branches(value: ast.expr) -> list:  # type: ignore[type-arg]
    """``a if c else b`` -> [a, b] (each branch may be what the name holds); else [value]."""
    if isinstance(value, ast.IfExp):
        return _branches(value.body) + _branches(value.orelse)
    return [value]


# Constructors whose tensor is made over memory they are given (a NumPy array, a buffer, a file
# mapped with ``shared=True``, a DLPack capsule): a write into the tensor in place is seen there.
SHARING_CONSTRUCTORS = frozenset({"from_numpy", "frombuffer", "from_file", "from_dlpack"})


def shares_memory(value: ast.expr) -> bool:
    """``torch.from_numpy(arr)`` and the like (:data:`SHARING_CONSTRUCTORS`, by name): the
    tensor ``value`` makes shares the memory of what it is given, which still holds it."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in SHARING_CONSTRUCTORS


def _holder_of(value: ast.expr, fresh: Optional[Callable[[ast.Call], bool]] = None) -> Optional[str]:
    """Who else holds what ``value`` evaluates to, in words (None: nobody known). ``fresh``:
    whether a call hands back a container of its own that nothing else holds (``Holders.fresh_container``)."""
    for branch in _branches(value):
        if shares_memory(branch):
            return "the array whose memory it shares"
        if isinstance(branch, ast.Attribute):
            return f"`{target_key(branch) or branch.attr}`'s owner"
        if isinstance(branch, ast.Subscript):
            base = branch.value
            while isinstance(base, ast.Subscript):
                base = base.value
            if fresh is not None and isinstance(base, ast.Call) and fresh(base):
                continue  # `self.head(x)[0]`: the list dies with the statement, no one else holds it
            return "the container it was taken from"
        if isinstance(branch, ast.Call) and isinstance(branch.func, ast.Attribute) \
                and branch.func.attr in _HOLDING_GETTERS:
            return "the container it was taken from"
        if isinstance(branch, ast.Call) and isinstance(branch.func, ast.Name) and branch.func.id == "getattr":
            return "the object it was read from"
    return None



def _is_range(expr: Optional[ast.AST]) -> bool:
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "range"


def read_after(tree: Tree, flow: Flow, key: str, stmt: Located, loop_heads: bool = True,
               ignore: Collection[ast.AST] = ()) -> bool:
    """Whether a load of ``key`` (or of an attribute chain on it) may be made after ``stmt``:
    any load after it, loads anywhere in a loop around it unless that loop's own head rebinds
    ``key`` first, and loads in nested functions (they run late). Without ``loop_heads``, the
    head of a ``for`` loop around it (its iterable, read once before the first turn) does not
    count as inside the loop. A load whose chain starts at a name in ``ignore`` (``x.grad``,
    ``x.grad.clone()``, ignoring the name ``x`` there) does not count."""
    _, end = span(stmt)
    loops: List[Tuple[Pos, Pos]] = []
    for anc in tree.ancestors(stmt):
        if isinstance(anc, OWNERS):
            break
        if isinstance(anc, _LOOPS):
            if isinstance(anc, (ast.For, ast.AsyncFor)) and key in bound_names(anc.target):
                break  # each turn of this loop starts from a fresh binding
            if isinstance(anc, (ast.For, ast.AsyncFor)) and not loop_heads:
                body = [*anc.body, *anc.orelse]
                loops.append((span(body[0])[0], span(body[-1])[1]))
            else:
                loops.append(span(anc))
    prefix = key + "."
    for name, loads in flow.loads.items():
        if name != key and not name.startswith(prefix):
            continue
        for pos, node in loads:
            if ignore and _chain_root(node) in ignore:
                continue
            if pos >= end or any(ls <= pos <= le for ls, le in loops) or tree.owner(node) is not flow.owner:
                return True
    return False


def _chain_root(node: ast.AST) -> ast.AST:
    """The name an attribute chain (``x.grad.data``) starts at; ``node`` itself otherwise."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def _copies_its_argument(call: ast.Call) -> bool:
    """Whether a call only reads the tensor it is given: every callee but those known to keep a
    reference (``_KEEPERS``: ``mark_static_address``, ``register_buffer``, ``append``,
    ``setattr``...). Ops and modules (``torch.cat``, ``self.fc(self.h)``) compute from it and
    return something else; a helper that stores what it is given is not seen (not exhaustive)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name not in _KEEPERS


# Callees known to keep a reference to the tensor they are given (not exhaustive: a cache
# marked static, a buffer registered, a container grown, an attribute set).
_KEEPERS = {"mark_static_address", "register_buffer", "register_parameter", "append", "extend", "insert",
            "add", "setdefault", "update", "setattr", "put", "appendleft", "Parameter", "mark_dynamic"}
