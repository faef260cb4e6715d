"""A backward that consumed the graph holding a save before an in-place write (issue 24, precision).

``cost = loss(output, const)`` saves ``const``; ``cost.backward()`` (no ``retain_graph``) runs
the graph and frees what its nodes saved; ``const[mask] = ...`` afterwards trips nothing: a
later backward through that node would fail on the freed buffers first (PyTorch checks them
before the version counter), and the next turn's forward saves the new value in a new graph
(torchattacks' EAD attacks, optimisation loops that backward, then adjust a tensor in place).

:func:`consumed_before` answers it from syntax alone, and only where it is sure: the save's
statement binds a name (``cost = ...``) to a value that keeps the saving op's autograd history
(only differentiable steps between the op and the name), a later statement of the *same block*
runs ``X.backward()`` (or ``torch.autograd.backward(X)``) with ``X`` built from that name the
same way, nothing between them can leave the block (``break``, ``continue``, ``return``,
``yield``, ``raise``, an ``except`` or ``finally`` around, a context manager not torch's), and the
write is not between them. Every run of the
save is then followed by that backward before control reaches the write. ``retain_graph``,
``create_graph`` and ``inputs`` keep or skip the graph: such a backward does not count.
``autograd.grad`` runs only the nodes its inputs need: it does not count either.

:func:`consumed_then_dead` covers those: a backward of any kind (``grad``, ``inputs=``) that runs
through the op's result before the write, on every path, where nothing else holds that result.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, Iterable, List, NamedTuple, Optional, Set

from codemod import torch_api
from codemod.analysis.branches import block_holding, flags_left_off, live_nodes, off_flag, within
from codemod.analysis.facts import Facts
from codemod.analysis.syntax import CONTAINER_FILLING, FUNCTIONS, Function, Located, spreads

# methods and torch functions whose result has no autograd history, or drops the input's
_DROPPING = frozenset({
    "item", "tolist", "detach", "numpy", "data", "grad", "argmax", "argmin", "argsort", "long", "int", "bool",
    "byte", "short", "char", "nonzero", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite",
    "isclose", "equal", "allclose", "size", "dim", "numel", "requires_grad_", "detach_", "bucketize",
    "searchsorted", "count_nonzero", "logical_and", "logical_or", "logical_not", "logical_xor", "sign",
    "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
})
_KEEPING_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
_DIFFERENTIABLE = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow)
_ACCUMULATING = (ast.Add, ast.Sub, ast.Mult, ast.Div)  # `name op= value` keeping name's graph in it
_LEAVING = (ast.Break, ast.Continue, ast.Return, ast.Yield, ast.YieldFrom, ast.Await, ast.Raise)
_KEEPS_GRAPH = ("retain_graph", "create_graph", "inputs")


def _never(call: ast.Call) -> bool:
    return False


def _block(model: Facts, stmt: ast.stmt) -> Optional[List[ast.stmt]]:
    return block_holding(model.parent(stmt), stmt)


def _keeps_history(model: Facts, node: ast.expr, top: ast.expr, first_op: Callable[[ast.Call], bool],
                   module: Callable[[ast.Call], bool]) -> bool:
    """Every step from ``node`` up to ``top`` keeps ``node``'s autograd history in its result:
    ``+ - * / @ **``, a unary minus, indexing, a tensor method or torch function not in
    :data:`_DROPPING`, a torch module (``module``: ``self.crit(out, y)``); ``first_op`` accepts the
    first call (the op that saves, a user function that stores nothing)."""
    first = True
    while node is not top:
        parent = model.parent(node)
        if parent is None:
            return False
        if isinstance(parent, ast.BinOp):
            if not isinstance(parent.op, _DIFFERENTIABLE):
                return False
        elif isinstance(parent, ast.UnaryOp):
            if not isinstance(parent.op, (ast.USub, ast.UAdd)):
                return False
        elif isinstance(parent, ast.Subscript):
            if parent.value is not node:
                return False
        elif isinstance(parent, ast.Attribute):
            call = model.parent(parent)
            if parent.attr in _KEEPING_ATTRIBUTES:
                pass
            elif isinstance(call, ast.Call) and call.func is parent and parent.attr not in _DROPPING \
                    and not parent.attr.endswith("_"):
                parent = call  # a method of the tensor: the call's result
            else:
                return False
        elif isinstance(parent, ast.Call) and parent.func is not node and node in parent.args:
            name = model.torch_name(parent.func)
            if not (name is not None and name.startswith("torch.") and name.rsplit(".", 1)[-1] not in _DROPPING
                    or module(parent) or first and first_op(parent)):
                return False
            first = False
        else:
            return False
        node = parent
    return True


def _carries(model: Facts, expr: ast.expr, names: Set[str], module: Callable[[ast.Call], bool]) -> bool:
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names
               and _keeps_history(model, n, expr, _never, module) for n in ast.walk(expr))


def _consuming(model: Facts, stmt: ast.stmt, names: Set[str], module: Callable[[ast.Call], bool]) -> bool:
    """``X.backward()`` / ``torch.autograd.backward(X)`` of a tensor built from ``names``, with
    nothing that keeps the graph or runs only part of it."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    call = stmt.value
    if any(k.arg in _KEEPS_GRAPH and not (isinstance(k.value, ast.Constant) and k.value.value in (False, None))
           or k.arg is None for k in call.keywords):
        return False
    if isinstance(call.func, ast.Attribute) and call.func.attr == "backward" and len(call.args) <= 1 \
            and model.torch_name(call.func) is None:
        return _carries(model, call.func.value, names, module)
    if model.torch_name(call.func) == "torch.autograd.backward" and 1 <= len(call.args) <= 2:
        return _carries(model, call.args[0], names, module)
    return False


def consumed_before(model: Facts, load: ast.expr, write: Located, first_op: Callable[[ast.Call], bool],
                    module: Callable[[ast.Call], bool]) -> bool:
    """Whether a backward of the statement block holding the op that reads ``load`` (and saves
    it) consumes that op's graph after every run of it, before control can reach ``write``."""
    stmt = model.statement_of(load)
    if within(write, stmt) or not isinstance(stmt, (ast.Assign, ast.AugAssign)):
        return False
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name) or not within(load, stmt.value) \
            or not _keeps_history(model, load, stmt.value, first_op, module):
        return False
    block = _block(model, stmt)
    if block is None or _caught(model, stmt):
        return False
    names = {targets[0].id}
    index = next(i for i, s in enumerate(block) if s is stmt)
    for later in block[index + 1:]:
        if within(write, later) or any(isinstance(n, _LEAVING) for n in ast.walk(later)):
            return False
        if _consuming(model, later, names, module):
            return True
        _follow(model, later, names, module)
        if not names:
            return False
    return False


def _unset(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value in (False, None)


def _grad_root(model: Facts, stmt: ast.stmt, names: Set[str]) -> Optional[ast.expr]:
    """The root of the backward ``stmt`` runs whenever it runs: ``g = torch.autograd.grad(root, r)[0]``,
    ``root.backward(inputs=[r])``, ``torch.autograd.backward(root)``, where ``root`` is built from
    ``names`` through differentiable steps; None where there is none, or where the call may keep the
    graph (``retain_graph``, ``create_graph``, ``**kw``, or more positional arguments than the root,
    the inputs and the output gradients)."""
    value = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    while isinstance(value, ast.Subscript) and isinstance(value.ctx, ast.Load):
        value = value.value  # `grad(...)[0]`
    if not isinstance(value, ast.Call) or any(
            k.arg is None or k.arg in ("retain_graph", "create_graph") and not _unset(k.value) for k in value.keywords):
        return None
    name = model.torch_name(value.func)
    root: Optional[ast.expr] = None
    if name == "torch.autograd.grad" and 1 <= len(value.args) <= 3:
        root = value.args[0]
    elif name == "torch.autograd.backward" and 1 <= len(value.args) <= 2:
        root = value.args[0]
    elif name is None and isinstance(value.func, ast.Attribute) and value.func.attr == "backward" \
            and len(value.args) <= 1:
        root = value.func.value
    if root is None or any(isinstance(a, ast.Starred) for a in value.args):
        return None
    return root if _carries(model, root, names, _never) else None


def consumed_then_dead(model: Facts, load: ast.expr, write: Located) -> bool:
    """Whether a backward of the statement block holding the op that reads ``load`` (and saves it)
    runs through that op's result after every run of it, before control can reach ``write``
    (:func:`_grad_root`: ``torch.autograd.grad`` or a ``backward``, with ``inputs`` or not), and
    nothing else holds that result (:func:`dead_result`, the backward's root a sink): every backward
    through what the op saved runs before the write (adv-lib's attacks: ``loss = λ * l2``,
    ``grad(loss.sum(), r)``, then ``λ.lerp_(...)``; the next turn saves the new value in a new graph).
    Whether ``grad`` runs the op's node does not matter: after it, nothing can."""
    stmt = model.statement_of(load)
    if within(write, stmt) or model.owner(write) is not model.owner(stmt) or not isinstance(stmt, ast.Assign) \
            or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name) or not within(load, stmt.value):
        return False
    block = _block(model, stmt)
    if block is None or _caught(model, stmt):
        return False
    names = {stmt.targets[0].id}
    index = next(i for i, s in enumerate(block) if s is stmt)
    for later in block[index + 1:]:
        if within(write, later) or any(isinstance(n, _LEAVING) for n in ast.walk(later)):
            return False
        root = _grad_root(model, later, names)
        if root is not None:
            return dead_result(model, load, sink=root)
        _follow(model, later, names, _never)
        if not names:
            return False
    return False


def _caught(model: Facts, stmt: ast.stmt) -> bool:
    """An ``except`` or ``finally`` around ``stmt`` in its function, or a context manager other than
    torch's (``contextlib.suppress`` swallows exceptions), may go on without the backward."""
    for up in model.ancestors(stmt):
        if isinstance(up, FUNCTIONS):
            return False
        if isinstance(up, ast.Try) and (up.finalbody or up.handlers and any(within(stmt, s) for s in up.body)):
            return True
        if isinstance(up, (ast.With, ast.AsyncWith)) and not all(
                isinstance(item.context_expr, ast.Call) and model.torch_name(item.context_expr.func) is not None
                for item in up.items):
            return True
    return False


_PLAIN_BUILTINS = frozenset({"isinstance", "type", "len", "range", "float", "int", "bool", "abs", "max", "min",
                             "sum", "tuple", "list", "zip", "enumerate", "getattr", "hasattr"})
_STORING = CONTAINER_FILLING | {"register_buffer", "register_parameter", "__setitem__", "put"}


def keeps_nothing(model: Facts, func: ast.AST) -> bool:
    """A function of this file that stores nothing past its call (no attribute or item store, no
    ``global``/``nonlocal``, no ``append``-like call) and calls only torch, tensor methods and
    plain builtins: what it saves is reachable only from what it returns (or freed when it returns)."""
    if not isinstance(func, FUNCTIONS):
        return False
    for node in ast.walk(func):
        if node is not func and isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef, ast.Global, ast.Nonlocal,
                                                 ast.Yield, ast.YieldFrom)):
            return False
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return False
        if isinstance(node, ast.Call):
            callee = node.func
            if isinstance(callee, ast.Name) and callee.id in _PLAIN_BUILTINS:
                continue
            if model.torch_name(callee) is not None:
                continue
            if isinstance(callee, ast.Attribute) and callee.attr not in _STORING \
                    and not (isinstance(callee.value, ast.Name) and callee.value.id in ("self", "cls")):
                continue  # a method of a tensor (or another value the function was handed)
            return False
    return True


# What hands a graph on past a call although nothing is stored by name: a backward (``create_graph``
# leaves it in ``.grad``), a hook, ``retain_grad``.
_GRAPH_KEEPING_METHODS = frozenset({"backward", "retain_grad", "register_hook", "register_post_accumulate_grad_hook"})
_FRESH_CONTAINERS = frozenset({"list", "dict", "set"})


Resolve = Callable[[ast.Call], Optional[Function]]  # `self.m(...)`: the method of the caller's class it runs


def stores_nothing(model: Facts, func: ast.AST, seen: Optional[Set[ast.AST]] = None, writes_params: bool = False,
                   off: FrozenSet[str] = frozenset(), resolve: Optional[Resolve] = None) -> bool:
    """What a call of ``func`` computes from its arguments leaves the call only through its result:
    :func:`keeps_nothing`, and beyond it, no parameter written in place (``out.fill_(v)``, ``p += v``,
    through a name bound to a view of it too: the caller's tensor would carry the history; allowed
    with ``writes_params``, for a callee whose call passes none of them), no backward, hook or
    ``torch.autograd`` call run; an item store only into a local container the function made
    (``size = list(x.shape)``; ``size[d] = n``); and a call of another function of the file (a
    top-level ``def`` bound once) only where that one stores nothing either and the call passes none
    of the parameters it writes in place (``index_reduce(w, idx, d)`` whose ``out`` is left to its
    default). For a chain through a helper (``th.sum(helper(v, w)) < eps``, :func:`dead_result`) and
    the project index's ``SummaryFact.stores_nothing``. ``off``: steady flags of ``func`` the call leaves
    false (``branches.flags_left_off``): the ``if`` arms needing one of them true never run
    (``if inplace: a.div_(n)``). ``resolve``: a call ``self.m(...)`` runs the method it names, asked the same
    way (the caller's flags left false handed on where it passes them: ``inplace=inplace``)."""
    if not isinstance(func, FUNCTIONS):
        return False
    seen = set() if seen is None else seen
    if func in seen:
        return False  # recursion: not followed
    seen.add(func)
    try:
        return _stores_nothing_in(model, func, seen, writes_params, off, resolve)
    finally:
        seen.discard(func)  # (the calls being asked: a helper called twice is asked twice)


def _stores_nothing_in(model: Facts, func: Function, seen: Set[ast.AST], writes_params: bool,
                       off: FrozenSet[str], resolve: Optional[Resolve]) -> bool:
    params = set() if writes_params else _param_names(func)
    fresh = _fresh_containers(func)
    for node in live_nodes(func, off):
        if node is not func and isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef, ast.Global, ast.Nonlocal,
                                                 ast.Yield, ast.YieldFrom, ast.Await)):
            return False
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id in params:
            return False  # `p += v`: into the caller's tensor, where it is one
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return False
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                and not (isinstance(node.value, ast.Name) and node.value.id in fresh):
            return False
        if isinstance(node, ast.Call) and not _call_stores_nothing(model, node, params, seen, off, resolve):
            return False
    return True


def _root(value: ast.expr) -> Optional[str]:
    """``p`` of ``p``, ``p[1:]``, ``p.T``, ``p.view(-1).t()``: the name whose tensor the value may be."""
    while True:
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, (ast.Subscript, ast.Attribute, ast.Starred)):
            value = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            value = value.func.value
        elif isinstance(value, ast.IfExp):
            return _root(value.body) or _root(value.orelse)
        else:
            return None


def _param_names(func: Function) -> Set[str]:
    """The parameters, and the names some binding of which may be one of them (``x = p.view(-1)``)."""
    names = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    if func.args.vararg is not None:
        names.add(func.args.vararg.arg)
    if func.args.kwarg is not None:
        names.add(func.args.kwarg.arg)
    pairs = [(t.id, n.value) for n in ast.walk(func) if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None
             for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)]
    pairs += [(t.id, n.iter) for n in ast.walk(func) if isinstance(n, (ast.For, ast.AsyncFor))
              for t in ast.walk(n.target) if isinstance(t, ast.Name)]
    grew = True
    while grew:
        grew = False
        for name, value in pairs:
            if name not in names and any(isinstance(m, ast.Name) and m.id in names for m in ast.walk(value)) \
                    and _root(value) in names:
                names.add(name)
                grew = True
    return names


def _fresh_containers(func: Function) -> Set[str]:
    """Local names every binding of which makes a new list, dict or set (a display, a comprehension,
    ``list(...)``): an item stored there stays in the call unless the container leaves it."""
    made: Dict[str, bool] = {}
    plain: Set[int] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = node.value
            fresh = isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)) \
                or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _FRESH_CONTAINERS
            made[node.targets[0].id] = made.get(node.targets[0].id, True) and fresh
            plain.add(id(node.targets[0]))
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and id(node) not in plain:
            made[node.id] = False
        if isinstance(node, ast.arg):
            made[node.arg] = False
    return {name for name, ok in made.items() if ok}


def _call_stores_nothing(model: Facts, call: ast.Call, params: Set[str], seen: Set[ast.AST],
                         off: FrozenSet[str] = frozenset(), resolve: Optional[Resolve] = None) -> bool:
    callee = call.func
    method = resolve(call) if resolve is not None and isinstance(callee, ast.Attribute) \
        and isinstance(callee.value, ast.Name) and callee.value.id in ("self", "cls") else None
    if method is not None:
        return _helper_call_stores_nothing(model, call, method, True, seen, off, resolve)
    if isinstance(callee, ast.Name) and callee.id in _PLAIN_BUILTINS | _FRESH_CONTAINERS:
        return True
    name = model.torch_name(callee)
    if name is not None:
        first = call.args[0] if call.args else None
        return not name.startswith("torch.autograd") \
            and not (name.endswith("_") and isinstance(first, ast.Name) and first.id in params) \
            and not any(k.arg == "out" and isinstance(k.value, ast.Name) and k.value.id in params for k in call.keywords)
    if isinstance(callee, ast.Attribute):
        if callee.attr in _STORING or callee.attr in _GRAPH_KEEPING_METHODS or callee.attr.startswith("register_") \
                or isinstance(callee.value, ast.Name) and callee.value.id in ("self", "cls"):
            return False
        if callee.attr.endswith("_") and _root(callee.value) in params:
            return False  # `out.fill_(v)`: the caller's tensor, where it handed one
        return True  # a method of a tensor (or of another value the function was handed)
    if isinstance(callee, ast.Name):
        helper = _top_function(model, callee.id)
        return helper is not None and _helper_call_stores_nothing(model, call, helper, False, seen, off, resolve)
    return False


def _helper_call_stores_nothing(model: Facts, call: ast.Call, helper: Function, bound: bool, seen: Set[ast.AST],
                                off: FrozenSet[str], resolve: Optional[Resolve]) -> bool:
    """``call`` runs ``helper`` (``bound``: a method through ``self``/``cls``, its first parameter not among
    the arguments), which stores nothing with the flags the call leaves false, and is passed none of the
    parameters it then writes in place."""
    if spreads(call):
        return False
    flags = [name for name in _plain_params(helper) if off_flag(helper, name)]
    left = frozenset(flags_left_off(call, helper, flags, bound, off))
    if not stores_nothing(model, helper, seen, writes_params=True, off=left, resolve=resolve):
        return False
    written = _written_params(helper, left)
    plain = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args)]
    receiver = plain[:1] if bound and plain[:1] and plain[0] in ("self", "cls") else []
    plain = plain[len(receiver):]
    passed = {plain[i] for i in range(min(len(call.args), len(plain)))} | {str(k.arg) for k in call.keywords}
    if len(call.args) > len(plain):
        return False  # into `*args`
    return not (passed | set(receiver)) & written  # (`self.buf.copy_(v)`: into the instance)


def method_stores_nothing(model: Facts, call: ast.Call, method: Function, resolve: Resolve) -> bool:
    """``call`` (``self.m(...)``) runs ``method``, which, with the flags the call leaves false, stores
    nothing past its call (:func:`stores_nothing`, its ``self.n(...)`` calls asked through ``resolve``)
    and writes no parameter in place, ``self`` included: what it computes from its arguments leaves the
    call only through its result (kmeans++'s ``sims = self.sim(data, current)``, whose ``cos_sim`` writes
    ``a`` only ``if inplace:``)."""
    if spreads(call):
        return False
    left = frozenset(flags_left_off(call, method, [n for n in _plain_params(method) if off_flag(method, n)], True))
    return stores_nothing(model, method, off=left, resolve=resolve) and not _written_params(method, left)


def _plain_params(func: Function) -> List[str]:
    return [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]


def _top_function(model: Facts, name: str) -> Optional[Function]:
    """The one top-level ``def`` of the module named ``name``, which it binds no other way."""
    defs = [s for s in model.module.body if isinstance(s, FUNCTIONS) and s.name == name]
    if len(defs) != 1:
        return None
    for node in ast.walk(model.module):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) \
                or isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name \
                or isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node.name == name and node is not defs[0]:
            return None
    return defs[0]


def _written_params(func: Function, off: Iterable[str] = ()) -> Set[str]:
    """The parameters ``func`` may write in place (through a name bound to one of them, whatever it
    holds where it is written): an in-place method, ``p op= v``, an item store, ``out=``; not in an ``if``
    arm that needs a flag of ``off`` true (:func:`~codemod.analysis.branches.live_nodes`)."""
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    names = _param_names(func)
    written: Set[str] = set()
    for node in live_nodes(func, off):
        target: Optional[ast.expr] = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_"):
            target = node.func.value
        elif isinstance(node, ast.Call):
            target = next((k.value for k in node.keywords if k.arg == "out"), None)
        elif isinstance(node, ast.AugAssign):
            target = node.target
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            target = node.value
        root = _root(target) if target is not None else None
        if root is not None and root in names:
            written.add(root)
    if written - params:
        return set(params)  # written through an alias: which parameter is not told apart
    return written


# where a torch function's result may hold what it was given past the statement: the gradient
# machinery (`torch.autograd.backward(y, create_graph=True)` leaves a graph in `.grad`)
_FUNCTION_SPACES = ("torch.", "torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
_HISTORY_DROPPING = frozenset({"detach", "item", "tolist", "numpy", "data", "argmax", "argmin", "argsort", "long",
                               "int", "bool", "byte", "short", "char", "nonzero", "isnan", "isinf", "isfinite", "size",
                               "dim", "numel",
                               # comparisons: a boolean tensor (or a Python bool), no grad_fn
                               "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
                               "not_equal", "isclose", "equal", "allclose", "logical_and", "logical_or",
                               "logical_not", "logical_xor"})
# methods whose result is always a new tensor (never their receiver or a view of it): past one of
# them (or an operator), the chain holds a temporary no name shares, which an in-place method may write
_NEW_TENSOR_METHODS = frozenset({"sum", "mean", "prod", "norm", "abs", "exp", "log", "sqrt", "square", "neg", "mul",
                                 "div", "add", "sub", "pow", "clamp", "clip", "sigmoid", "tanh", "relu", "softmax",
                                 "log_softmax", "amax", "amin", "clone", "cumsum", "logsumexp", "matmul", "mm", "bmm"})
_NEW_TENSOR_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow, ast.Mod, ast.FloorDiv)
_WHOLE_BODY = frozenset({"locals", "vars", "eval", "exec"})


def _writes_out(call: ast.Call) -> bool:
    return any(k.arg in ("out", "inplace") or k.arg is None for k in call.keywords)


# Tensor methods that take tensors as arguments and make a new tensor of them, storing none of
# them anywhere (names no Python container shares: ``add``, ``put``, ``index`` stay out).
_COMBINING_METHODS = frozenset({
    "masked_fill", "where", "gather", "index_select", "masked_select", "scatter", "scatter_add", "index_add",
    "index_fill", "index_copy", "matmul", "mm", "bmm", "mul", "div", "sub", "lerp", "addcmul", "addcdiv",
    "expand_as", "view_as", "reshape_as", "type_as", "clamp", "maximum", "minimum", "dot", "outer",
})
# builtins that turn a tensor into a Python value: no history
_TO_PYTHON = frozenset({"int", "float", "bool", "len"})
_MAX_NAMES = 3  # names followed from the op's result to their uses


class Ends(NamedTuple):
    """What :func:`dead_result` asks of the layers above it, where they can tell.

    ``integral(expr)``: ``expr`` is known to be an integral or boolean tensor (``t.to(torch.long)``,
    ``t.type(torch.int16)``, ``torch.tensor(t, dtype=torch.int32)``): autograd records nothing for it.
    ``written(stmt, name)``: the chain's value is written into the tensor ``name`` holds (``name[i] = v``,
    ``name op= v``, ``name[i] op= v``) and no backward ever reaches that tensor's history.
    ``helper(call)``: ``call`` runs a function whose result is the only way out of it for what it computes
    from its arguments: the chain goes on through its result (``th.sum(ops.inner(v, w)) < 1e-7``)."""

    integral: Callable[[ast.expr], bool]
    written: Callable[[ast.AST, str], bool]
    # ``helper(call)``: the call runs a function that hands on what it computes from its arguments only
    # through its result (:func:`stores_nothing`, another file's through the project index)
    helper: Callable[[ast.Call], bool] = _never


def written_name(stmt: ast.AST) -> Optional[ast.Name]:
    """The name whose tensor ``stmt`` writes its value into: ``t[i] = v`` (one target), ``t op= v``, ``t[i] op= v``,
    or ``t.scatter_(1, idx, v)`` (a tensor's in-place method as a statement of its own, its result dropped)."""
    if isinstance(stmt, ast.Expr):
        call = stmt.value
        return call.func.value if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and call.func.attr in torch_api.INPLACE_METHODS and isinstance(call.func.value, ast.Name) \
            and not _writes_out(call) else None
    target: Optional[ast.expr] = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
        stmt.target if isinstance(stmt, ast.AugAssign) else None
    if isinstance(stmt, ast.Assign) and not isinstance(target, ast.Subscript):
        return None  # (`t = v` binds a name: its reads decide)
    while isinstance(target, ast.Subscript):
        target = target.value
    return target if isinstance(target, ast.Name) else None


def name_escapes(model: Facts, owner: Function, name: str) -> bool:
    """``name`` may be read where its loads do not show: declared ``global``/``nonlocal``, or the function
    hands its whole namespace on (``locals()``, ``vars()``, ``eval``, ``exec``)."""
    flow = model.flow(owner)
    if name in flow.declared:
        return True
    if flow.hands_on is None:  # (one walk per function: asked for each name of each write)
        flow.hands_on = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _WHOLE_BODY
                            for n in model.walk(owner))
    return flow.hands_on


def dead_result(model: Facts, load: ast.expr, depth: int = 0, sink: Optional[ast.expr] = None,
                ends: Optional[Ends] = None) -> bool:
    """The op that reads ``load`` (and may save it) hands its result to nothing a backward can
    run through: the statement is an expression statement (``w * b`` alone), or binds a name each
    read of which (where this binding reaches it; none at all, not declared ``global``/``nonlocal``)
    is itself such a dead use (``stdev = stdev.detach()``, ``if bool((dual <= 0).all())``,
    ``int(torch.argmax(dual))``), or a step between the op and the statement drops the history
    (``.detach()``, ``.item()``, a comparison, ``int(...)``), or the value is an ``if``/``while``
    test; every step up to there is an operator, an index, a tensor method (not ``backward``, not a
    ``register_`` hook, not in place; one that combines tensors, ``m.masked_fill(mask, v)``, for an
    argument) or a plain torch function (not in place, no ``out=``), none of which keeps the result
    anywhere. Nothing ever runs backward through what the op saved, so a later write into
    ``load``'s tensor trips nothing. Past an operator or a method of :data:`_NEW_TENSOR_METHODS`
    the chain holds a temporary, which an in-place method may write (``(d * w).sum(1).add_(c) > 0``).
    ``sink``: the root of a backward that runs before the write on every path
    (:func:`consumed_then_dead`); a read inside it, through differentiable steps, is no later use.
    ``ends`` (:class:`Ends`): a step whose result is known integral drops the history too, and a value written
    into a tensor that no backward reaches is dead (``trans[:, 1:] = trans[:, 1:] ** 2``, then only
    ``torch.argmin(trans)``). A ``return`` statement's value is dead only where a step drops the history before
    it leaves (``return w.detach(), n``, ``return m | ((-gg + beta * gp) >= 0.)``)."""
    if sink is not None and within(load, sink) and _keeps_history(model, load, sink, _never, _never):
        return True
    stmt = model.statement_of(load)
    owner = model.owner(stmt)
    if not isinstance(owner, FUNCTIONS):
        return False
    targets: List[ast.expr] = list(stmt.targets) if isinstance(stmt, ast.Assign) else \
        [stmt.target] if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) else []
    slices = [t.slice for t in targets if isinstance(t, ast.Subscript)]
    index = next((sl for sl in slices if within(load, sl)), None)
    if index is not None:
        top: ast.expr = index  # `banned[int(torch.argmax(d))] = True`: only where to write
    elif isinstance(stmt, (ast.Expr, ast.Assign)) or isinstance(stmt, ast.AugAssign) and ends is not None:
        top = stmt.value
    elif isinstance(stmt, ast.Return) and stmt.value is not None:
        top = stmt.value  # (handed back, the chain must drop the history first: `return w.detach(), n`)
    elif isinstance(stmt, (ast.If, ast.While)):
        top = stmt.test
    else:
        return False
    if not within(load, top):
        return False
    node: ast.expr = load
    temporary = False  # whether the chain holds a tensor made on it (no name shares it)
    while node is not top:
        parent = model.parent(node)
        if isinstance(parent, ast.Compare):
            return True  # a bool or a boolean tensor: no history
        if ends is not None and isinstance(parent, ast.Subscript) and parent.value is node \
                and isinstance(node, ast.Call) and _values_and_indices(model, node) and _item(parent.slice) in (1, -1):
            return True  # `x.max(dim=1)[1]`: the indices (int64), no history
        if isinstance(parent, (ast.BinOp, ast.UnaryOp)) or isinstance(parent, ast.Subscript) and parent.value is node:
            temporary = temporary or isinstance(parent, ast.BinOp) and isinstance(parent.op, _NEW_TENSOR_OPS) \
                or isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.USub)
        elif isinstance(parent, ast.Tuple) and index is not None and ends is not None:
            pass  # `spikes[(times - 1).clamp(0, n), cols] = 1`: one of the index's items
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            call = model.parent(parent)
            if parent.attr == "data" or parent.attr in _HISTORY_DROPPING and isinstance(call, ast.Call) \
                    and call.func is parent:
                return True
            called = call if isinstance(call, ast.Call) and call.func is parent else None
            if ends is not None and (parent.attr == "indices" and called is None
                                     or called is not None and not parent.attr.endswith("_") and ends.integral(called)):
                return True  # `x.max(dim=0).indices` (int64), `x.to(torch.long)`: no history
            if parent.attr in _KEEPING_ATTRIBUTES or ends is not None and parent.attr == "values":
                pass
            elif isinstance(call, ast.Call) and call.func is parent and parent.attr != "backward" \
                    and not parent.attr.startswith("register_") and (temporary or not parent.attr.endswith("_")) \
                    and not _writes_out(call):
                # (not `h.sigmoid_()`: its result is `h`, which the name still holds; `(h * w).sum(1).add_(c)`
                # writes the chain's own temporary)
                temporary = temporary or parent.attr in _NEW_TENSOR_METHODS
                parent = call
            else:
                return False
        elif isinstance(parent, ast.Call) and parent.func is not node and node in parent.args:
            base = written_name(stmt) if ends is not None and isinstance(stmt, ast.Expr) and stmt.value is parent else None
            if base is not None:  # `imp.scatter_(1, pos, imp.gather(1, pos) + c)`: into the tensor `imp` holds
                return ends.written(stmt, base.id) if ends is not None else False
            name = model.torch_name(parent.func) or ""
            if isinstance(parent.func, ast.Name) and name == "" and parent.func.id in _TO_PYTHON \
                    and len(parent.args) == 1 and not parent.keywords:
                return True  # `int(torch.argmax(d))`: a Python number
            if name.rsplit(".", 1)[-1] in _HISTORY_DROPPING and name.startswith("torch.") \
                    or ends is not None and name.startswith("torch.") and ends.integral(parent):
                return True  # `torch.argmax(d)`, `torch.tensor(d, dtype=torch.long)` (not `round(d)`: a tensor)
            method = isinstance(parent.func, ast.Attribute) and name == "" and parent.func.attr in _COMBINING_METHODS
            helper = ends is not None and name == "" and not method and not spreads(parent) and ends.helper(parent)
            if not (method or helper or any(name.startswith(space) and "." not in name[len(space):] for space in _FUNCTION_SPACES)) \
                    or name.endswith("_") or _writes_out(parent):
                return False  # (`torch.sigmoid_(h)`, `F.relu(h, inplace=True)`, `out=`: into a tensor still held)
        else:
            return False
        node = parent
    if index is not None or isinstance(stmt, (ast.Expr, ast.If, ast.While)):
        return True  # dropped, made a Python bool by the test, or an index where a value is stored
    base = written_name(stmt) if ends is not None else None
    if base is not None and ends is not None:
        return ends.written(stmt, base.id)  # into a tensor: whether a backward ever reaches it decides
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
        return False
    bound = stmt.targets[0]
    if ends is not None and isinstance(bound, (ast.Tuple, ast.List)) and len(bound.elts) == 2 \
            and isinstance(node, ast.Call) and _values_and_indices(model, node):
        bound = bound.elts[0]  # `values, idx = x.max(dim=1)`: idx is int64; what reads the values decides
    if not isinstance(bound, ast.Name):
        return False
    name = bound.id
    flow = model.flow(owner)
    if name_escapes(model, owner, name):
        return False
    if name not in flow.loads:
        return True
    if depth >= _MAX_NAMES:
        return False
    reads = [n for n, reaching in ((n, model.reaching(flow, name, model.statement_of(n))) for _, n in flow.loads[name])
             if not reaching or any(b.stmt is stmt for b in reaching)]  # (where the analysis cannot tell: counted)
    return all(model.owner(n) is owner and dead_result(model, n, depth + 1, sink, ends) for n in reads)


# Ops whose result is a (values, indices) pair, the indices int64: always, or where a dimension is given
# (``x.max(dim=1)``, ``torch.max(x, 1)``; ``x.max(y)``, ``torch.max(x, y)`` are one tensor of both).
_PAIRED = frozenset({"sort", "topk", "kthvalue", "mode", "cummax", "cummin"})
_PAIRED_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})


def _item(index: ast.expr) -> Optional[int]:
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        inner = _item(index.operand)
        return None if inner is None else -inner
    return index.value if isinstance(index, ast.Constant) and type(index.value) is int else None


def _values_and_indices(model: Facts, call: ast.Call) -> bool:
    """``call`` returns a (values, indices) pair: a tensor method or torch function of :data:`_PAIRED`, or
    of :data:`_PAIRED_WITH_DIM` given an int dimension (``dim=`` or a literal)."""
    name = model.torch_name(call.func)
    if name is not None:
        if not (name.startswith("torch.") and "." not in name[6:]):
            return False
        short, at = name[6:], 1
    elif isinstance(call.func, ast.Attribute):
        short, at = call.func.attr, 0
    else:
        return False
    if short in _PAIRED:
        return True
    return short in _PAIRED_WITH_DIM and not spreads(call) and (
        any(k.arg == "dim" for k in call.keywords) or len(call.args) > at and _item(call.args[at]) is not None)


# Statements that switch whether a tensor requires grad (or grad mode) between the save and a `.numpy()`.
_SWITCHING_METHODS = frozenset({"detach_", "requires_grad_"})
_GRAD_SWITCHES = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                            "torch.autograd.grad_mode.set_grad_enabled", "torch._C._set_grad_enabled"})
_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)
_CONDITIONAL = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.IfExp, ast.BoolOp)


def refused_numpy_before(model: Facts, load: ast.expr, write: Located, first_op: Callable[[ast.Call], bool],
                         module: Callable[[ast.Call], bool]) -> bool:
    """Whether, on every path from the op that reads ``load`` (and saves it) to ``write``, a
    ``.numpy()`` (without ``force=True``) of a tensor built from the op's result through
    differentiable steps runs first. PyTorch refuses it where that result requires grad ("Can't
    call numpy() on Tensor that requires grad"), the only case in which the op saved anything for
    a backward; so the write is reached only where nothing was saved (rwkv's ``sample_logits``:
    ``torch.cumsum(sorted_probs).cpu().numpy()`` before ``probs[probs < cutoff] = 0``). The
    path: the statements after the op's in its block, then into the ``if`` branch holding the
    write, and so on down to the write's block; other compound statements (loops, ``try``,
    ``with``, an ``if`` not holding the write) are passed over, their stores forgetting names;
    a name rebound without the result, an in-place ``detach_``/``requires_grad_`` of one, a
    store into its ``.data`` or ``.requires_grad``, or a grad-mode switch ends the search."""
    stmt = model.statement_of(load)
    if within(write, stmt) or not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 \
            or not isinstance(stmt.targets[0], ast.Name) or not within(load, stmt.value) \
            or not _keeps_history(model, load, stmt.value, first_op, module):
        return False
    block = _block(model, stmt)
    if block is None:
        return False
    names = {stmt.targets[0].id}
    start = next(i for i, s in enumerate(block) if s is stmt) + 1
    while True:
        for later in block[start:]:
            if within(write, later):
                if not isinstance(later, ast.If) or within(write, later.test):
                    return False
                if _numpy_of(model, later.test, names, module):
                    return True
                block, start = (later.body if any(within(write, s) for s in later.body) else later.orelse), 0
                break
            if _switches(model, later, names):
                return False
            if isinstance(later, _SIMPLE) and _numpy_of(model, later, names, module):
                return True
            _follow(model, later, names, module)
            if not names:
                return False
        else:
            return False


def _numpy_of(model: Facts, node: ast.AST, names: Set[str], module: Callable[[ast.Call], bool]) -> bool:
    """A ``.numpy()`` that ``node`` evaluates whenever it runs (not under a lambda, a comprehension,
    a conditional expression or the right of ``and``/``or``) of a tensor carrying ``names``."""
    todo = [node]
    while todo:
        here = todo.pop()
        if isinstance(here, _CONDITIONAL):
            if isinstance(here, ast.IfExp):
                todo.append(here.test)
            elif isinstance(here, ast.BoolOp):
                todo.append(here.values[0])
            continue
        if isinstance(here, ast.Call) and isinstance(here.func, ast.Attribute) and here.func.attr == "numpy" \
                and not here.args and not here.keywords and _carries(model, here.func.value, names, module):
            return True
        todo.extend(ast.iter_child_nodes(here))
    return False


def _switches(model: Facts, stmt: ast.stmt, names: Set[str]) -> bool:
    for node in ast.walk(stmt):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names:
            if node.attr in _SWITCHING_METHODS or isinstance(node.ctx, ast.Store):
                return True
        if isinstance(node, ast.Call) and model.torch_name(node.func) in _GRAD_SWITCHES:
            return True
    return False


def _follow(model: Facts, stmt: ast.stmt, names: Set[str], module: Callable[[ast.Call], bool]) -> None:
    """``names`` after ``stmt``: a name bound to a value carrying them joins, one bound otherwise leaves."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        if _carries(model, stmt.value, names, module):
            names.add(stmt.targets[0].id)
        else:
            names.discard(stmt.targets[0].id)
        return
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in names \
            and isinstance(stmt.op, _ACCUMULATING):
        return  # `loss += aux`: the old graph stays in it
    names -= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
