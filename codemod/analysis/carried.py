"""State a function hands back to its caller, which a loop passes to it again (recurrent state).

A step function of a recurrent model (an RNN-form linear attention, a convolution run token by
token, a hand-written cell) takes its state as a parameter, updates it in place, reads it with
an op that saves it for backward, and returns it; the caller's loop passes the returned state to
the next call: ``y, state = step(x[t], state)``. The second call's in-place update then modifies
the tensor the first call saved, and backward raises. Neither function shows it alone: within
one call the write precedes the save, and the caller writes nothing.

This part answers the structural questions (``ast`` only): where the written name enters the
function from a parameter (:func:`entry`), where every ``return`` hands it back
(:func:`returned_path`), whether the write and the save run on every call in that order
(:func:`straight_line`), and whether a call sits in a loop that feeds the returned state back
into the same parameter with no backward in between (:func:`fed_back`). Whether the op saves
the state is the hazard analysis's question.
"""

from __future__ import annotations

import ast
from typing import List, NamedTuple, Optional, Tuple

from codemod.analysis.binder import Flow
from codemod.analysis.facts import Facts
from codemod.analysis.syntax import Function, Located, target_key

Path = Tuple[int, ...]  # positions in nested tuple / list displays: (1, 0) is `b` of `a, [b, c]`

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_BACKWARD = ("backward", "grad")  # `loss.backward()`, `torch.autograd.backward(...)`, `autograd.grad(...)`


class Entry(NamedTuple):
    """The written name is the parameter ``param`` (``path`` ``()``) or the element at ``path`` of it
    (``S, Z = state``)."""

    param: str
    path: Path


def _display_path(node: ast.expr, key: str) -> Optional[Path]:
    """Where the name ``key`` sits in a name or nested tuple / list display (``a, [b, c]``)."""
    if isinstance(node, ast.Name):
        return () if node.id == key else None
    if isinstance(node, (ast.Tuple, ast.List)):
        for i, elt in enumerate(node.elts):
            if isinstance(elt, ast.Starred):
                return None  # positions after a starred element are not fixed
            found = _display_path(elt, key)
            if found is not None:
                return (i, *found)
    return None


def _at(node: ast.expr, path: Path) -> Optional[ast.expr]:
    """The element at ``path`` of a nested tuple / list display (or the node itself for ``()``)."""
    for i in path:
        if not isinstance(node, (ast.Tuple, ast.List)) or i >= len(node.elts) \
                or any(isinstance(e, ast.Starred) for e in node.elts[:i + 1]):
            return None
        node = node.elts[i]
    return node


def entry(model: Facts, flow: Flow, key: str, write: Located) -> Optional[Entry]:
    """Among the bindings of ``key`` that reach the write, the parameter itself, or an unpacking
    ``S, Z = state`` of a parameter ``state`` that nothing else in the function binds: what the
    caller passed reaches the write (other bindings, ``state = zeros(...)`` when none is passed,
    may reach it too)."""
    for binding in model.reaching(flow, key, write):
        if binding.form == "param" and key in flow.params:
            return Entry(key, ())
        stmt = binding.stmt
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.value, ast.Name)):
            continue
        param = stmt.value.id
        path = _display_path(stmt.targets[0], key)
        if path and param in flow.params and all(b.form == "param" for b in flow.bindings.get(param, [])):
            return Entry(param, path)
    return None


def returned_path(model: Facts, func: Function, key: str) -> Optional[Path]:
    """The one position at which every ``return`` of ``func`` hands back the name ``key`` (``return
    y, [S, Z]``: ``(1, 1)`` for ``Z``); None if a return hands back something else there, or none
    does (a nested function's returns are its own)."""
    paths = set()
    for node in model.walk(func):
        if isinstance(node, ast.Return) and model.owner(node) is func:
            path = _display_path(node.value, key) if node.value is not None else None
            if path is None:
                return None
            paths.add(path)
    return paths.pop() if len(paths) == 1 else None


def straight_line(model: Facts, func: Function, first: Located, then: Located) -> bool:
    """The statements of ``first`` and ``then`` are statements of ``func``'s own body (no ``if``,
    loop or ``with`` around them), ``first``'s before ``then``'s (or ``first`` runs first within one
    statement), with no ``return`` of ``func`` before ``then``'s (``then``'s may be the ``return``
    itself, whose value is evaluated first): every call that returns runs both, in that order."""
    a, b = model.statement_of(first), model.statement_of(then)
    if not (model.parent(a) is func and model.parent(b) is func and a in func.body and b in func.body):
        return False
    i, j = func.body.index(a), func.body.index(b)
    if i > j or (i == j and model.range(first)[1] > model.range(then)[0]):
        return False
    return not any(isinstance(n, ast.Return) and model.owner(n) is func
                   for s in func.body[:j] for n in model.walk(s)) \
        and not any(isinstance(n, ast.Return) and model.owner(n) is func and n is not b for n in model.walk(b))


def fed_back(model: Facts, call: ast.Call, arg: ast.expr, path: Path) -> Optional[ast.stmt]:
    """The loop around ``call`` when its statement binds the name passed as ``arg`` to what the
    call returns at ``path`` (``y, state = step(x, state)``, ``path`` ``(1,)``), nothing else
    binds that name in the loop, and nothing in the loop runs a backward (which would free what
    the previous turn saved): the next turn passes the returned state back."""
    if not isinstance(arg, ast.Name):
        return None
    stmt = model.parent(call)
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1):
        return None
    target = _at(stmt.targets[0], path)
    if not (isinstance(target, ast.Name) and target.id == arg.id):
        return None
    loop = model.parent(stmt)
    if not isinstance(loop, _LOOPS) or stmt not in loop.body:
        return None  # the call runs on every turn: a statement of the loop's own body
    owner = model.owner(stmt)
    flow = model.flow(owner)
    start, end = model.range(loop)
    others: List[Located] = [b.stmt for b in flow.bindings.get(arg.id, []) if start <= b.start <= end]
    if any(s is not stmt for s in others):
        return None  # `h = h.detach()`, `state = None` in the loop: not the returned tensor each turn
    for node in model.walk(loop):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else (
                node.func.id if isinstance(node.func, ast.Name) else "")
            if name in _BACKWARD:
                return None
    return loop

def kept_each_turn(model: Facts, call: ast.Call, loop: ast.stmt, state: str) -> bool:
    """The loop keeps, past each turn, something the call hands back besides the state (a name
    its statement binds, other than ``state``): appended or inserted into a list (``outs.append(y)``),
    written into a buffer (``buf[t] = y``) or summed into an accumulator (``total = total + y.sum()``,
    ``total += ...``) that the loop binds nowhere else. Otherwise each turn drops what the
    previous call returned, and with it the op that saved the state (an RNN read out at its last
    step): the next call's write trips nothing."""
    stmt = model.parent(call)
    if not isinstance(stmt, ast.Assign):
        return False
    outputs = {n.id for n in ast.walk(stmt.targets[0]) if isinstance(n, ast.Name) and n.id != state}
    if not outputs:
        return False
    flow = model.flow(model.owner(stmt))
    start, end = model.range(loop)
    assigns = [n for n in model.walk(loop) if isinstance(n, ast.Assign) and n is not stmt]

    def only_here(key: Optional[str], at: ast.AST) -> bool:  # bound in the loop by ``at`` alone
        return key is not None and all(b.stmt is at for b in flow.bindings.get(key, []) if start <= b.start <= end)

    def reads_output(node: ast.AST) -> bool:  # with its history: not `y.item()`, `y.detach()`, `float(y)`
        return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in outputs
                   and not _history_dropped(model, n, node) for n in ast.walk(node))

    grown = True
    while grown:  # and the names the loop binds from them (`z = self.proj(y)`, then `outs.append(z)`)
        grown = False
        for assign in assigns:
            if reads_output(assign.value):
                bound = {n.id for t in assign.targets for n in ast.walk(t) if isinstance(n, ast.Name)} - {state}
                grown, outputs = grown or not bound <= outputs, outputs | bound
    for node in model.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("append", "extend", "insert") and not node.keywords \
                and any(reads_output(a) for a in node.args) and only_here(target_key(node.func.value), node):
            return True
        if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and reads_output(node.value) \
                and only_here(node.target.id, node):
            return True
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and reads_output(node.value):
            target = node.targets[0]
            if isinstance(target, ast.Subscript) and only_here(target_key(target.value), node):
                return True  # `buf[t] = y`
            if isinstance(target, ast.Name) and only_here(target.id, node) and any(
                    isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id == target.id
                    for n in ast.walk(node.value)):
                return True  # `total = total + y.sum()`
    return False



_DROPPING = frozenset({"item", "tolist", "detach", "numpy", "data"})  # what has no autograd history
_NUMBERS = frozenset({"float", "int", "bool", "complex"})


def _history_dropped(model: Facts, load: ast.Name, top: ast.AST) -> bool:
    """Between ``load`` and ``top`` (an expression holding it), a step that keeps none of its
    autograd history: ``.item()``, ``.detach()``, ``.tolist()``, ``.data``, ``float(...)``."""
    node: ast.AST = load
    while node is not top:
        parent = model.parent(node)
        if parent is None:
            return False
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _DROPPING:
            return True
        if isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name) \
                and parent.func.id in _NUMBERS:
            return True
        node = parent
    return False


class Wrapper(NamedTuple):
    """A function that passes its own parameter (or an element of it) to the step and hands back
    what the step handed back: its callers' loops feed the state back as well."""

    func: Function
    entry: Entry  # where the state sits in the wrapper's parameter
    back: Path  # where every return of the wrapper hands it back


def wrapper(model: Facts, call: ast.Call, arg: ast.expr, entry_path: Path, back: Path) -> Optional[Wrapper]:
    """``new, memory = self.inner(q, k, v, memory)`` ... ``return out, memory`` in a function whose
    parameter ``memory`` reaches the call unchanged: the call (a statement of the function's own
    body, no ``return`` before it) passes the parameter (``arg``: the name, or ``name[i]``) to a step
    whose state sits at ``entry_path`` of that parameter and at ``back`` of what it returns; the
    statement binds the part holding it to a name bound nowhere else, which every ``return`` of the
    function hands back."""
    stmt = model.parent(call)
    func = model.owner(call)
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1
            and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and model.parent(stmt) is func):
        return None
    index = func.body.index(stmt)
    if any(isinstance(n, ast.Return) and model.owner(n) is func for s in func.body[:index] for n in model.walk(s)):
        return None
    inner: Path = ()
    if isinstance(arg, ast.Subscript) and isinstance(arg.slice, ast.Constant) and type(arg.slice.value) is int \
            and arg.slice.value >= 0:
        inner, arg = (arg.slice.value,), arg.value
    if not isinstance(arg, ast.Name):
        return None
    flow = model.flow(func)
    if arg.id not in flow.params or any(b.form != "param" and b.stmt is not stmt for b in flow.bindings.get(arg.id, [])):
        return None  # (`y, state = self.inner(x, state)` binds it again with what the call hands back)
    for cut in range(len(back) + 1):
        name = _at(stmt.targets[0], back[:cut])
        if isinstance(name, ast.Name):
            if any(b.stmt is not stmt and b.form != "param" for b in flow.bindings.get(name.id, [])):
                return None  # bound elsewhere too: what is returned may be another value
            handed = returned_path(model, func, name.id)
            if handed is None:
                return None
            return Wrapper(func, Entry(arg.id, inner + entry_path), handed + back[cut:])
    return None
