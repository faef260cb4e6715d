"""Dataflow inside one body: which bindings reach a statement, which names alias or view the
same tensor, whether a name is read after a point, and whether rebinding a name here would hide
a change from code that still holds the old object."""

from __future__ import annotations

import ast
import dataclasses
import functools
from functools import partial
from typing import Any, Callable, Dict, List, Literal, NamedTuple, Optional, Sequence, Set, Tuple, cast

from codemod import torch_api
from codemod.analysis.binder import Binder, Binding, Flow
from codemod.analysis.branches import always_binds, within
from codemod.analysis.names import Names
from codemod.analysis.syntax import (
    BODIES,
    FUNCTIONS,
    OWNERS,
    Located,
    Pos,
    Span,
    first_arg,
    iterable_of,
    subscript_base,
    target_key,
)
from codemod.analysis.tree import Tree

# Methods that make a view of (or return) their receiver: the result shares storage.
VIEW_METHODS = {
    "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "expand",
    "expand_as", "narrow", "select", "squeeze", "unsqueeze", "flatten", "unflatten", "diagonal",
    "unfold", "as_strided", "detach", "movedim", "moveaxis", "swapaxes", "swapdims",
    "unbind", "split", "chunk", "tensor_split", "contiguous", "view_as_real",
    "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split", "unsafe_chunk",
    "unsafe_split_with_sizes", "view_as_complex", "adjoint", "conj", "resolve_conj", "resolve_neg",
}
# Attributes that are views of the tensor (``h.data`` shares its storage, outside autograd).
VIEW_ATTRIBUTES = {"data", "T", "mT", "H", "mH", "real", "imag"}
# Builtins whose result holds the elements of what they are given (iterating a tensor: views).
_ELEMENTS = {"list", "tuple", "iter", "reversed", "sorted", "enumerate", "zip"}
AliasKind = Literal["identity", "view"]
AliasProblem = Literal["alias", "view-alias", "param-mutation", "mutation-as-output"]
RebindingProblem = Literal["non-local-name"]


class Aliases(NamedTuple):
    identity: Set[str]  # keys bound to the same tensor
    views: Set[str]  # keys bound to views of it


@dataclasses.dataclass
class AliasReport:
    reason: Optional[AliasProblem]
    also_rebind: Tuple[str, ...] = ()  # identity aliases a fix must rebind too


_FOR_LOOPS = (ast.For, ast.AsyncFor)


def _loop_bound(bindings: List[Binding]) -> bool:
    """Some ``for`` loop binds the name (else no loop binding can be found walking up)."""
    return any(b.stmt.__class__ in _FOR_LOOPS for b in bindings)


def _remembered(copy: Callable[[Any], Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A question of :class:`Dataflow` about (flow, key, where) worked out once per dataflow:
    the same is asked about three times over (the kinds, the views, the hazards). Each caller
    gets ``copy`` of the answer (it may change its own); the flow is kept with the answer, so
    that its ``id`` is never taken for another flow's."""
    def wrap(work: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(work)
        def asked(self: "Dataflow", flow: Flow, key: str, where: Any) -> Any:
            known = self._asked.get((work, id(flow), key, where))
            if known is None or known[0] is not flow:
                known = self._asked[(work, id(flow), key, where)] = (flow, work(self, flow, key, where))
            return copy(known[1])
        return asked
    return wrap


class Dataflow:
    """Reaching bindings, aliases and later uses, over the binder's flows."""

    def __init__(self, tree: Tree, binder: Binder, names: Names) -> None:
        self.tree, self.binder, self.names = tree, binder, names
        self._asked: Dict[Tuple[Any, ...], Tuple[Any, ...]] = {}  # what :func:`_remembered` keeps

    @_remembered(list)
    def reaching(self, flow: Flow, key: str, stmt: Located) -> List[Binding]:
        """Bindings of ``key`` that may reach ``stmt``.

        The last plain binding before it whose block holds ``stmt`` hides every binding before it; the
        ones after that (in branches, or in-place updates) all count but one a later plain binding of
        the same block hides (``if c: x = f(x); x = x @ w``: only ``x @ w`` leaves the arm), or an
        ``if`` before ``stmt`` in a block around it that binds it on every arm, and so does any later
        binding inside a loop around ``stmt``. Branch conditions, early returns and exceptions are not
        modelled, which only ever adds bindings."""
        if not (bindings := flow.bindings.get(key)):
            return []  # (nothing binds it)
        start, end = self.tree.range(stmt)
        before = [b for b in bindings if b.end <= start]
        inside = [b for b in bindings if b.start >= start and b.end <= end]
        loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le]
        later = [b for b in bindings if b.start >= end and any(b.end <= le for _, le in loops)]
        if loops:
            later += inside  # the statement's own binding reaches its next iteration
        if later and before:
            later = _past_the_turn(self.tree, later, before, loops, stmt)
        before, later = _this_turn(self.tree, bindings, key, stmt, before, later, loops)
        if before:
            use_blocks = self.tree.blocks_around(stmt)
            for i in range(len(before) - 1, -1, -1):
                b = before[i]
                if b.form != "aug" and self.tree.block_of(b.stmt) in use_blocks:
                    before = before[i:]
                    break
            before = [b for i, b in enumerate(before) if not any(_rebound_after(self.tree, b, b2) for b2 in before[i + 1:])]
            cut = _rebound_by_every_arm(self.tree, bindings, key, stmt, use_blocks)
            if cut is not None:
                before = [b for b in before if not b.end <= cut]
        return before + later

    def shared_name(self, target: ast.AST) -> bool:
        """A name declared ``global``/``nonlocal`` here: others may hold its tensor."""
        if not isinstance(target, ast.Name):
            return False
        owner = self.tree.owner(target)
        return not isinstance(owner, ast.Module) and target.id in self.binder.flow(owner).declared

    def rebinding_problem(self, target: ast.AST) -> Optional[RebindingProblem]:
        """Whether writing ``key = ...`` here would bind a name that is not already local."""
        if not isinstance(target, ast.Name) or self.shared_name(target):
            return None  # attributes are stored through their object; declared names stay shared
        for anc in self.tree.ancestors(target):
            if isinstance(anc, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.ClassDef)):
                return None  # another scope than the function's
            if isinstance(anc, OWNERS):
                break
        owner = self.tree.owner(target)
        if isinstance(owner, ast.Module):
            return None
        if target.id not in self.binder.flow(owner).bindings:
            return "non-local-name"
        return None

    def alias_report(self, target: ast.AST, stmt: Located, own_param: bool = False) -> AliasReport:
        """Would rebinding ``target`` (a name or attribute chain) at ``stmt`` hide the mutation from another
        name? ``own_param``: a parameter whose every caller passes a tensor nothing else sees after the call
        (``arguments.own_values_passed``): not the caller's to see."""
        key = cast(str, target_key(target))  # callers ask only for targets with a key
        owner = self.tree.owner(stmt)
        flow = self.binder.flow(owner)
        start, end = self.tree.range(stmt)

        def callers(k: str) -> bool:
            """``k`` may still be the caller's tensor here: a parameter that no rebinding on
            every path before ``stmt`` replaced (``if not inplace: x = x.clone()`` leaves it)."""
            return k in flow.params and not (own_param and k == key) and not any(
                b.form != "param" and b.end <= start and on_every_path(self.tree, b.stmt, stmt, owner)
                # `x = x.clone() if copy else x`, `x = x.view(-1)`: on some path still the caller's memory
                and not (b.form == "assign" and self._alias_source_of(b.value, k)[0] == k)
                for b in flow.bindings.get(k, []))

        if "." not in key and isinstance(owner, FUNCTIONS) and callers(key):
            return AliasReport("param-mutation" if flow.returns_value else "mutation-as-output")

        identity, views = self.aliases(flow, key, start)
        if isinstance(owner, FUNCTIONS) and (any(callers(k) for k in identity | views)
                                             or _holds_a_parameter(self, flow, key, stmt)):
            # `out = x if inplace else x.clone()`: the write may reach the caller's tensor
            return AliasReport("param-mutation" if flow.returns_value else "mutation-as-output")
        heads = self._eager_loop_heads(stmt)
        used_later = lambda k: self.used_after(flow, k, (start, end), heads, values_only=True)  # noqa: E731
        # (a view read in each turn only before the write, from that turn's binding, sees none)
        before = lambda v: _read_before_the_write(self.tree, flow, v, target, stmt)  # noqa: E731
        if any(self.used_after(flow, v, (start, end), [*heads, *before(v)], values_only=True) for v in views):
            return AliasReport("view-alias")
        # `self.last = x` (any attribute): read wherever the object goes, not only in this body
        later_identity = tuple(sorted(k for k in identity if "." in k or used_later(k)))
        if later_identity:
            return AliasReport("alias", later_identity)
        return AliasReport(None)

    @_remembered(lambda found: Aliases(set(found.identity), set(found.views)))
    def aliases(self, flow: Flow, key: str, at: Pos) -> Aliases:
        """Keys bound to the same tensor as ``key`` at ``at`` (identity), and views of it: those
        of its identity aliases too (``d = b.exp_()`` is ``b``, so ``h`` that ``b`` views is
        ``d``'s as well: ``b = h.reshape(-1)``)."""
        found = _closed(lambda k: self._direct_aliases(flow, k, at), key)
        return _viewed_upward(lambda k: self._bound_from(flow, k, at), found, key)

    def _bound_from(self, flow: Flow, key: str, at: Pos) -> Aliases:
        """What ``key`` itself was bound from, as of ``at`` (inside a loop over it, the loop's
        own binding): the tensor it is (identity) or views (views)."""
        identity: Set[str] = set()
        views: Set[str] = set()
        b = _own_binding(flow, key, at)
        if b is not None and b.form == "assign":
            identity.update(b.sources)
            # `y = a if c else b`: on each path the tensor of that branch (not only the first)
            for branch in _branches(b.value):
                source, how = self.alias_source(branch)
                if source is not None:
                    (identity if how == "identity" else views).add(source)
        elif b is not None and b.form == "other" and isinstance(b.stmt, ast.Assign):
            source, how = self._unpacked_source(b.stmt, key)  # `a, b = x.tensor_split(2)`
            if source is not None:
                (identity if how == "identity" else views).add(source)
        elif b is not None and isinstance(b.stmt, (ast.For, ast.AsyncFor)):
            # `for t, m in zip(tuple(img[i] for i in ...), means)`: each `t` is a view of `img`.
            # (An element of a plain container is the holders' business: `for p in params`.)
            source, how = self.alias_source(iterable_of(b.stmt, key))
            if source is not None and how == "view":
                views.add(source)
        return Aliases(identity, views)

    def _direct_aliases(self, flow: Flow, key: str, at: Pos) -> Aliases:
        """:meth:`aliases` of ``key`` itself, its identity aliases' not followed."""
        identity, views = (set(found) for found in self._bound_from(flow, key, at))
        b = _own_binding(flow, key, at)
        last_binding = lambda k, before: _last_binding(flow, k, before)  # noqa: E731
        # Other keys bound from ``key`` (and not rebound since).
        for other in flow.bindings:
            if other == key:
                continue
            ob = last_binding(other, at)
            if ob is None:
                continue
            if ob.form == "assign":
                source, how = self._alias_source_of(ob.value, key)
            elif ob.form == "other" and isinstance(ob.stmt, ast.Assign):
                source, how = self._unpacked_source(ob.stmt, other)
            else:
                continue
            if source == key:
                since = [x for x in flow.bindings.get(key, []) if ob.end <= x.start and x.end <= at and x.form != "aug"]
                if not since:
                    (identity if how == "identity" else views).add(other)
        if views and b is not None:
            views |= self._siblings(flow, key, b, views | identity, at)
        identity.discard(key)
        views.discard(key)
        return Aliases(identity, views)

    def _siblings(self, flow: Flow, key: str, made: Binding, bases: Set[str], at: Pos) -> Set[str]:
        """Other names bound to the tensors ``key`` views (``bases``), or to views of them, since
        those were bound: ``top = h[0:2]`` beside ``row = h[0]``. They may share the memory a
        write into ``key`` changes. The outputs of one unpacking (``q, k, v = x.chunk(3)``) are
        disjoint and do not count."""
        found: Set[str] = set()
        for other in flow.bindings:
            if other == key or other in bases:
                continue
            earlier = [x for x in flow.bindings.get(other, []) if x.end <= at and x.form != "aug"]
            ob = earlier[-1] if earlier else None
            if ob is None or ob.stmt is made.stmt:
                continue
            if ob.form == "assign":
                source, _ = self.alias_source(ob.value)
            elif ob.form == "other" and isinstance(ob.stmt, ast.Assign):
                source, _ = self._unpacked_source(ob.stmt, other)
            else:
                continue
            since = min(made.end, ob.end)  # `h = other` between the two views: another tensor
            if source in bases and not any(since <= x.start and x.end <= at and x.form != "aug"
                                           for x in flow.bindings.get(source, [])):
                found.add(other)
        return found

    def _unpacked_source(self, stmt: ast.Assign, key: str) -> Tuple[Optional[str], Optional[AliasKind]]:
        """``a, b = x.tensor_split(2)``: ``key`` unpacked from a sequence of views (or of
        names: ``a, b = x, y``) shares the storage of what the sequence came from."""
        value = stmt.value
        for target in stmt.targets:
            if not isinstance(target, (ast.Tuple, ast.List)):
                continue
            at = next((i for i, e in enumerate(target.elts) if target_key(e) == key), None)
            if at is None:
                continue
            if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) \
                    and not any(isinstance(e, ast.Starred) for e in value.elts):
                return self.alias_source(value.elts[at])
            source, _ = self.alias_source(value)
            return (source, "view") if source is not None else (None, None)
        return None, None

    def _alias_source_of(self, value: Optional[ast.AST], key: str) -> Tuple[Optional[str], Optional[AliasKind]]:
        """``alias_source``, where a conditional expression (``x[t] if a else h[i - 1]``) is
        an alias of ``key`` when one of its branches is: on that path it shares the storage."""
        while isinstance(value, ast.IfExp):
            body = self.alias_source(value.body)
            if body[0] == key:
                return body
            value = value.orelse
        return self.alias_source(value)

    def alias_source(self, value: Optional[ast.AST]) -> Tuple[Optional[str], Optional[AliasKind]]:
        """(key, "identity" | "view") when ``value`` is ``key`` itself or shares its storage."""
        if value is None:
            return None, None
        if isinstance(value, ast.Attribute) and value.attr in VIEW_ATTRIBUTES:
            inner = self.alias_source(value.value)
            return (inner[0], "view") if inner[0] is not None else (None, None)
        key = target_key(value)
        if key is not None:
            return key, "identity"
        if isinstance(value, ast.IfExp):  # `b if inplace else b.clone()`: on one path it is `b`
            for branch in (value.body, value.orelse):
                inner = self.alias_source(branch)
                if inner[0] is not None:
                    return inner
            return None, None
        if isinstance(value, ast.Subscript):
            if copies(self, value):
                return None, None  # `x[:, idx]` with a list or an index tensor of 1-d or more: a copy
            base = subscript_base(value)
            inner = self.alias_source(base) if target_key(base) is None else (target_key(base), "view")
            return (inner[0], "view") if inner[0] is not None else (None, None)
        if isinstance(value, (ast.GeneratorExp, ast.ListComp)):
            inner = self.alias_source(value.elt)  # `tuple(x.select(0, i) for i in ...)`
            return (inner[0], "view") if inner[0] is not None else (None, None)
        if isinstance(value, (ast.List, ast.Tuple)):
            for elt in value.elts:  # `[*x]`
                if isinstance(elt, ast.Starred):
                    inner = self.alias_source(elt.value)
                    if inner[0] is not None:
                        return inner[0], "view"
            return None, None
        if isinstance(value, ast.Call):
            if (same := self.names.identity_argument(value)) is not None:
                return self.alias_source(same)  # `torch.jit._unwrap_optional(h)` is `h`
            func = value.func
            if isinstance(func, ast.Attribute) and self.names.torch_name(func) is None:
                recv = target_key(func.value)
                if isinstance(func.value, ast.Attribute) and func.value.attr in VIEW_ATTRIBUTES:
                    recv = None  # `y.real.mul_(2)` is a view of `y`, not a binding named `y.real`
                method = func.attr
                if method in torch_api.INPLACE_METHODS:  # its receiver: `x.add_(1)`, `h.t().exp_()` (a view of h)
                    return (recv, "identity") if recv is not None else self.alias_source(func.value)
                if method in VIEW_METHODS or method in torch_api.RETURNS_INPUT_METHODS:  # `x.float()` may be x
                    inner = self.alias_source(func.value) if recv is None else (recv, "view")
                    if inner[0] is not None:
                        return inner[0], "view"
            name = self.names.torch_name(func)
            first = first_arg(value)
            if name in torch_api.INPLACE_FUNCTIONS and first is not None:
                first_key = target_key(first)  # `torch.relu_(x)`, `torch.relu_(h.t())` (a view of h)
                return (first_key, "identity") if first_key is not None else self.alias_source(first)
            if name is not None and first is not None and (
                    name.startswith("torch.") and name[6:] in VIEW_METHODS or name in torch_api.RETURNS_INPUT_FUNCTIONS):
                inner = self.alias_source(first)  # `torch.select(x, 0, 1)`, `torch.hsplit(x, 2)`
                return (inner[0], "view") if inner[0] is not None else (None, None)
            if isinstance(func, ast.Name) and func.id in _ELEMENTS and name is None:
                for arg in value.args:  # `list(x)`, `zip(x, m)`: the tensor's rows are views
                    inner = self.alias_source(arg.value if isinstance(arg, ast.Starred) else arg)
                    if inner[0] is not None:
                        return inner[0], "view"
        return None, None

    def used_after(self, flow: Flow, key: str, at: Span, heads: Sequence[Span] = (),
                   values_only: bool = False) -> bool:
        """Whether ``key`` may be loaded after the statement spanning ``at`` (:func:`used_after`)."""
        return used_after(self.tree, flow, key, at, heads, values_only)

    def _eager_loop_heads(self, stmt: Located) -> List[Span]:
        """The iterables of the ``for`` loops around ``stmt`` (in its function), read once before
        the first turn: ``enumerate(h.chunk(4))``. Not where part of one is lazy (a generator,
        a lambda, a comprehension), which reads later, between turns."""
        found: List[Span] = []
        for anc in self.tree.ancestors(stmt):
            if isinstance(anc, OWNERS):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)) and not any(
                    isinstance(n, (ast.GeneratorExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp))
                    for n in ast.walk(anc.iter)):
                found.append(self.tree.range(anc.iter))
        return found


def _read_before_the_write(tree: Tree, flow: Flow, key: str, target: ast.AST, stmt: Located) -> List[Span]:
    """The loads of ``key`` (a view of the written tensor) in a loop around the write at
    ``stmt`` that read it before the write, in each turn, from a binding of that turn: before
    the statement, or in the value of the write's own assignment (``buf[i] = f(src)``,
    ``h += f(src)``: evaluated before the store), where a plain binding of ``key`` in the same
    turn runs first on every path (``src = x if i == 0 else buf[i - 1]`` at the top of the
    loop's body; not ``top = buf[:2]`` before the loop, which the next turn reads after this
    one's write). Such a read never sees the write, nor an earlier turn's tensor. Spans for
    :func:`used_after`'s ``heads``."""
    start, end = tree.range(stmt)
    own_value = None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and within(target, stmt.targets[0]) \
            or isinstance(stmt, ast.AugAssign) and within(target, stmt.target):
        own_value = stmt.value
    loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le]
    found: List[Span] = []
    for pos, node in flow.loads.get(key, []):
        if not any(ls <= pos <= le for ls, le in loops):
            continue
        if pos >= start and not (own_value is not None and within(node, own_value)):
            continue
        inner = max(ls for ls, le in loops if ls <= pos <= le)  # the innermost loop around both
        around = tree.blocks_around(tree.statement_of(node))
        if any(b.form == "assign" and inner < b.start and b.end <= min(pos, start) and tree.block_of(b.stmt) in around
               for b in flow.bindings.get(key, [])):
            found.append((pos, (pos[0], pos[1] + 1)))
    return found


def _rebound_after(tree: Tree, b: Binding, b2: Binding) -> bool:
    """Whether ``b2``, a plain binding later in the same block as ``b``, rebinds the key on every
    path that leaves that block from ``b``: nothing between them can jump out (``break``,
    ``continue``) and no ``try`` around them catches an exception raised in between."""
    if b.form == "param" or not (b2.form == "assign" or b2.form == "other" and isinstance(b2.stmt, ast.Assign)):
        return False
    if b2.start < b.end or not isinstance(b.stmt, ast.stmt) or not isinstance(b2.stmt, ast.stmt):
        return False
    block = tree.block_of(b.stmt)
    if block is None or block != tree.block_of(b2.stmt):
        return False
    holder = tree.parent(b.stmt)
    stmts = getattr(holder, block[1], None) if holder is not None else None
    if not isinstance(stmts, list) or b.stmt not in stmts or b2.stmt not in stmts:
        return False
    if any(isinstance(anc, (ast.Try, getattr(ast, "TryStar", ast.Try))) or isinstance(anc, ast.With)
           and any("suppress" in ast.unparse(item.context_expr) for item in anc.items)
           for anc in tree.ancestors(b.stmt)):
        return False
    between = stmts[stmts.index(b.stmt) + 1: stmts.index(b2.stmt)]
    return not any(isinstance(node, (ast.Break, ast.Continue)) for stmt in between for node in ast.walk(stmt))


def _rebound_by_every_arm(tree: Tree, bindings: Sequence[Binding], key: str, stmt: Located,
                          use_blocks: Set[Tuple[int, str]]) -> Optional[Pos]:
    """Where the last ``if`` before ``stmt``, in a block around it, that binds the key on every
    arm begins (``branches.always_binds``: ``if c: x = f(x)`` / ``else: x = g(x)``): control
    reaches ``stmt`` only through one of its arms completed, so no binding before that ``if``
    does. Looked for only where a plain binding sits in a block not around ``stmt`` (an arm)."""
    if not any((b.form == "assign" or b.form == "other" and isinstance(b.stmt, ast.Assign))
               and tree.block_of(b.stmt) not in use_blocks for b in bindings):
        return None
    child: ast.AST = cast(ast.AST, stmt)
    for parent in tree.ancestors(cast(ast.AST, stmt)):
        for field in BODIES:
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list) and child in stmts:
                for s in reversed(stmts[: stmts.index(child)]):
                    if isinstance(s, ast.If) and always_binds(s, key):
                        return tree.range(s)[0]
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Module, ast.ClassDef)):
            break
        child = parent
    return None


def _past_the_turn(tree: Tree, later: List[Binding], before: List[Binding], loops: List[Tuple[Pos, Pos]],
                   stmt: Located) -> List[Binding]:
    """The later bindings that reach ``stmt`` on a next turn of a loop around both: not where
    that loop's turn rebinds the key (plainly, in a block that holds ``stmt``) before
    ``stmt`` every time (``a = torch.ones(n); a[i] = v; a = nn.Parameter(a)`` in a loop: the
    write sees this turn's ``torch.ones``, never the last turn's parameter)."""
    use_blocks = tree.blocks_around(stmt)
    turns = [b for b in before if (b.form == "assign" or b.form == "ann" and b.value is not None
                                   or b.form == "other" and _unpacked_by_assign(b))
             and tree.block_of(b.stmt) in use_blocks]  # (not a `for` target: its body may not run)
    return [b for b in later if any(b.end <= le and not any(k.start >= ls for k in turns) for ls, le in loops)]


def _this_turn(tree: Tree, bindings: List[Binding], key: str, stmt: Located, before: List[Binding],
               later: List[Binding], loops: List[Tuple[Pos, Pos]]) -> Tuple[List[Binding], List[Binding]]:
    """``before`` and ``later`` where a ``for`` loop around ``stmt`` binds ``key`` at its head:
    this turn's binding, then the body's own (``for y in ys: ... y ...``), and only what reaches
    without passing the head (``for y in ys: a, y = f(y)``: a next turn rebinds ``y`` first)."""
    loop = _loop_binding(tree, bindings, key, stmt) if _loop_bound(bindings) else None
    if loop is None:
        return before, later
    if later:
        later = _within_the_turn(later, loops, loop)
    return [loop] + [b for b in before if b.start > loop.start], later


def _within_the_turn(later: List[Binding], loops: List[Tuple[Pos, Pos]], loop: Binding) -> List[Binding]:
    """The later bindings that reach a statement in the body of the ``for`` loop binding the key
    (``loop``) without passing its head: only through a loop nested in that body around both
    (any other way back to the statement enters the body anew, and the head binds the key first:
    ``for est in out: loss, est = f(est)`` hands ``f`` this turn's row, never the last turn's result)."""
    head = loop.start
    return [b for b in later if any(b.end <= le and ls > head for ls, le in loops)]


def _unpacked_by_assign(b: Binding) -> bool:
    """``evals, evecs = torch.linalg.eigh(a)``: a name of a tuple (or list) an assignment unpacks,
    not starred nor nested: bound whenever the statement completes, as a plain binding is."""
    stmt = b.stmt
    return isinstance(stmt, ast.Assign) and any(
        isinstance(t, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == b.key for e in t.elts)
        for t in stmt.targets)


def _loop_binding(tree: Tree, bindings: List[Binding], key: str, stmt: Located) -> Optional[Binding]:
    """The binding of ``key`` by the innermost ``for`` loop whose body holds ``stmt`` (it spans the loop)."""
    node: ast.AST = stmt
    for up in tree.ancestors(stmt):
        if isinstance(up, OWNERS):
            return None
        if isinstance(up, (ast.For, ast.AsyncFor)) and (node in up.body) \
                and key in {target_key(n) for n in ast.walk(up.target)}:
            return next((b for b in bindings if b.stmt is up), None)
        node = up
    return None


def used_after(tree: Tree, flow: Flow, key: str, at: Span, heads: Sequence[Span] = (),
               values_only: bool = False) -> bool:
    """Whether ``key`` may be loaded after the statement spanning ``at``: later in the body,
    or anywhere in a loop around it, except in ``heads`` (spans read once, before the
    first turn: :meth:`Dataflow._eager_loop_heads`). ``values_only``: a read of ``key.grad``
    alone (``x0.grad`` after ``x = x0; x = F.relu(x, inplace=True)``) does not count: a write
    into the tensor's values never changes its gradient field."""
    start, end = at
    loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le]
    for pos, node in flow.loads.get(key, []):
        if any(hs <= pos < he for hs, he in heads):
            continue
        if values_only and _reads_grad(tree, node):
            continue
        if pos >= end or any(ls <= pos <= le for ls, le in loops):
            return True
    # Attribute chains: a load of "b.sum" is a use of "b".
    prefix = key + "."
    return any(k.startswith(prefix) and not (values_only and (k + ".").startswith(prefix + "grad."))
               and used_after(tree, flow, k, at, heads, values_only) for k in flow.loads)


def _closed(direct: Callable[[str], Aliases], key: str) -> Aliases:
    """``direct`` aliases of ``key`` joined with those of its identity aliases, transitively."""
    identity, views = direct(key)
    todo = list(identity)
    while todo:
        more = direct(todo.pop())
        for other in more.identity - identity - {key}:
            identity.add(other)
            todo.append(other)
        views |= more.views
    return Aliases(identity, views - identity - {key})


def _viewed_upward(bound_from: Callable[[str], Aliases], found: Aliases, key: str) -> Aliases:
    """``found`` joined with what its views view, transitively (upward only: what each view was
    bound from, not the other views of the same tensor): a write into ``v = w.view(-1)`` of
    ``w = y[:2]`` reaches ``y`` too, whose later reads would see it. Not from a view *of* the
    written tensor (a name bound from ``key`` or one of its identity aliases): what else it was
    bound from is its other path (``src = x if i == 0 else buf[i - 1]``: where ``src`` is ``x``
    it views no ``buf``, and where it views ``buf`` it is no ``x``), which a write into ``buf``
    never reaches."""
    identity, views = set(found.identity), set(found.views)
    written = {key, *identity}
    pending, walked = list(views), set()
    while pending:
        view = pending.pop()
        if view in walked:
            continue
        walked.add(view)
        more = bound_from(view)
        if (more.identity | more.views) & written:
            continue  # a view of the written tensor: its other sources are other paths'
        for other in (more.identity | more.views) - identity - views - {key}:
            views.add(other)
            pending.append(other)
    return Aliases(identity, views)


def _own_binding(flow: Flow, key: str, at: Pos) -> Optional[Binding]:
    """The binding ``key`` holds at ``at`` (inside a loop over it, the loop's own)."""
    b = _last_binding(flow, key, at)
    loops = [x for x in flow.bindings.get(key, []) if isinstance(x.stmt, (ast.For, ast.AsyncFor))
             and x.start <= at < x.end]
    loop = max(loops, key=lambda x: x.start) if loops else None
    if loop is not None and (b is None or b.end <= loop.start):
        b = loop
    return b


def _last_binding(flow: Flow, key: str, before: Pos) -> Optional[Binding]:
    """The last binding of ``key`` that ends before ``before``: ``a += 1`` keeps a tensor's
    object, not a binding here."""
    earlier = [b for b in flow.bindings.get(key, []) if b.end <= before and b.form != "aug"]
    return earlier[-1] if earlier else None


def _reads_grad(tree: Tree, node: ast.AST) -> bool:
    """``node`` is read for its ``.grad`` alone (``x0.grad``, ``x0.grad.zero_()``)."""
    parent = tree.parent(node)
    return isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "grad"


def _holds_a_parameter(dataflow: "Dataflow", flow: Flow, key: str, stmt: Located) -> bool:
    """Whether a binding of ``key`` that may reach ``stmt`` made it the caller's tensor (or
    a view of it): ``y = x`` before ``if copy: y = x.clone()`` reaches the write on the path
    without the copy (``Dataflow.aliases`` reads only the last binding)."""
    for b in dataflow.reaching(flow, key, stmt):
        if b.form != "assign":
            continue
        for branch in _branches(b.value):
            source, _ = dataflow.alias_source(branch)
            if source is not None and source in flow.params and any(
                    r.form == "param" for r in dataflow.reaching(flow, source, b.stmt)):
                return True
    return False


def _branches(value: Optional[ast.expr]) -> List[Optional[ast.expr]]:
    """The values a conditional expression may take (``a if c else b if d else e``: ``a``,
    ``b``, ``e``); any other value itself."""
    found: List[Optional[ast.expr]] = []
    while isinstance(value, ast.IfExp):
        found.append(value.body)
        value = value.orelse
    return found + [value]


def on_every_path(tree: Tree, binding: ast.AST, stmt: Located, owner: ast.AST) -> bool:
    """Whether ``binding`` runs on every path to ``stmt``: each block it sits in below
    ``owner`` (an ``if``, a loop, a ``try``) holds ``stmt`` too."""
    start, end = tree.range(stmt)
    below: ast.AST = binding
    for anc in tree.ancestors(binding):
        if anc is owner:
            return True
        if isinstance(anc, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match)):
            # The branch that holds the binding (``body`` or ``orelse`` of an ``if``, one
            # handler of a ``try``, one case), not the whole statement: ``if c: x = x.clone()``
            # does not run on the path through ``else:``.
            branch = _branch(anc, below)
            if branch is None:
                return False
            b_start, b_end = tree.range(branch[0])[0], tree.range(branch[-1])[1]
            if not (b_start <= start and end <= b_end):
                return False
        below = anc
    return True


def _branch(compound: ast.AST, child: ast.AST) -> Optional[List[ast.stmt]]:
    """The statements of ``compound``'s branch that holds ``child`` (a statement of it, an
    ``except`` handler or a ``case``); None where ``child`` is in none (a loop's target, a test)."""
    if isinstance(child, ast.ExceptHandler) or isinstance(child, getattr(ast, "match_case", ())):
        return getattr(child, "body", None) or None
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(compound, field, None)
        if isinstance(stmts, list) and any(s is child for s in stmts):
            return stmts
    return None


# torch calls whose result is an index tensor of one dimension or more (``torch.nonzero`` two;
# with ``as_tuple=True`` a tuple of 1-d ones): indexing with it is advanced indexing, a copy
_INDEX_MAKERS = frozenset({"torch.arange", "torch.randperm", "torch.nonzero", "torch.argwhere"})
# ... and those that are one when given a list or tuple display (``torch.tensor(0)`` is 0-d: a view)
_FROM_A_DISPLAY = frozenset({"torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.IntTensor",
                             "torch.BoolTensor", "torch.ByteTensor", "torch.Tensor"})


def copies(dataflow: "Dataflow", sub: ast.Subscript) -> bool:
    """Whether ``sub`` (or a subscript it indexes) is known to use advanced indexing, which
    copies (measured with torch, tests/test_precision43_index_copies.py): a piece of the index
    is a list (``x[:, [0, 2]]``), a comparison (a mask, or a Python bool: both copy), an index
    tensor made by a call of :data:`_INDEX_MAKERS` or :data:`_FROM_A_DISPLAY` with a display,
    or a name every binding of which reaching ``sub`` is one of these. Anything else (an int, a
    slice, ``None``, ``...``, a name of unknown value, a 0-d tensor) may view: not a copy."""
    node: ast.expr = sub
    while isinstance(node, ast.Subscript):
        pieces = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(_copying_piece(dataflow, piece, node) for piece in pieces):
            return True
        node = node.value
    return False


def _copying_piece(dataflow: "Dataflow", piece: ast.expr, at: Optional[ast.expr]) -> bool:
    if isinstance(piece, (ast.List, ast.ListComp, ast.Compare)):
        return True
    if isinstance(piece, ast.Call):
        name = dataflow.names.torch_name(piece.func)
        if name == "torch.where" and len(piece.args) == 1 and not piece.keywords:
            return True  # `torch.where(m)`: a tuple of 1-d index tensors (`nonzero(m, as_tuple=True)`)
        return name in _INDEX_MAKERS or name in _FROM_A_DISPLAY and bool(piece.args) \
            and isinstance(piece.args[0], (ast.List, ast.Tuple, ast.ListComp))
    if isinstance(piece, ast.Name) and at is not None:
        flow = dataflow.binder.flow(dataflow.tree.owner(at))
        bindings = dataflow.reaching(flow, piece.id, dataflow.tree.statement_of(at))
        values = [element_bound(b) for b in bindings]
        return bool(values) and all(v is not None and (_copying_piece(dataflow, v, None) or row_of_index_matrix(
            dataflow.names.torch_name, partial(_reaching_at, dataflow), v, _int_literal)) for v in values)
    return False


def _reaching_at(dataflow: "Dataflow", key: str, node: ast.expr) -> List[Binding]:
    """Bindings of ``key`` that may reach the statement holding ``node``, in its function."""
    return dataflow.reaching(dataflow.binder.flow(dataflow.tree.owner(node)), key, dataflow.tree.statement_of(node))


def _int_literal(piece: ast.expr) -> bool:
    return isinstance(piece, ast.Constant) and type(piece.value) is int


# torch calls whose result is a 2-d index tensor (one row per hit: ``torch.nonzero(m)``, not ``as_tuple=True``)
_MATRIX_MAKERS = frozenset({"torch.nonzero", "torch.argwhere"})


# (what the two questions below read: a call's torch name, and the bindings of a name reaching a node)
TorchName = Callable[[ast.AST], Optional[str]]
ReachingAt = Callable[[str, ast.expr], List[Binding]]


def index_matrix(torch_name: TorchName, reaching_at: ReachingAt, expr: ast.expr, at: Optional[ast.expr]) -> bool:
    """``expr`` is a 2-d index tensor: ``torch.nonzero(m)`` (``as_tuple`` not given or a literal
    False), ``torch.argwhere(m)``, or a name every binding of which reaching ``at`` is one."""
    if isinstance(expr, ast.Call):
        return torch_name(expr.func) in _MATRIX_MAKERS and all(
            k.arg is not None and (k.arg != "as_tuple" or isinstance(k.value, ast.Constant) and k.value.value is False)
            for k in expr.keywords)
    if isinstance(expr, ast.Name) and at is not None:
        bindings = reaching_at(expr.id, at)
        return bool(bindings) and all(b.form == "assign" and b.value is not None
                                      and index_matrix(torch_name, reaching_at, b.value, None) for b in bindings)
    return False


def row_of_index_matrix(torch_name: TorchName, reaching_at: ReachingAt, value: ast.expr,
                        piece_ok: Callable[[ast.expr], bool]) -> bool:
    """``value`` is ``rows[i]``: one index (``piece_ok``: a Python int, or a tensor, as the caller
    can tell; not a tuple, which may take two dimensions) into a 2-d index tensor
    (:func:`index_matrix`). The result has a dimension or more: an index tensor, so indexing with
    it is advanced indexing, a copy (funasr's ``spk = torch.nonzero(m)[k]``, ``profile[i, spk]``)."""
    return isinstance(value, ast.Subscript) and not isinstance(value.slice, (ast.Tuple, ast.Slice, ast.Starred)) \
        and piece_ok(value.slice) and index_matrix(torch_name, reaching_at, value.value, value)


def element_bound(b: Binding) -> Optional[ast.expr]:
    """The value ``b`` gives its key: the whole value of a plain assignment, or the element a tuple
    display gives it (``a, b = x[i], x[j]``, same length, nothing starred); else None."""
    if b.form == "assign":
        return b.value
    stmt = b.stmt
    if b.form == "other" and isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 \
            and isinstance(stmt.value, (ast.Tuple, ast.List)):
        target = stmt.targets[0]
        if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(stmt.value.elts) \
                and not any(isinstance(e, ast.Starred) for e in (*target.elts, *stmt.value.elts)):
            at = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == b.key]
            if len(at) == 1:
                return stmt.value.elts[at[0]]
    return None
