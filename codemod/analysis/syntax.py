"""Small facts read straight off ``ast`` nodes: keys of names and attribute chains, arguments,
constants, spans and blocks. No state, no caches: every other analysis module builds on these."""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple, Union

Pos = Tuple[int, int]  # (line, column); columns in UTF-8 bytes, as ast counts
Span = Tuple[Pos, Pos]
# The nodes that have a position (``ast`` gives the others none: operators, ``arguments``...).
Located = Union[ast.expr, ast.stmt, ast.arg, ast.keyword, ast.excepthandler, ast.alias, ast.pattern]
Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]
Owner = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Module]  # a body with its own names
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
BODIES = ("body", "orelse", "finalbody")  # the statement lists (blocks) of a node
Block = Tuple[int, str]  # (id of the node holding the block, its field)
# The methods by which Python's containers (list, set, dict, deque) take in what they are handed:
# one table; each part that asks names what it adds (``hazard``: a queue's ``put``; ``kept``:
# ``extendleft``; ``consumed``: also a module's ``register_buffer`` and ``__setitem__``).
CONTAINER_FILLING = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft"})


def target_key(node: ast.AST) -> Optional[str]:
    """``x`` -> "x", ``self.h.w`` -> "self.h.w"; anything else -> None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = target_key(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def subscript_base(node: ast.expr) -> ast.expr:
    """``d[0][1:]`` -> ``d``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node


def has_call(node: ast.AST) -> bool:
    """Whether evaluating ``node`` may call something (so it must not be evaluated twice)."""
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(node))


def is_const(node: Optional[ast.AST], value: Optional[bool]) -> bool:
    """``node`` is the literal ``True``/``False``/``None``."""
    return isinstance(node, ast.Constant) and node.value is value


def call_args(call: ast.Call) -> List[ast.expr]:
    """Every argument expression, positional then keyword (``*a``/``**k`` included)."""
    return [*call.args, *(k.value for k in call.keywords)]


def first_arg(call: ast.Call) -> Optional[ast.expr]:
    """The first argument as written, positional or keyword; None without arguments."""
    if call.args:
        return call.args[0]
    return call.keywords[0].value if call.keywords else None


def positional(call: ast.Call) -> List[ast.expr]:
    """The plain positional arguments, up to the first ``*args``."""
    out: List[ast.expr] = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            break
        out.append(a)
    return out


def spreads(call: ast.Call) -> bool:
    """The call spreads ``*args`` or ``**kwargs``: which argument meets which parameter is unknown."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords)


def default_of(func: "Function", param: str) -> Optional[ast.expr]:
    """The default of ``func``'s parameter, None where it has none."""
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)]
    if param in plain:
        i = plain.index(param) - (len(plain) - len(args.defaults))
        return args.defaults[i] if i >= 0 else None
    kw = [a.arg for a in args.kwonlyargs]
    return args.kw_defaults[kw.index(param)] if param in kw else None


def passed_for(call: ast.Call, name: str, position: Optional[int]) -> Optional[ast.expr]:
    """What ``call`` (spreading nothing) passes for the parameter ``name`` at ``position``
    (counted among the parameters its arguments meet); None where it passes nothing."""
    passed = next((k.value for k in call.keywords if k.arg == name), None)
    if passed is None and position is not None and position < len(call.args):
        passed = call.args[position]
    return passed


def span(node: Located) -> Span:
    """((line, column), (end line, end column)) of a node."""
    # typeshed's end positions are Optional (a node built by hand has none); a parsed node's
    # never are, so ``or 0`` changes no value (a call of ``cast`` would cost one per binding).
    return (node.lineno, node.col_offset), (node.end_lineno or 0, node.end_col_offset or 0)


def bound_names(target: ast.AST) -> Set[str]:
    """The names a binding target binds: ``p`` -> {"p"}; ``i, (a, b)`` -> {"i", "a", "b"}."""
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def iterable_of(loop: ast.AST, key: str) -> Optional[ast.expr]:
    """What the loop variable ``key`` is drawn from: ``for k in it`` -> ``it``;
    ``for a, k in zip(x, it)`` -> ``it``; ``for i, k in enumerate(it)`` -> ``it``."""
    target = getattr(loop, "target", None)
    iterable = getattr(loop, "iter", None)
    if isinstance(target, ast.Name):
        return iterable if target.id == key else None
    if not (isinstance(target, ast.Tuple) and isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name)):
        return None
    names = [e.id if isinstance(e, ast.Name) else None for e in target.elts]
    if key not in names:
        return None
    i = names.index(key)
    if iterable.func.id == "zip" and len(iterable.args) == len(names) and not iterable.keywords:
        arg = iterable.args[i]
        return None if isinstance(arg, ast.Starred) else arg
    if iterable.func.id == "enumerate" and len(names) == 2 and i == 1 and iterable.args:
        return iterable.args[0]
    return None


def own_returns(func: Function) -> Optional[List[ast.Return]]:
    """The ``return`` statements of ``func`` itself (a nested scope's returns are its own);
    None for a generator (what calling it returns is no value of its returns)."""
    returns: List[ast.Return] = []
    stack: List[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return None
        if isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return):
            returns.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return returns
