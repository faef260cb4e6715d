"""An ``out=`` call that aborts the forward after a save (fresh55's and fresh57's out-call group).

A torch function called with ``out=`` refuses, in the forward, any argument that requires grad while grad
mode is on ("functions with out=... arguments don't support automatic differentiation, but one of the
arguments requires grad"; torch 2.13). A save is backpropagated only where the saving op's result requires
grad (autograd records a node only then). So where every path from the saving op on reaches such a call
with an argument computed from that result through differentiable steps only, grad mode unchanged and no
backward, hook or stash of the result on the way, the program never reaches a backward that reads the save:
a write after it breaks nothing a backward would see.

The facts asked, all must-facts (unknown is no):

- :func:`abort_line`: from the statement holding the saving op (the op over the saved name's load, with
  view steps between), a must-set of names whose tensor requires grad wherever the op's result does
  (``taint``) is carried forward in statement order, through ``if`` arms (intersection), loops (a later
  turn intersected in, the loop variables dropped) and out of the blocks around the save; a sink counts only
  in a plain statement run on every path (also in the first turn of ``for _ in range(N)``, ``N`` a literal
  of at least 1): a torch ``out=`` call, unconditional in its statement, one argument of which (not
  ``out``) is computed from the set, or a call of a top-level function of the file of which
  :func:`_helper_aborts` holds for the parameter such an argument binds.
- Anything the analysis cannot follow gives no: a ``with``, ``try``, ``match``, ``return``, ``raise``,
  ``yield``, ``break``/``continue``, ``assert``, ``del``, ``global``/``nonlocal``, a nested ``def`` or
  ``class``, a ``while``/``for`` with ``else``; a backward, hook, ``retain_grad`` or ``torch.autograd``
  call, a grad-mode switch; a call that receives a tensor of the set and is neither a torch function, a
  tensor method of :data:`_SAFE_METHODS`, nor a function of the run that stores nothing
  (``consumed.stores_nothing``); an attribute store in a statement reading the set; a write in place of a
  tensor of the set into a parameter (the caller could catch the error and backpropagate it).
"""

from __future__ import annotations

import ast
from typing import Callable, NamedTuple, Optional, Sequence, Set, Tuple, cast

from codemod.analysis.dataflow import VIEW_METHODS

# Ops whose result requires grad wherever an input does (floating results; what autograd records).
_PASSING_METHODS = frozenset({
    "sum", "mean", "exp", "log", "sqrt", "rsqrt", "pow", "mul", "div", "add", "sub", "matmul", "mm", "bmm",
    "neg", "abs", "reciprocal", "cumsum", "cumprod", "clamp", "clamp_min", "clamp_max", "index_select", "gather",
    "to_dense", "clone", "contiguous", "float", "double", "sin", "cos", "tanh", "sigmoid", "relu", "norm",
    "square", "prod", "softmax", "log_softmax", "masked_fill", "lerp", "addcmul", "addcdiv", "dot", "outer",
    "flip", "roll", "repeat", "tile", "diagonal", "diag", "expand_as", "reshape_as", "view_as", "amax", "amin",
    "logsumexp", "std", "var", "trace", "tril", "triu", "sinh", "cosh", "atan", "erf", "log1p", "expm1",
})
_PASSING_FUNCTIONS = _PASSING_METHODS | frozenset({
    "einsum", "stack", "cat", "where", "pad", "addmm", "addbmm", "baddbmm", "maximum", "minimum", "mv", "outer",
})
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH"})
# Views that keep the history (not ``detach``; not the splits, whose result is a tuple).
_PASSING_VIEWS = frozenset(VIEW_METHODS) - {
    "detach", "unbind", "split", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes",
    "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"}
_PASSING_BINOPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow)
# Tensor methods a call may make on a tensor of the set without handing its graph on.
_SAFE_METHODS = _PASSING_METHODS | frozenset(VIEW_METHODS) | frozenset({
    "size", "dim", "numel", "item", "detach", "argmax", "argmin", "any", "all", "long", "int", "bool",
    "to", "cpu", "cuda", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
})
# Names whose call hands a graph on or changes grad mode: never passed.
_GRAPH_CALLS = frozenset({"backward", "register_hook", "retain_grad", "register_post_accumulate_grad_hook",
                          "requires_grad_", "detach_", "set_grad_enabled", "no_grad", "enable_grad",
                          "inference_mode", "grad", "append", "extend", "insert", "setdefault", "update",
                          "put", "save", "add_module", "register_buffer", "register_parameter"})
_OP_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special"})
_HARMLESS_BUILTINS = frozenset({"float", "int", "len", "isinstance", "print", "range", "bool"})
_STOP = (ast.Return, ast.Raise, ast.Yield, ast.YieldFrom, ast.Await, ast.Break, ast.Continue, ast.Assert,
         ast.Delete, ast.Global, ast.Nonlocal, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
         ast.With, ast.AsyncWith, ast.Try, ast.AsyncFor, ast.NamedExpr, ast.Match)
_MAX_HELPER_DEPTH = 3
# Torch functions whose ``out=`` form refuses, in the forward, any tensor argument that requires grad (measured
# on torch 2.13 with only the last tensor argument requiring grad: tests/test_prec58b_groups.py). Not every
# ``out=`` form does: ``tensordot``, ``inner``, ``linalg.norm``, ``linalg.matrix_norm``, ``nuclear_norm``,
# ``softmax`` and ``log_softmax`` decompose into differentiable ops and return a result that requires grad.
REFUSING_OUT = frozenset("torch." + n for n in (
    "addmm", "baddbmm", "addmv", "addr", "addcmul", "addcdiv", "mm", "bmm", "mv", "matmul", "dot", "outer",
    "cumsum", "cumprod", "mul", "add", "sub", "div", "where", "clamp", "sum", "mean", "prod", "amax", "std", "norm",
    "logsumexp", "cat", "stack", "hstack", "vstack", "exp", "log", "sqrt", "pow", "sigmoid", "tanh", "square", "abs",
    "neg", "index_select", "gather", "lerp", "kron", "diff", "maximum", "minimum"))

Taint = Optional[Set[str]]  # None: the analysis cannot follow (no)


class OutFacts(NamedTuple):
    """What the walk asks of the file."""

    parent: Callable[[ast.AST], Optional[ast.AST]]
    torch_name: Callable[[ast.AST], Optional[str]]
    callee: Callable[[ast.Call], object]  # (a def of this file, label), another file's qualname, or None
    stores_nothing: Callable[[ast.Call], bool]  # a function of the run that keeps nothing past its call
    owned: Callable[[str, ast.stmt], bool]  # every binding of the name reaching the statement made its tensor


class _Walk:
    """One walk over a function's statements from a save (or a helper's entry) on."""

    def __init__(self, facts: OutFacts, depth: int) -> None:
        self.facts = facts
        self.depth = depth
        self.sink: Optional[int] = None

    # ------------------------------------------------------------ expressions
    def _step(self, child: ast.AST, parent: ast.AST) -> Optional[ast.AST]:
        """``parent`` if its value requires grad wherever ``child``'s does, else None (a keyword is passed)."""
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, _PASSING_BINOPS):
            return parent
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd)):
            return parent
        if isinstance(parent, ast.Subscript) and parent.value is child:
            return parent
        if isinstance(parent, (ast.Tuple, ast.List)) and isinstance(parent.ctx, ast.Load):
            return parent
        if isinstance(parent, ast.keyword) and parent.arg != "out":
            return parent
        if isinstance(parent, ast.Attribute) and parent.value is child:
            if parent.attr in _VIEW_ATTRIBUTES:
                return parent
            call = self.facts.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent and (
                    parent.attr in _PASSING_METHODS or parent.attr in _PASSING_VIEWS) \
                    and not any(k.arg == "out" for k in call.keywords):
                return parent
            return None
        if isinstance(parent, ast.Call) and parent.func is not child:
            if any(k.arg == "out" for k in parent.keywords):
                return None
            if isinstance(parent.func, ast.Attribute) and isinstance(child, ast.Attribute) and child is parent.func:
                return parent
            name = self.facts.torch_name(parent.func)
            return parent if name is not None and name.rsplit(".", 1)[-1] in _PASSING_FUNCTIONS \
                and not name.startswith("torch.autograd") else None
        if isinstance(parent, ast.Call) and parent.func is child and isinstance(child, ast.Attribute):
            return parent  # the method call `_step` let through as an Attribute
        return None

    def _climb(self, node: ast.AST, top: ast.AST) -> bool:
        """Every step from ``node`` up to ``top`` passes grad on."""
        while node is not top:
            parent = self.facts.parent(node)
            if parent is None or self._step(node, parent) is None:
                return False
            node = parent
        return True

    def derived(self, expr: ast.AST, taint: Set[str]) -> bool:
        """``expr``'s value requires grad wherever a tensor of ``taint`` does."""
        return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in taint and self._climb(n, expr)
                   for n in ast.walk(expr))

    # ------------------------------------------------------------ statements
    def simple(self, stmt: ast.stmt, taint: Set[str]) -> Tuple[Taint, bool]:
        """The set after ``stmt``, and whether ``stmt`` runs a sink (None: not followed)."""
        if isinstance(stmt, _STOP) or any(isinstance(n, _STOP) for n in ast.walk(stmt)):
            return None, False
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                return None, False  # what it stores may hold the op's history (the caller could catch the error)
            if isinstance(node, ast.Call) and not self._call_ok(node, taint):
                return None, False
        sunk = any(isinstance(n, ast.Call) and self._unconditional(n, stmt) and self._sink(n, taint)
                   for n in ast.walk(stmt))
        return self._update(stmt, set(taint)), sunk

    def _call_ok(self, call: ast.Call, taint: Set[str]) -> bool:
        return call_ok(self, call, lambda e: any(isinstance(n, ast.Name) and n.id in taint for n in ast.walk(e)),
                       lambda c: self._is_sink_helper(c, taint))

    def _unconditional(self, call: ast.Call, stmt: ast.stmt) -> bool:
        node: ast.AST = call
        while node is not stmt:
            parent = self.facts.parent(node)
            if parent is None or isinstance(parent, (ast.IfExp, ast.BoolOp, ast.comprehension, ast.ListComp,
                                                     ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
                return False
            node = parent
        return True

    def _sink(self, call: ast.Call, taint: Set[str]) -> bool:
        name = self.facts.torch_name(call.func)
        if name in REFUSING_OUT and any(k.arg == "out" for k in call.keywords):
            if any(self.derived(a, taint) for a in [*call.args, *(k.value for k in call.keywords if k.arg != "out")]):
                self.sink = call.lineno
                return True
            return False
        return self._is_sink_helper(call, taint)

    def _is_sink_helper(self, call: ast.Call, taint: Set[str]) -> bool:
        if self.depth >= _MAX_HELPER_DEPTH or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords) or not isinstance(call.func, ast.Name):
            return False
        target = self.facts.callee(call)
        func = target[0] if isinstance(target, tuple) and target else None
        if not isinstance(func, ast.FunctionDef) or func.decorator_list or func.args.vararg or func.args.kwarg \
                or not isinstance(self.facts.parent(func), ast.Module):
            return False
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        bound = {params[i]: a for i, a in enumerate(call.args) if i < len(params)}
        bound.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        for param, arg in bound.items():
            if self.derived(arg, taint):
                line = _helper_aborts(self.facts, func, param, self.depth + 1)
                if line is not None:
                    self.sink = line
                    return True
        return False

    def _update(self, stmt: ast.stmt, taint: Set[str]) -> Taint:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = stmt.value
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            carried = value is not None and self.derived(value, taint)
            for target in targets:
                if isinstance(stmt, ast.AugAssign) and isinstance(target, ast.Name) and not self.facts.owned(target.id, stmt):
                    return None  # `p += v`: into the caller's tensor, where it is one
                if isinstance(target, ast.Name):
                    if carried:
                        taint.add(target.id)
                    elif not isinstance(stmt, ast.AugAssign):
                        taint.discard(target.id)
                elif isinstance(target, ast.Subscript):
                    base = target.value
                    while isinstance(base, ast.Subscript):
                        base = base.value
                    if not isinstance(base, ast.Name) or not self.facts.owned(base.id, stmt):
                        return None  # into the caller's tensor (or one the walk cannot name)
                    if carried:
                        taint.add(base.id)
                elif isinstance(target, ast.Attribute):
                    if carried:
                        return None
                else:  # unpacking
                    for n in ast.walk(target):
                        if isinstance(n, ast.Name):
                            taint.discard(n.id)
                        elif isinstance(n, (ast.Attribute, ast.Subscript, ast.Starred)):
                            return None
            return taint
        if isinstance(stmt, ast.Expr):
            call = stmt.value
            for node in ast.walk(stmt):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr.endswith("_") and not node.func.attr.startswith("_"):
                    base = node.func.value
                    while isinstance(base, (ast.Subscript, ast.Attribute)) and not (
                            isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self"):
                        base = base.value
                    if not isinstance(base, ast.Name) or not self.facts.owned(base.id, stmt):
                        return None  # into the caller's tensor (or one the walk cannot name)
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                    and call.func.attr.endswith("_") and not call.func.attr.startswith("_") \
                    and any(self.derived(a, taint) for a in [*call.args, *(k.value for k in call.keywords)]):
                base = call.func.value
                while isinstance(base, ast.Subscript):
                    base = base.value
                if isinstance(base, ast.Name):
                    taint.add(base.id)
            return taint
        if isinstance(stmt, ast.Pass):
            return taint
        return None

    def block(self, stmts: Sequence[ast.stmt], taint: Taint) -> Tuple[Taint, bool]:
        """The set after ``stmts`` run from ``taint``, and whether every path through them runs a sink."""
        for stmt in stmts:
            if taint is None:
                return None, False
            if isinstance(stmt, ast.If):
                if any(isinstance(n, _STOP) for n in ast.walk(stmt)) or not self._call_free(stmt.test, taint):
                    return None, False
                body, sunk_b = self.block(stmt.body, set(taint))
                other, sunk_o = self.block(stmt.orelse, set(taint))
                if body is None or other is None:
                    return None, False
                if sunk_b and sunk_o:
                    return body & other, True
                taint = body & other
            elif isinstance(stmt, (ast.For, ast.While)):
                if stmt.orelse or any(isinstance(n, _STOP) for n in ast.walk(stmt)):
                    return None, False
                if isinstance(stmt, ast.For) and _turns_at_least_once(stmt, self.facts):
                    first, sunk = self.block(stmt.body, _drop_targets(stmt, set(taint)))
                    if first is not None and sunk:
                        return first, True
                taint = self.loop(stmt, taint)
            elif isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Pass)):
                taint, sunk = self.simple(stmt, taint)
                if taint is not None and sunk:
                    return taint, True
            else:
                return None, False
        return taint, False

    def _call_free(self, expr: ast.expr, taint: Set[str]) -> bool:
        return all(self._call_ok(n, taint) for n in ast.walk(expr) if isinstance(n, ast.Call))

    def loop(self, loop: ast.stmt, taint: Taint) -> Taint:
        """The set after ``loop`` (none, one or more turns: intersected), its test or iterable checked too."""
        head = loop.iter if isinstance(loop, ast.For) else loop.test  # type: ignore[attr-defined]
        if taint is None or not self._call_free(head, taint):
            return None
        for _ in range(3):
            start = _drop_targets(loop, set(taint)) if isinstance(loop, ast.For) else set(taint)
            after, _sunk = self.block(loop.body, start)  # type: ignore[attr-defined]
            if after is None:
                return None
            merged = taint & after
            if isinstance(loop, ast.For):
                merged = _drop_targets(loop, merged)
            if merged == taint:
                return taint
            taint = merged
        return taint


def call_ok(walk: _Walk, call: ast.Call, mentions: Callable[[ast.AST], bool],
            sink_helper: Callable[[ast.Call], bool]) -> bool:
    """``call`` hands nothing of the set on (``mentions``: an expression reading it): a torch function (not
    ``torch.autograd``), a tensor method that keeps nothing (:data:`_SAFE_METHODS`, or one in place), a
    function of the run storing nothing past its call, or a helper running a sink; never a backward, hook,
    stash or grad-mode switch (:data:`_GRAPH_CALLS`)."""
    func = call.func
    short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    name = walk.facts.torch_name(func)
    if short in _GRAPH_CALLS or name is not None and name.startswith("torch.autograd"):
        return False
    passed = [*call.args, *(k.value for k in call.keywords)]
    receiver = func.value if isinstance(func, ast.Attribute) else None
    touches = any(mentions(a) for a in passed)
    touched_receiver = receiver is not None and mentions(receiver)
    if name is not None:  # a torch function of the namespaces of ops (not `torch.utils.checkpoint`, `torch.func`...)
        return name.rsplit(".", 1)[0] in _OP_NAMESPACES
    if walk.facts.callee(call) is not None:
        return walk.facts.stores_nothing(call) or touches and sink_helper(call)
    if short is None:
        return False
    if isinstance(func, ast.Name):
        return short in _HARMLESS_BUILTINS
    if isinstance(receiver, ast.Name) and receiver.id == "math":
        return True
    if short.endswith("_") and not short.startswith("_"):
        return True  # a tensor's in-place method
    return short in _SAFE_METHODS if touched_receiver else short in _SAFE_METHODS - {"add"}


def _drop_targets(loop: ast.stmt, taint: Set[str]) -> Set[str]:
    target = getattr(loop, "target", None)
    return taint - {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} if target is not None else taint


def _turns_at_least_once(loop: ast.For, facts: OutFacts) -> bool:
    """``for _ in range(3)`` / ``range(1, 4)``: literal bounds, at least one turn."""
    it = loop.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and not it.keywords and 1 <= len(it.args) <= 2
            and all(isinstance(a, ast.Constant) and type(a.value) is int for a in it.args)):
        return False
    bounds = [a.value for a in it.args if isinstance(a, ast.Constant) and type(a.value) is int]
    return bounds[0] >= 1 if len(bounds) == 1 else len(bounds) == 2 and bounds[1] > bounds[0]


def _helper_aborts(facts: OutFacts, func: ast.FunctionDef, param: str, depth: int) -> Optional[int]:
    """Every path through ``func`` (a top-level function of the file, undecorated) runs a sink for a
    tensor computed from ``param`` (:class:`_Walk`): the line of the out= call, else None."""
    walk = _Walk(facts, depth)
    taint, sunk = walk.block(func.body, {param})
    return walk.sink if taint is not None and sunk else None


def _saving_root(walk: _Walk, load: ast.expr, stmt: ast.stmt) -> Optional[ast.AST]:
    """The expression of ``stmt`` computed from the saving op over ``load`` (the first op above its view
    steps: a torch op, an operator, or a function of the run storing nothing past its call, whose result
    is what leaves it), through differentiable steps only; None where a step may drop the grad."""
    facts = walk.facts
    node: ast.AST = load
    saver_seen = False
    while True:
        parent = facts.parent(node)
        if parent is None:
            return None
        if parent is stmt:
            return node
        step = walk._step(node, parent)
        if step is None and not saver_seen and isinstance(parent, ast.Call) and parent.func is not node \
                and not any(k.arg == "out" for k in parent.keywords) \
                and (facts.torch_name(parent.func) is not None or facts.callee(parent) is not None
                     and facts.stores_nothing(parent)):
            step = parent  # the saving op itself: it saved, so its result requires grad where the save counts
        if step is None:  # a call the op's result goes into: only a sink of it keeps the proof away (`_seed`)
            return node if saver_seen and isinstance(parent, (ast.Call, ast.keyword)) else None
        if isinstance(parent, (ast.BinOp, ast.Call)) and not (
                isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr in _PASSING_VIEWS):
            saver_seen = True
        node = parent


def abort_line(facts: OutFacts, load: ast.expr, stmt: ast.stmt, owner: ast.AST) -> Optional[int]:
    """The line of the ``out=`` call (or of the helper call running one) that every path from the save over
    ``load`` (in ``stmt``, a statement of ``owner``) runs with a tensor computed from the saving op's result,
    else None."""
    if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)) or owner.decorator_list:
        return None
    walk = _Walk(facts, 0)
    root = _saving_root(walk, load, stmt)
    if root is None or not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
        return None
    seeded = _seed(walk, stmt, root)  # the save's own statement: its sinks run after the op, then its bindings
    if seeded is None:
        return None
    current: Taint = seeded[0]
    if seeded[1]:
        return walk.sink
    below: ast.AST = stmt
    while current is not None:
        holder = facts.parent(below)
        stmts = next((getattr(holder, f) for f in ("body", "orelse") if below in getattr(holder, f, [])), None)
        if holder is None or stmts is None or holder is not owner and not isinstance(holder, (ast.If, ast.For, ast.While)):
            return None
        at = next(i for i, s in enumerate(stmts) if s is below)
        current, sunk = walk.block(stmts[at + 1:], current)
        if current is not None and sunk:
            return walk.sink
        if holder is owner or current is None:
            return None
        if isinstance(holder, (ast.For, ast.While)):
            if holder.orelse or stmts is holder.orelse or any(isinstance(n, _STOP) for n in ast.walk(holder)):
                return None
            current = walk.loop(holder, current)
        elif any(isinstance(n, _STOP) for n in ast.walk(holder)):
            return None
        below = holder
    return None


def _seed(walk: _Walk, stmt: ast.stmt, root: ast.AST) -> Optional[Tuple[Set[str], bool]]:
    """The set after the save's own statement, and whether that statement already runs a sink on the
    saving op's result (``phi[:, 1] = _smooth(phi[:, 0] * w)``)."""
    if isinstance(stmt, _STOP) or any(isinstance(n, _STOP) for n in ast.walk(stmt)):
        return None
    saved = _RootWalk(walk, root)
    for node in ast.walk(stmt):
        if isinstance(node, ast.Call) and not saved.call_ok(node):
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            return None
    sunk = any(isinstance(n, ast.Call) and walk._unconditional(n, stmt) and saved.sink(n) for n in ast.walk(stmt))
    taint: Set[str] = set()
    value = getattr(stmt, "value", None)
    carried = value is not None and saved.holds(value)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
            base = target
            while isinstance(base, ast.Subscript):
                base = base.value
            if not isinstance(base, ast.Name) or (base is not target or isinstance(stmt, ast.AugAssign)) \
                    and not walk.facts.owned(base.id, stmt):
                return None  # into the caller's tensor (or one the walk cannot name)
            if carried:
                taint.add(base.id)
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Attribute) \
            and stmt.value.func.attr.endswith("_") and not stmt.value.func.attr.startswith("_"):
        call = stmt.value
        written: ast.expr = cast(ast.Attribute, call.func).value
        while isinstance(written, ast.Subscript):
            written = written.value
        if not isinstance(written, ast.Name) or not walk.facts.owned(written.id, stmt):
            return None  # into the caller's tensor (or one the walk cannot name)
        if any(saved.holds(a) for a in [*call.args, *(k.value for k in call.keywords)]) or saved.holds(call):
            taint.add(written.id)
    elif not isinstance(stmt, ast.Expr):
        return None
    return taint, sunk


class _RootWalk:
    """``derived`` of the save's own statement: what is computed from ``root`` (the saving op's result)."""

    def __init__(self, walk: _Walk, root: ast.AST) -> None:
        self.walk = walk
        self.root = root

    def holds(self, expr: ast.AST) -> bool:
        return any(n is self.root for n in ast.walk(expr)) and self.walk._climb(self.root, expr)

    def call_ok(self, call: ast.Call) -> bool:
        return call is self.root or call_ok(self.walk, call, lambda e: any(n is self.root for n in ast.walk(e)), self.sink)

    def sink(self, call: ast.Call) -> bool:
        passed = [*call.args, *(k.value for k in call.keywords if k.arg != "out")]
        if self.walk.facts.torch_name(call.func) in REFUSING_OUT and any(k.arg == "out" for k in call.keywords):
            if any(self.holds(a) for a in passed):
                self.walk.sink = call.lineno
                return True
            return False
        if self.walk.depth >= _MAX_HELPER_DEPTH or any(isinstance(a, ast.Starred) for a in call.args) \
                or any(k.arg is None for k in call.keywords) or not isinstance(call.func, ast.Name):
            return False
        target = self.walk.facts.callee(call)
        func = target[0] if isinstance(target, tuple) and target else None
        if not isinstance(func, ast.FunctionDef) or func.decorator_list or func.args.vararg or func.args.kwarg \
                or not isinstance(self.walk.facts.parent(func), ast.Module):
            return False
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        bound = {params[i]: a for i, a in enumerate(call.args) if i < len(params)}
        bound.update({k.arg: k.value for k in call.keywords if k.arg is not None})
        for param, arg in bound.items():
            if self.holds(arg):
                line = _helper_aborts(self.walk.facts, func, param, self.walk.depth + 1)
                if line is not None:
                    self.walk.sink = line
                    return True
        return False
