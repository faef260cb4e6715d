"""Where statements sit in ``if``/``else`` branches and blocks: what one pass can run.

Plain syntax, for the hazard analysis's questions "does this save run before that write?":
two branches of one ``if`` never both run in one pass; an ``if``/``elif``/``else`` whose every
branch assigns a name rebinds it on every pass; ``if x.requires_grad:`` splits a function into
the part where x requires grad and the part where it does not.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple, cast

from codemod.analysis.syntax import FUNCTIONS, OWNERS, is_const, passed_for, spreads, target_key

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_LEAVE = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def binds(block: Sequence[ast.stmt], key: str) -> bool:
    """A statement of ``block`` (at its top level) assigns ``key``."""
    for stmt in block:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                if any(target_key(part) == key for part in parts):
                    return True
    return False


def never_falls_off(block: Sequence[ast.stmt]) -> bool:
    """Every path through ``block`` ends in a ``return`` or a ``raise``: control never runs
    past its last statement (a function whose body this holds never returns ``None`` by
    falling off its end). Followed through ``if``/``else`` (both sides); any other last
    statement (a loop, a ``with`` that may swallow an exception, a ``try``) answers no."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return never_falls_off(last.body) and never_falls_off(last.orelse)
    return False


def always_binds(test: ast.If, key: str) -> bool:
    """Every branch of ``if``/``elif``/``else`` assigns ``key`` at its top level, or holds at its top level
    an ``if`` that does so on every branch (``if a: if b: x = f() / else: x = g()`` / ``else: x = h()``)."""
    if not _arm_binds(test.body, key) or not test.orelse:
        return False
    return _arm_binds(test.orelse, key)


def _arm_binds(block: Sequence[ast.stmt], key: str) -> bool:
    return binds(block, key) or any(isinstance(s, ast.If) and always_binds(s, key) for s in block)


def apart_until(made: ast.AST, other: ast.AST, use: ast.AST,
                ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """``made`` and ``other`` (two statements binding one name, both reaching ``use``) sit in
    different branches of one ``if``, and no path from ``made`` runs ``other`` before ``use``.

    In one pass the two branches exclude each other; a loop around the ``if`` runs it again, so
    each such loop (in the function) must hold ``use`` on its path back: at the top level of its
    body (``with`` blocks aside) after the statement holding the ``if``, with no ``continue`` to
    skip it; and ``made``'s branch must not leave before its end (``return``, ``raise``,
    ``break``: that path never reaches ``use``). Anything else (the two in one branch, a
    ``try`` and its handler, the write after the loop) may run ``other`` between ``made`` and
    ``use``, or never reach it: the answer is no."""
    above = {id(up) for up in ancestors(other)}
    split: Optional[ast.If] = None
    for up in ancestors(made):
        if isinstance(up, OWNERS):
            return False
        if id(up) in above:
            split = up if isinstance(up, ast.If) else None
            break
    if split is None:
        return False
    sides = branch(made, split), branch(other, split)
    if None in sides or sides[0] == sides[1]:
        return False
    if _may_leave(split.body if sides[0] == "body" else split.orelse, made, ancestors):
        return False  # `return` after the view: its path never reaches `use`
    return _reaches_after(split, use, ancestors)


def overrides_until(made: ast.AST, other: ast.AST, use: ast.AST,
                    ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """``made`` sits in a branch of an ``if`` (inside ``if``s only, up to the block holding
    ``other``) that follows ``other`` in that block, ``other`` being a statement or the function
    whose parameter it binds (its body's start), and no path from ``made`` runs ``other`` before
    ``use``: ``s = f(x)`` / ``if c: s = g(s)`` / ``use(s)``, or ``def f(x=None): if x is None:
    x = g()``. Wherever ``made``'s binding reaches ``use``, ``use`` sees ``made``'s value. With
    no loop around the ``if`` (in the function) a path is never run twice; else (as
    :func:`apart_until`) ``made``'s branch must not leave before its end, nor anything between
    the ``if`` and ``use``, and each loop around must hold ``use`` on its path back. A loop,
    ``try`` or ``with`` between ``made`` and that block answers no."""
    if isinstance(other, OWNERS):
        parent_of_other: Optional[ast.AST] = other
        block: Optional[List[ast.stmt]] = getattr(other, "body", None)
        if not isinstance(block, list):
            return False
        here = -1
    else:
        parent_of_other, block = _block_of(other, ancestors)
        if block is None:
            return False
        here = next(i for i, s in enumerate(block) if s is other)
    inner: Optional[ast.If] = None
    holder: ast.AST = made
    for up in ancestors(made):
        if up is parent_of_other:
            break
        if not isinstance(up, ast.If) or branch(made, up) is None:
            return False  # a loop, `try`, `with` or function between: not followed
        inner = inner or up
        holder = up
    else:
        return False
    if inner is None or not any(s is holder for s in block):
        return False
    if next(i for i, s in enumerate(block) if s is holder) <= here:
        return False
    if _may_leave(_branch_block(made, cast(ast.If, holder)), made, ancestors):
        return False  # `return` after the view: its path never reaches `use`
    if not _in_loop(holder, ancestors):
        return True  # one pass: `other` ran before the `if`, never after `made`
    return _reaches_after(inner, use, ancestors)


def exclusive_until(made: ast.AST, other: ast.AST, use: ast.AST,
                    ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """No path from ``made`` runs ``other`` before ``use`` (two bindings of one name reaching
    ``use``): :func:`apart_until`, :func:`overrides_until`, or the two on different branches of
    one ``if`` with no loop around it in the function (one pass runs one branch)."""
    if apart_until(made, other, use, ancestors) or overrides_until(made, other, use, ancestors):
        return True
    split = _split_between(made, other, ancestors)
    return split is not None and not _may_leave(_branch_block(made, split), made, ancestors) \
        and _follows_unguarded(split, use, ancestors)


def other_arm(made: ast.AST, use: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """``made`` and ``use`` sit on different branches of the innermost ``if`` holding both
    (``elif``/``else`` arms included), and no loop of the function runs that ``if`` again: one
    pass runs one branch, so nothing ``made`` does is seen at ``use`` (fairseq's sampling step:
    ``probs = lprobs.exp_()`` on the ``elif`` arm and again on the ``else`` arm)."""
    return _split_between(made, use, ancestors) is not None


def _split_between(one: ast.AST, other: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> Optional[ast.If]:
    """The innermost statement holding both, when it is an ``if`` with the two on different
    branches and no loop of the function around it (one pass runs one branch); else None."""
    above = {id(up) for up in ancestors(other)}
    for up in ancestors(one):
        if isinstance(up, OWNERS):
            return None
        if id(up) in above:
            if not isinstance(up, ast.If):
                return None
            sides = branch(one, up), branch(other, up)
            return up if None not in sides and sides[0] != sides[1] and not _in_loop(up, ancestors) else None
    return None


def _follows_unguarded(split: ast.If, use: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """``use`` follows ``split`` in its block, nothing between may leave, and the ``if``s around
    ``use`` test none of the names ``split`` tests (``if first: q = view`` / ``if not first: q *= 2``
    never runs the write on the view's path; ``if extra is not None:`` around it is the write's
    own condition, whichever branch ran)."""
    tested = _tested(split.test)
    _, block = _block_of(split, ancestors)
    if block is None:
        return False
    top: ast.AST = use
    for up in ancestors(use):
        if any(s is top for s in block):
            break
        if isinstance(up, OWNERS) or isinstance(up, (*_LOOPS, ast.Try)):
            return False
        if isinstance(up, ast.If) and isinstance(top, ast.stmt) and _tested(up.test) & tested:
            return False  # a guard tied to the split's test
        top = up
    here = next((i for i, s in enumerate(block) if s is split), None)
    at = next((i for i, s in enumerate(block) if s is top), None)
    return here is not None and at is not None and here < at and not _jumps(block[here + 1:at], _LEAVE)


def _tested(test: ast.expr) -> Set[str]:
    """The names and attribute names a condition reads (``first`` of ``not first``, ``use_tok``
    and ``self`` of ``self.use_tok``)."""
    return {n.id if isinstance(n, ast.Name) else n.attr for n in ast.walk(test) if isinstance(n, (ast.Name, ast.Attribute))}


def _block_of(node: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]
              ) -> Tuple[Optional[ast.AST], Optional[List[ast.stmt]]]:
    """The node holding ``node`` (a statement) and the statement list of it that ``node`` is in."""
    parent = next(iter(ancestors(node)), None)
    block = next((b for b in _blocks(parent) if any(s is node for s in b)), None) if parent is not None else None
    return parent, block


def _branch_block(node: ast.AST, test: ast.If) -> List[ast.stmt]:
    """The branch of ``test`` holding ``node``."""
    return test.body if branch(node, test) == "body" else test.orelse


def _in_loop(node: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """A loop of the function holding ``node`` runs it (``node`` inside its body or ``else``)."""
    for up in ancestors(node):
        if isinstance(up, OWNERS):
            return False
        if isinstance(up, _LOOPS):
            return True
    return False


def _reaches_after(split: ast.AST, use: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """Every path out of ``split`` (an ``if``) reaches ``use`` before any loop around runs
    ``split`` again, and nothing between leaves."""
    below: ast.AST = split
    for up in ancestors(split):
        if isinstance(up, _LOOPS) and not _runs_after_on_each_turn(up, below, use, ancestors):
            return False
        block = next((b for b in _blocks(up) if any(s is below for s in b)), None)
        if block is not None:
            here = next(i for i, s in enumerate(block) if s is below)
            top = _top_statement(block, use, ancestors)
            if top is not None:  # `use` follows in this block: nothing between may leave
                return here < top and not _jumps(block[here + 1:top], _LEAVE)
            if _jumps(block[here + 1:], _LEAVE):
                return False  # a later statement of this block may leave before `use`
            if isinstance(up, ast.Try) and _jumps(up.orelse + up.finalbody, _LEAVE):
                return False
        if isinstance(up, OWNERS):
            return False  # `use` is not after the `if` on every path
        below = up
    return False


def _blocks(node: ast.AST) -> List[List[ast.stmt]]:
    """The statement lists ``node`` holds (body, orelse, finalbody, a handler's or case's body)."""
    return [v for _, v in ast.iter_fields(node) if isinstance(v, list) and v and isinstance(v[0], ast.stmt)]


def _top_statement(block: Sequence[ast.stmt], use: ast.AST,
                   ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> Optional[int]:
    """The index in ``block`` of the statement holding ``use`` with only ``with`` blocks between."""
    top: ast.AST = use
    for up in ancestors(use):
        if any(s is top for s in block):
            break
        if isinstance(top, ast.stmt) and not isinstance(up, (ast.With, ast.AsyncWith)):
            return None
        top = up
    return next((i for i, s in enumerate(block) if s is top), None)


def _runs_after_on_each_turn(loop: ast.stmt, holder: ast.AST, use: ast.AST,
                             ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """``use`` runs on every turn of ``loop`` that ran ``holder`` (a statement of its body),
    after it: it sits at the body's top level (inside ``with`` blocks only) below ``holder``,
    and no ``continue`` of this loop skips it."""
    body: List[ast.stmt] = getattr(loop, "body")
    top: ast.AST = use
    for up in ancestors(use):
        if up is loop:
            break
        if isinstance(top, ast.stmt) and not isinstance(up, (ast.With, ast.AsyncWith)):
            return False  # past the statement holding `use`, only `with` blocks keep every path
        top = up
    else:
        return False
    at = next((i for i, s in enumerate(body) if s is top), None)
    here = next((i for i, s in enumerate(body) if s is holder), None)
    return at is not None and here is not None and here < at and not _jumps(body, (ast.Continue,))


def _may_leave(block: Sequence[ast.stmt], made: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """A statement of ``block`` that runs after ``made`` (which ``block`` holds) may leave the
    block other than at its end: ``return``, ``raise``, a ``break`` or ``continue`` of a loop
    around it. An ``if`` holding ``made`` is followed into ``made``'s branch only (its other
    branch does not run on that path); any other statement holding it is searched whole."""
    path = {id(up) for up in ancestors(made)}
    after = False
    for stmt in block:
        if stmt is made:
            after = True
        elif id(stmt) in path:
            after = True
            if isinstance(stmt, ast.If) and branch(made, stmt) is not None:
                if _may_leave(stmt.body if branch(made, stmt) == "body" else stmt.orelse, made, ancestors):
                    return True
            elif _jumps([stmt], _LEAVE):
                return True
        elif after and _jumps([stmt], _LEAVE):
            return True
    return False


def _jumps(nodes: Sequence[ast.AST], kinds: Tuple[type, ...]) -> bool:
    """A statement of one of ``kinds`` among ``nodes`` (not in a function or class they define;
    a ``break`` or ``continue`` only where it jumps out of them, not in a loop of their own)."""
    todo: List[Tuple[ast.AST, bool]] = [(node, False) for node in nodes]  # (node, in a loop of theirs)
    while todo:
        node, looped = todo.pop()
        if isinstance(node, kinds) and not (looped and isinstance(node, (ast.Break, ast.Continue))):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, _LOOPS):
            todo.extend((child, True) for child in node.body)
            todo.extend((child, looped) for child in node.orelse)  # a loop's `else:` is not its turn
            continue
        todo.extend((child, looped) for child in ast.iter_child_nodes(node))
    return False


def requires_grad_test(test: ast.expr, name: str) -> Optional[bool]:
    """``name.requires_grad`` -> True, ``not name.requires_grad`` -> False, else None."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if isinstance(inner, ast.Attribute) and inner.attr == "requires_grad" and isinstance(inner.value, ast.Name) \
            and inner.value.id == name:
        return not negated
    return None


def copied_where_it_requires_grad(write: ast.AST, name: str,
                                  ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """Wherever the caller's ``name`` (a parameter) reaches ``write`` unchanged, it requires no
    grad (or grad is off): ``if name.requires_grad: name = name.clone()`` (the test may also ask
    ``torch.is_grad_enabled()``, nothing else) runs before ``write`` on every path (a statement
    before it in a block holding it), or ``write`` sits in that test's ``else``. The copy is the
    only binding of ``name`` in the guarded branch, and the function never switches
    ``name.requires_grad``. A leaf that requires grad, or an output autograd saved, never meets
    the write there; an input some op saved still may (its own requires_grad is no matter)."""
    below: ast.AST = write
    for up in ancestors(write):
        if isinstance(up, ast.If) and _grad_guard(up.test, name) and branch(below, up) == "orelse":
            return not _switches_requires_grad(up, name, ancestors)
        for block in statement_lists(up):
            at = next((i for i, s in enumerate(block) if s is below), None)
            if at is not None and any(isinstance(s, ast.If) and _grad_guard(s.test, name) and _copies(s.body, name)
                                      for s in block[:at]):
                return not _switches_requires_grad(up, name, ancestors)
        if isinstance(up, OWNERS):
            return False
        below = up
    return False


def _grad_guard(test: ast.expr, name: str) -> bool:
    """``name.requires_grad``, alone or and-ed with ``torch.is_grad_enabled()``: where the test
    fails, ``name`` requires no grad, or grad is off."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    asks = [requires_grad_test(p, name) for p in parts]
    grad_mode = [isinstance(p, ast.Call) and not p.args and not p.keywords and isinstance(p.func, ast.Attribute)
                 and p.func.attr == "is_grad_enabled" and isinstance(p.func.value, ast.Name) and p.func.value.id == "torch"
                 for p in parts]
    return True in asks and all(a is True or g for a, g in zip(asks, grad_mode))


def _copies(body: Sequence[ast.stmt], name: str) -> bool:
    """``body`` binds ``name`` once, at its top level, to a ``.clone(...)``: a tensor of its own."""
    stores = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Name) and n.id == name
              and isinstance(n.ctx, (ast.Store, ast.Del))]
    copies = [s for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
              and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name and isinstance(s.value, ast.Call)
              and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "clone"]
    return len(stores) == 1 and len(copies) == 1 and not any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.Global, ast.Nonlocal))
        for s in body for n in ast.walk(s))


def _switches_requires_grad(near: ast.AST, name: str, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """The function around ``near`` calls ``name.requires_grad_(...)`` or sets
    ``name.requires_grad``: the guard's answer may not hold at the write."""
    owner = near if isinstance(near, OWNERS) else next((up for up in ancestors(near) if isinstance(up, OWNERS)), near)
    return any(isinstance(n, ast.Attribute) and n.attr in ("requires_grad_", "requires_grad")
               and isinstance(n.value, ast.Name) and n.value.id == name
               and (n.attr == "requires_grad_" or isinstance(n.ctx, ast.Store)) for n in ast.walk(owner))


def statement_lists(node: ast.AST) -> List[List[ast.stmt]]:
    """The statement lists a node holds (body, orelse, finalbody, handlers' bodies)."""
    found = [getattr(node, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]
    return [b for b in found if b and isinstance(b[0], ast.stmt)]


def block_holding(parent: Optional[ast.AST], stmt: ast.stmt) -> Optional[List[ast.stmt]]:
    """The statement list of ``parent`` (body, orelse, finalbody) that holds ``stmt`` itself."""
    return next((b for b in statement_lists(parent) if any(s is stmt for s in b)), None) if parent is not None else None


def branch(node: ast.AST, test: ast.If) -> Optional[str]:
    """Which branch of ``test`` holds ``node``: "body", "orelse", or None."""
    for name, block in (("body", test.body), ("orelse", test.orelse)):
        if block and any(within(node, stmt) for stmt in block):
            return name
    return None


def within(node: ast.AST, outer: ast.AST) -> bool:
    """Whether ``node`` lies in ``outer``'s source span."""
    inner = (node.lineno, node.col_offset), (node.end_lineno or 0, node.end_col_offset or 0)  # type: ignore[attr-defined]
    span = (outer.lineno, outer.col_offset), (outer.end_lineno or 0, outer.end_col_offset or 0)  # type: ignore[attr-defined]
    return span[0] <= inner[0] and inner[1] <= span[1]


def flag_excluded(one: ast.AST, other: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """``one`` and ``other`` sit under ``if``s of their function that need opposite values of
    one steady flag (:func:`steady_flag`): ``if self.training and not denormalize:`` around one,
    ``if denormalize:`` around the other. Two ``if``s, not arms of one, but no pass runs both."""
    func = next((up for up in ancestors(one) if isinstance(up, OWNERS)), None)
    if func is None or func is not next((up for up in ancestors(other) if isinstance(up, OWNERS)), None):
        return False
    there = _flag_values(other, ancestors)
    return any(name in there and there[name] != value and steady_flag(func, name)
               for name, value in _flag_values(one, ancestors).items())


def _flag_values(node: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> Dict[str, bool]:
    """The truth value each plain name must have for ``node`` to run, by the ``if``s of its
    function around it (``if a and not b:``'s body: a true, b false; its ``else``: nothing)."""
    found: Dict[str, bool] = {}
    for up in ancestors(node):
        if isinstance(up, OWNERS):
            break
        side = branch(node, up) if isinstance(up, ast.If) else None
        for name, value in (_implied(cast(ast.If, up).test, side == "body").items() if side else ()):
            found.setdefault(name, value)
    return found


def _implied(test: ast.expr, holds: bool) -> Dict[str, bool]:
    """The names' truth values that ``test`` being ``holds`` implies: ``not x``, ``x``, every
    operand of an ``and`` that holds or of an ``or`` that fails; nothing for anything else."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _implied(test.operand, not holds)
    if isinstance(test, ast.Name):
        return {test.id: holds}
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == holds):
        return {}
    merged: Dict[str, bool] = {}
    for part in test.values:
        for name, value in _implied(part, holds).items():
            if merged.setdefault(name, value) != value:
                return {}  # `a and not a`: never runs; claim nothing
    return merged


def steady_flag(func: ast.AST, name: str) -> bool:
    """``name`` is a parameter of ``func`` declared a Python bool (annotated ``bool`` or with a
    ``True``/``False`` default) that nothing in ``func`` binds again (no assignment, ``del``,
    loop or ``with`` target, ``global``/``nonlocal``, nested definition of that name): it holds
    one value for the whole call. Not an attribute (``self.flag``), which a call may change."""
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments):
        return False
    positional = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    param = next((a for a in (*positional, *args.kwonlyargs) if a.arg == name), None)
    if param is None:
        return False
    annotation = param.annotation
    default = defaults.get(name)
    if not (isinstance(annotation, ast.Name) and annotation.id == "bool"
            or isinstance(default, ast.Constant) and isinstance(default.value, bool)):
        return False
    return not _binds_name(getattr(func, "body", []), name)



def off_flag(func: ast.AST, name: str) -> bool:
    """``name`` is a steady flag of ``func`` (:func:`steady_flag`) whose default is ``False`` (or ``None``):
    a call that passes nothing for it runs the whole call with it false."""
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments) or not steady_flag(func, name):
        return False
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    default = defaults.get(name)
    return is_const(default, False) or is_const(default, None)


def needed_flags(node: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> Set[str]:
    """The flags of ``node``'s function (:func:`off_flag`) that its ``if``s need true for ``node`` to run
    (``if inplace:``, ``if inplace and normalize:``): a call leaving one of them off never runs ``node``."""
    func = next((up for up in ancestors(node) if isinstance(up, OWNERS)), None)
    if not isinstance(func, FUNCTIONS):
        return set()
    return {name for name, value in _flag_values(node, ancestors).items() if value and off_flag(func, name)}


def flag_position(func: ast.AST, name: str, bound: bool) -> Optional[int]:
    """Where a call's positional arguments meet ``func``'s parameter ``name`` (``bound``: a method called
    through its instance or class, its ``self``/``cls`` not among them); None where keyword-only."""
    args = getattr(func, "args", None)
    plain = [a.arg for a in (*args.posonlyargs, *args.args)] if isinstance(args, ast.arguments) else []
    if bound and plain[:1] and plain[0] in ("self", "cls"):
        plain = plain[1:]
    return plain.index(name) if name in plain else None


def flags_left_off(call: ast.Call, func: ast.AST, names: Iterable[str], bound: bool,
                   caller_off: Iterable[str] = ()) -> Set[str]:
    """Which of ``names`` (flags of ``func``, :func:`off_flag`) ``call`` (spreading nothing) leaves false:
    it passes nothing for one, a literal ``False``/``None``, or a name of ``caller_off`` (the calling
    function's own flags, themselves left false at its call)."""
    if spreads(call):
        return set()
    outer = set(caller_off)
    found: Set[str] = set()
    for name in names:
        passed = passed_for(call, name, flag_position(func, name, bound))
        if passed is None or is_const(passed, False) or is_const(passed, None) \
                or isinstance(passed, ast.Name) and passed.id in outer:
            found.add(name)
    return found


def live_nodes(func: ast.AST, off: Iterable[str]) -> Iterator[ast.AST]:
    """``ast.walk(func)`` without the ``if`` arms that need a flag of ``off`` true (steady flags the call
    leaves false, :func:`flags_left_off`): what a call with those flags false may run."""
    dead = set(off)
    todo = [func]
    while todo:
        node = todo.pop()
        yield node
        if isinstance(node, ast.If) and dead:
            todo.append(node.test)
            if not any(_implied(node.test, True).get(name) for name in dead):
                todo.extend(node.body)
            if not any(_implied(node.test, False).get(name) for name in dead):
                todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))


def dead_on_none(made: ast.AST, write: ast.AST, key: str, ancestors: Callable[[ast.AST], Iterable[ast.AST]],
                 fresh: Callable[[ast.expr], bool]) -> bool:
    """``made`` (a statement binding ``key``) reaches ``write`` only on a pass that dies first:
    ``alphas = relu(h)`` / ``if mask is not None: alphas = alphas * mask`` / ``mask.squeeze(-1)``
    / ``alphas *= ...`` (funasr's CIF predictors). In one block with no loop of the function
    around it: ``made`` (or the statement holding it), then an ``if N is not None:`` (or ``if N
    is None: ... else:``) whose not-None branch rebinds ``key`` at its top level, last to a new
    tensor (``fresh``), then a statement that reads ``N.attr``, ``N[...]`` or calls ``N`` where it
    surely runs (not behind ``and``/``or``, a conditional expression, a lambda), then the statement
    holding ``write``. ``N`` is a local of the function (no ``global``/``nonlocal``) that nothing
    binds on the None branch nor between the ``if`` and that read. Where the None branch ran, the
    read raises (None has no such attribute) before ``write``; where the other ran, ``key`` holds
    the new tensor."""
    func = next((f for f in ancestors(write) if isinstance(f, OWNERS)), None)
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    top: ast.AST = write
    for up in ancestors(write):
        block = next((b for b in _blocks(up) if any(s is top for s in b)), None)
        if block is not None and not _in_loop(top, ancestors):
            at = next(i for i, s in enumerate(block) if s is top)
            held = _holder_in(block, made, ancestors)
            for j in range(held + 1 if held is not None else at, at):
                name = _none_split(block[j], block[j + 1:at], key, fresh)
                if name is not None and _plain_local(func, name):
                    return True
        if isinstance(up, OWNERS):
            return False
        top = up
    return False


def _holder_in(block: Sequence[ast.stmt], node: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> Optional[int]:
    """The index of the statement of ``block`` that is ``node`` or holds it."""
    for candidate in (node, *ancestors(node)):
        at = next((i for i, s in enumerate(block) if s is candidate), None)
        if at is not None:
            return at
        if isinstance(candidate, OWNERS):
            return None
    return None


def _none_split(split: ast.stmt, rest: Sequence[ast.stmt], key: str, fresh: Callable[[ast.expr], bool]) -> Optional[str]:
    """The name ``N`` of ``if N is not None:`` (``if N is None: ... else:``) when its not-None
    branch rebinds ``key`` last to a new tensor, its None branch binds no ``N``, and a statement of
    ``rest`` reads ``N.attr``/``N[...]``/``N(...)`` for sure before anything binds ``N`` again."""
    if not isinstance(split, ast.If):
        return None
    test = split.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot))
            and isinstance(test.left, ast.Name) and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return None
    name = test.left.id
    none_arm, other = (split.orelse, split.body) if isinstance(test.ops[0], ast.IsNot) else (split.body, split.orelse)
    if _binds_name(none_arm, name):
        return None
    last = next((i for i in range(len(other) - 1, -1, -1) if isinstance(other[i], ast.Assign)
                 and [target_key(t) for t in cast(ast.Assign, other[i]).targets] == [key]
                 and isinstance(cast(ast.Assign, other[i]).targets[0], ast.Name)), None)
    if last is None or _binds_name(other[last + 1:], key) or not fresh(cast(ast.Assign, other[last]).value):
        return None
    for stmt in rest:
        if _dereferences(stmt, name):
            return name
        if _binds_name([stmt], name):
            return None
    return None


def _binds_name(nodes: Sequence[ast.AST], name: str, stores: bool = True) -> bool:
    """Something among ``nodes`` may bind ``name``: an assignment or ``del`` of it (not counted
    with ``stores`` false), a ``global``/``nonlocal``, a definition, an import, an ``except ...
    as``, a ``match`` anywhere (a ``case`` pattern may bind it)."""
    match = getattr(ast, "Match", None)
    for node in (n for top in nodes for n in ast.walk(top)):
        if stores and isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load) \
                or isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names \
                or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name \
                or isinstance(node, ast.ExceptHandler) and node.name == name \
                or isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name \
                or match is not None and isinstance(node, match):
            return True
    return False


def _plain_local(func: ast.AST, name: str) -> bool:
    """``name`` is a parameter of ``func`` or bound in it, and declared ``global`` or ``nonlocal``
    nowhere in it: no call can rebind it behind the function's back."""
    args = getattr(func, "args", None)
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)} if isinstance(args, ast.arguments) else set()
    nodes = list(ast.walk(func))
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in nodes):
        return False
    return name in params or any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in nodes)


def _dereferences(stmt: ast.stmt, name: str) -> bool:
    """``stmt`` reads ``name.attr`` (not a dunder, which None has), ``name[...]`` or calls
    ``name`` in a part it surely evaluates, and binds ``name`` by no ``:=``."""
    if any(isinstance(n, ast.NamedExpr) and n.target.id == name for n in ast.walk(stmt)):
        return False
    parts: List[Optional[ast.expr]] = []
    if isinstance(stmt, (ast.Expr, ast.Return, ast.Assign, ast.AnnAssign)):
        parts = [stmt.value]
    elif isinstance(stmt, ast.AugAssign):
        parts = [stmt.target, stmt.value]
    elif isinstance(stmt, (ast.If, ast.While)):
        parts = [stmt.test]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        parts = [stmt.iter]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        parts = [stmt.items[0].context_expr]  # a later item's error may be swallowed by the first's exit
    for part in parts:
        for node in (_evaluated(part) if part is not None else ()):
            base = node.func if isinstance(node, ast.Call) else node.value if isinstance(
                node, (ast.Attribute, ast.Subscript)) else None
            if isinstance(base, ast.Name) and base.id == name and not (
                    isinstance(node, ast.Attribute) and node.attr.startswith("__")) \
                    and isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
                return True
    return False


def _evaluated(expr: ast.expr) -> Iterator[ast.AST]:
    """The parts of ``expr`` evaluated whenever ``expr`` is: not the later operands of
    ``and``/``or`` or of a chained comparison, the branches of a conditional expression, a
    lambda's body, a comprehension's element and conditions (only its first iterable)."""
    if isinstance(expr, ast.BoolOp):
        yield from _evaluated(expr.values[0])
        return
    if isinstance(expr, ast.IfExp):
        yield from _evaluated(expr.test)
        return
    if isinstance(expr, ast.Lambda):
        return
    if isinstance(expr, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        yield from _evaluated(expr.generators[0].iter)
        return
    yield expr
    if isinstance(expr, ast.Compare):
        yield from _evaluated(expr.left)
        yield from _evaluated(expr.comparators[0])
        return
    for child in ast.iter_child_nodes(expr):
        if isinstance(child, ast.keyword):
            yield from _evaluated(child.value)
        elif isinstance(child, ast.expr):
            yield from _evaluated(child)


def dead_arm(node: ast.AST, ancestors: Callable[[ast.AST], Iterable[ast.AST]]) -> bool:
    """``node`` sits in a branch of an ``if`` that never runs: the body of one whose test is
    surely false, or the ``else`` of one whose test is surely true (:func:`surely`): a literal
    (``if False:``), or a local of the function every binding of which is a literal
    (``merge = False`` / ``if merge and 1 < n < 3e3:``, yolov5's non_max_suppression). Up to the
    function holding ``node``."""
    func = next((up for up in ancestors(node) if isinstance(up, OWNERS)), None)
    below: ast.AST = node
    for up in ancestors(node):
        if isinstance(up, OWNERS):
            return False
        if isinstance(up, ast.If):
            side = branch(below, up)
            if side is not None and surely(up.test, func) is (side == "orelse"):
                return True
        below = up
    return False


def surely(test: ast.expr, func: Optional[ast.AST]) -> Optional[bool]:
    """The truth value ``test`` surely has (where its evaluation does not raise), or None: a
    literal; a name every binding of which in ``func`` (a function: the name is its local; no
    parameter, ``global``/``nonlocal``, augmented or other binding) assigns a literal (read before
    it, it raises); ``not``, and ``and``/``or`` of such."""
    if isinstance(test, ast.Constant) and (test.value is None or isinstance(test.value, (bool, int, float, str))):
        return bool(test.value)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = surely(test.operand, func)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [surely(v, func) for v in test.values]
        stop = isinstance(test.op, ast.Or)  # the value that decides: any true operand of `or`, false of `and`
        if stop in values:
            return stop
        return (not stop) if all(v is (not stop) for v in values) else None
    if isinstance(test, ast.Name) and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        literal = _local_literal(func, test.id)
        return None if literal is None else bool(literal.value)
    return None


def _local_literal(func: ast.AST, name: str) -> Optional[ast.Constant]:
    """The literal every binding of ``name`` in ``func`` assigns (``merge = False``, once or more
    alike), where ``name`` is no parameter and nothing else binds it (no tuple, augmented, loop or
    ``with`` target, ``:=``, ``del``), nor declares it ``global``/``nonlocal`` (in ``func`` or a
    function inside it); else None."""
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments) or name in {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs,
                                                                     *filter(None, (args.vararg, args.kwarg)))}:
        return None
    found: Optional[ast.Constant] = None
    stores = assigned = 0
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            stores += 1
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id == name:
            value = node.value
            if not isinstance(value, ast.Constant) or value.value is not None \
                    and not isinstance(value.value, (bool, int, float, str)):
                return None
            if found is not None and (type(found.value) is not type(value.value) or found.value != value.value):
                return None
            found, assigned = value, assigned + 1
    if found is None or stores != assigned or _binds_name(getattr(func, "body", []), name, stores=False):
        return None
    return found

