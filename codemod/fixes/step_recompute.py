"""The step-order rewrite in the **recompute** meaning: the forward run again after the step.

``opt_D.step()`` between the forward that built ``loss_G`` through D and ``loss_G.backward()``
(``codemod.fixes.step_order`` says why no local rewrite fixes it). The "as computed" rewrites
keep the gradients of the values the forward used. This one differentiates through the updated
parameters instead, the usual GAN recipe (D's loss, step D, then G's loss on a fresh
``D(fake)``): the statements that define the later loss, from the stepped module's call (the
line where the run saw the parameter saved) onward, are copied right before its ``backward()``,
so that backward runs through a fresh forward. Nothing is detached, no ``retain_graph`` is added
and no gradient is zeroed; the statements before the stepped module's call (``fake = G(z)``)
are not repeated, so the loss still reaches every module it reached.

The stepped module's call is the statement that holds the line where the run saw the
parameter saved, or the first that reads a module the optimizer was built over (read off its
assignment: ``opt_D = Adam(D.parameters())``; ``self.dis_optimizer = ...`` in a class for
``model.dis_optimizer``), or calls a module that holds it (``net(x)`` for ``net.encoder``).

It applies where the step is a statement of a block and a ``backward()`` comes after it in
that block (or in an ``if``/``with``/``try`` inside it; each such backward is a candidate, the
first one first: the run does not say which one failed), the loss is a name (or an attribute
chain) built in that block by assignments, ``for`` loops and ``if``s (``name += value`` too, its
chain rebuilt from a plain assignment that makes a new value: an alias was changed in place by
the ``+=``; a write by key into a container the copies make again, ``terms["adv"] = adv``, runs
again too, so the fresh container holds what the old one held), and no name a copy reads is
bound again between the original statement and the copy. Where the loss is finished after the
step from values taken before it (``g_loss = criterion(fake_out, ...)`` after
``optimizerD.step()``), those statements stay where they are and the copies go right before the
first of them that reads what the copies make. A ``while``, ``try`` or ``with`` statement, or a
loop or ``if`` holding a step, a backward, a ``return`` or a definition, is not run again: where
one builds part of the loss, it says why. Unsafe by nature (it picks a meaning); verified
against the recompute reference (``codemod.runtime.recompute``). libcst only; no torch here.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, cast

from codemod.findings import Fix
from codemod.fixes import _cst as cst
from codemod.fixes.edits import code
from codemod.fixes.from_run import Positions
from codemod.fixes.step_order import (Plan, _body, _call_of, _dotted_ok, _is_backward, _is_step, _later_backwards,
                                      _step_text)

COMMENT = "# inplacefix (recompute): the forward through the stepped module, run again after the step"


def _targets(stmt: "cst.BaseStatement") -> Optional[Set[str]]:
    """What a plain assignment line binds (``a = ...``, ``a, b = ...``, ``self.x: T = ...``);
    None for any other statement."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    found: Set[str] = set()

    def add(target: "cst.BaseExpression") -> bool:
        if isinstance(target, (cst.Tuple, cst.List)):
            return all(add(e.value) for e in target.elements)
        if isinstance(target, (cst.Name, cst.Attribute)) and _dotted_ok(target):
            found.add(code(target))
            return True
        return False  # a subscript or a starred target: a write into an object, not a binding

    if isinstance(small, cst.Assign) and all(add(t.target) for t in small.targets):
        return found
    if isinstance(small, cst.AnnAssign) and small.value is not None and add(small.target):
        return found
    return None


def _augmented(stmt: "cst.BaseStatement") -> Optional[str]:
    """The name (or attribute chain) of ``name op= value``."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.AugAssign) and isinstance(small.target, (cst.Name, cst.Attribute)) \
            and _dotted_ok(small.target):
        return code(small.target)
    return None


def _value(stmt: "cst.BaseStatement") -> Optional["cst.BaseExpression"]:
    small = cast("cst.SimpleStatementLine", stmt).body[0]
    return cast("Optional[cst.BaseExpression]", getattr(small, "value", None))


def _any_binding(stmt: "cst.BaseStatement") -> Set[str]:
    """Every name or attribute chain a statement may bind (compound statements included)."""
    names: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def _add(self, target: "cst.BaseExpression") -> None:
            if isinstance(target, (cst.Tuple, cst.List)):
                for e in target.elements:
                    self._add(e.value)
            elif isinstance(target, cst.StarredElement):
                self._add(target.value)
            else:
                names.add(code(target))

        def visit_AssignTarget(self, node: "cst.AssignTarget") -> None:
            self._add(node.target)

        def visit_AugAssign(self, node: "cst.AugAssign") -> None:
            self._add(node.target)

        def visit_AnnAssign(self, node: "cst.AnnAssign") -> None:
            self._add(node.target)

        def visit_For(self, node: "cst.For") -> None:
            self._add(node.target)

        def visit_NamedExpr(self, node: "cst.NamedExpr") -> None:
            self._add(node.target)

        def visit_WithItem(self, node: "cst.WithItem") -> None:
            if node.asname is not None:
                self._add(node.asname.name)

    stmt.visit(Collect())
    return names


def _reads(stmt: "cst.BaseStatement") -> Set[str]:
    """The names and attribute chains a plain or augmented assignment reads (its right-hand
    side; an augmented one reads its target too). An attribute's name (``entropy`` of
    ``dist.entropy()``) and a keyword (``dim=``) are no reads."""
    found: Set[str] = set()
    value = _value(stmt)
    if value is not None:
        _walk_reads(value, set(), found)
    target = _augmented(stmt)
    if target is not None:
        found.add(target)
    return found


def _stepped_modules(where: Positions, optimizer: str) -> Set[str]:
    """What the optimizer ``optimizer`` (its text: ``opt_D``, ``self.critic_optim``) was built
    over, read off its assignments in the file: ``M`` of each ``M.parameters()`` in them. An
    optimizer an object holds (``model.dis_optimizer``) is found where its class assigns it
    (``self.dis_optimizer = Adam(self.discriminator.parameters())``: ``model.discriminator``)."""
    found: Set[str] = set()
    owner, _, attr = optimizer.rpartition(".")

    class Calls(cst.CSTVisitor):
        def __init__(self, prefix: str) -> None:
            super().__init__()
            self.prefix = prefix

        def visit_Call(self, node: "cst.Call") -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("parameters", "named_parameters") \
                    and _dotted_ok(node.func.value):
                module = code(node.func.value)
                if self.prefix and module.startswith("self."):
                    module = self.prefix + module[len("self."):]
                found.add(module)

    for node in where.ranges:
        if not isinstance(node, cst.Assign):
            continue
        for t in node.targets:
            target = code(t.target)
            if target == optimizer:
                node.value.visit(Calls(""))
            elif owner and owner != "self" and target == f"self.{attr}":
                node.value.visit(Calls(owner + "."))
    return found


def _calls_into(stmt: "cst.BaseStatement", modules: Set[str]) -> bool:
    """Whether a statement may run a stepped module: it reads the module, or calls a module that
    holds it or a method of one (``net(x)``, ``net.embed(x)`` for ``net.encoder``;
    ``model.generator(x)`` does not run ``model.discriminator``)."""
    called: Set[str] = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: "cst.Call") -> None:
            if _dotted_ok(node.func):
                called.add(code(node.func))

    if isinstance(stmt, cst.SimpleStatementLine):
        value = _value(stmt)
        if value is not None:
            value.visit(Calls())
    else:
        stmt.visit(Calls())
    # ``net(x)`` and ``net.features(x)`` (a method of a module that holds it) may run ``net.encoder``.
    owners = called | {c.rpartition(".")[0] for c in called if "." in c}
    return any(r in modules for r in _reads_all(stmt)) or any(
        c != "self" and m.startswith(c + ".") for c in owners for m in modules)


def _grows(stmt: "cst.BaseStatement") -> Set[str]:
    """The names (and attribute chains) a statement adds to in place, ``name op= value``,
    anywhere in it."""
    found: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_AugAssign(self, node: "cst.AugAssign") -> None:
            if isinstance(node.target, (cst.Name, cst.Attribute)) and _dotted_ok(node.target):
                found.add(code(node.target))

        def visit_FunctionDef(self, node: "cst.FunctionDef") -> bool:
            return False

    stmt.visit(Collect())
    return found


def _written_into(stmt: "cst.BaseStatement") -> Set[str]:
    """The objects a statement writes into by key (``terms[k] = v``, ``terms[k] /= 2``:
    ``terms``), anywhere in it."""
    found: Set[str] = set()

    def add(target: "cst.BaseExpression") -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                add(e.value)
        elif isinstance(target, cst.Subscript) and _dotted_ok(target.value):
            found.add(code(target.value))

    class Collect(cst.CSTVisitor):
        def visit_AssignTarget(self, node: "cst.AssignTarget") -> None:
            add(node.target)

        def visit_AugAssign(self, node: "cst.AugAssign") -> None:
            add(node.target)

        def visit_AnnAssign(self, node: "cst.AnnAssign") -> None:
            add(node.target)

        def visit_FunctionDef(self, node: "cst.FunctionDef") -> bool:
            return False

    stmt.visit(Collect())
    return found


def _reads_all(stmt: "cst.BaseStatement") -> Set[str]:
    """What a statement may read: a plain assignment's right-hand side; for any other, every
    name and attribute chain in it that is not bound in it before it is read (a loop's
    variables, ``adv`` of ``if c: adv = f(x) else: adv = g(x)``; each branch on its own)."""
    if _targets(stmt) is not None:
        return _reads(stmt)
    found: Set[str] = set()
    _walk_reads(stmt, set(), found)
    return found


def _walk_reads(node: "cst.CSTNode", bound: Set[str], found: Set[str]) -> Set[str]:
    """Add to ``found`` the names ``node`` reads that ``bound`` (bound before, on this path)
    lacks; return what is bound after it on every path through it."""
    if isinstance(node, cst.Name):
        if node.value not in bound:
            found.add(node.value)
        return bound
    if isinstance(node, cst.Attribute) and _dotted_ok(node):
        text = code(node)
        if text not in bound and _root_name(node) not in bound:
            found.add(text)
        return _walk_reads(node.value, bound, found)
    if isinstance(node, cst.Attribute):  # ``f(x).mean``: its attribute's name is no read
        return _walk_reads(node.value, bound, found)
    if isinstance(node, cst.Arg):  # ``dim=1``: nor is a keyword
        return _walk_reads(node.value, bound, found)
    if isinstance(node, cst.Assign):
        bound = _walk_reads(node.value, bound, found)
        for t in node.targets:
            bound = _bind(t.target, bound, found)
        return bound
    if isinstance(node, cst.AugAssign):
        bound = _walk_reads(node.value, _walk_reads(node.target, bound, found), found)
        return _bind(node.target, bound, found)
    if isinstance(node, cst.For):
        bound = _walk_reads(node.iter, bound, found)
        inside = _walk_reads(node.body, _bind(node.target, bound, found), found)
        if node.orelse is not None:
            _walk_reads(node.orelse, inside, found)
        return bound  # the body may not run
    if isinstance(node, cst.If):
        bound = _walk_reads(node.test, bound, found)
        one = _walk_reads(node.body, bound, found)
        other = _walk_reads(node.orelse, bound, found) if node.orelse is not None else bound
        return one & other
    for child in node.children:
        bound = _walk_reads(child, bound, found)
    return bound


def _bind(target: "cst.BaseExpression", bound: Set[str], found: Set[str]) -> Set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            bound = _bind(e.value, bound, found)
        return bound
    if isinstance(target, cst.StarredElement):
        return _bind(target.value, bound, found)
    if isinstance(target, (cst.Name, cst.Attribute)) and _dotted_ok(target):
        if isinstance(target, cst.Attribute):
            _walk_reads(target.value, bound, found)
        return bound | {code(target)}
    _walk_reads(target, bound, found)  # a subscript: a write into an object it reads
    return bound


def _root_name(expr: "cst.BaseExpression") -> str:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else ""


def _binds(stmt: "cst.BaseStatement") -> Set[str]:
    """What a statement run again binds (``name``, ``self.x``; in a loop, its variables too)."""
    bound = _targets(stmt)
    return bound if bound is not None else _any_binding(stmt)


def _simple_ok(stmt: "cst.BaseStatement") -> bool:
    """A line the copies may run again: one assignment (plain, augmented or annotated)."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], (cst.Assign, cst.AugAssign, cst.AnnAssign))


_NOT_AGAIN = (cst.Return, cst.Yield, cst.Await, cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global,
              cst.Nonlocal, cst.Del, cst.Import, cst.ImportFrom, cst.While, cst.Try, cst.With)


def _repeatable(stmt: "cst.BaseStatement") -> bool:
    """A ``for`` loop or an ``if`` the copies may run again: no step, backward or gradient reset
    in it, no ``return``/``yield``, definition, ``while``, ``try``, ``with`` or ``del``; in an
    ``if``, no ``break``/``continue`` (they leave a loop around it)."""
    if not isinstance(stmt, (cst.For, cst.If)) or (isinstance(stmt, cst.For) and stmt.asynchronous is not None):
        return False
    bad: List[bool] = []
    stops = (cst.Break, cst.Continue) if isinstance(stmt, cst.If) else ()

    class Look(cst.CSTVisitor):
        def on_visit(self, node: "cst.CSTNode") -> bool:
            if isinstance(node, _NOT_AGAIN) or (stops and isinstance(node, stops)):
                bad.append(True)
                return False
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and any(
                    word in node.func.attr.value for word in ("step", "backward", "zero_grad")):
                bad.append(True)
                return False
            return True

    stmt.visit(Look())
    return not bad


def _first_line(stmt: "cst.BaseStatement") -> str:
    text = code(stmt.with_changes(leading_lines=[])).strip().splitlines()[0]
    return text if isinstance(stmt, cst.SimpleStatementLine) else text + " ..."


def _lines(where: Positions, stmt: "cst.BaseStatement") -> Tuple[int, int]:
    rng = where.ranges[stmt]
    return rng.start.line, rng.end.line


def plans(where: Positions, step_line: Optional[int], save_lines: Sequence[int],
          backward_lines: Sequence[int] = ()) -> Tuple[List[Plan], str]:
    """The recompute rewrites of the step at ``step_line``, whose later loss's forward saved the
    stepped parameter at one of ``save_lines`` (this file's lines); or none and why.
    ``backward_lines``: this file's lines of the frames of the backward that failed (its call,
    and the calls of helpers around it: ``update_params(opt, loss)`` runs the backward)."""
    if step_line is None:
        return [], "the step is not in this file"
    why = f"no `backward()` after the step at line {step_line} in the same block"
    found: List[Plan] = []
    for node in where.ranges:
        if not isinstance(node, (cst.IndentedBlock, cst.Module)):
            continue
        body = list(node.body)
        for i, stmt in enumerate(body):
            first, last = _lines(where, stmt)
            if not (first <= step_line <= last) or _call_of(stmt) is None:
                continue
            later = _later_backwards(body, i) + _helper_backwards(where, body, i, backward_lines)
            if not later:
                why = _no_later_backward(where, body, i, backward_lines)
            # Each later backward in turn (the run does not say which one failed): the first
            # one's reason is the one told.
            reasons, mine = [], []
            for j, back in later:
                plan, reason = _plan(where, node, body, i, j, back, save_lines)
                if plan is not None:
                    mine.append(plan)
                    moved = _moved(where, body, i, plan)
                    if moved is not None:
                        mine.append(moved)
                else:
                    reasons.append(reason)
            if len([p for p in mine if not p.move]) > 1 and all(p.before is not None or any(p.taken[0] is s for s in body) for p in mine):
                # Every later loss the step made stale, rebuilt at once, first: the run names a
                # conflict by its step and the line that saved, the same for two losses through
                # one module (a CycleGAN's two discriminator losses), so fixing one of them
                # looks to the repair as if the conflict stayed.
                copied = [p for p in mine if not p.move]
                both = Plan(node, i, copied[0].backward, "recompute", "; and ".join(p.title for p in copied))
                both.parts = copied
                found.append(both)
            found += mine
            if reasons and not found:
                why = reasons[0]
    return found, why


def _plan(where: Positions, block: "cst.CSTNode", body: List["cst.BaseStatement"], i: int, j: int,
          back: "cst.SimpleStatementLine", save_lines: Sequence[int]) -> Tuple[Optional[Plan], str]:
    """The copies for the backward ``back`` (in ``body[j]``) after the step ``body[i]``."""
    step = _step_text(body[i])
    backward = _is_backward(back)
    if backward is not None:
        loss_expr = cast("cst.Attribute", backward.func).value
        if not _dotted_ok(loss_expr):
            return None, f"`{code(loss_expr)}.backward()`: the loss is not a name the rewrite can rebuild"
        start, backward_text = {code(loss_expr)}, f"`{code(loss_expr)}.backward()`"
        loss = f"`{code(loss_expr)}`"  # as the reasons show it
    else:  # a helper runs the backward (``update_params(opt, net, loss)``): what its call reads
        loss = f"the loss passed to `{code(cast('cst.Call', _call_of(back)).func)}()`"
        start, backward_text = _reads_all(back), f"`{_first_line(back)}`"
    # The statements after the step that finish the loss (``g_loss = criterion(fake_out, ...)``)
    # stay where they are; what they read from before the step is what must be taken again.
    needed, after = _chain_after(body, i, j, start)
    chosen, needed, barrier = _chain_before(where, body, i, needed, loss)
    if not chosen:
        return None, barrier or (f"{loss} is not built in the block of `{step}` before it (line "
                                 f"{_lines(where, body[i])[0]}): the loss is made elsewhere (another method, "
                                 "an earlier call), where the rewrite cannot run it again")
    # From the stepped module's call: the line where the run saw the parameter saved, or a
    # statement that reads a module the stepped optimizer was built over.
    saves = set(save_lines)
    modules = set().union(*(_stepped_modules(where, o) for o in _optimizers(body[i])))
    cut = next((k for k in sorted(chosen)
                if any(_lines(where, body[k])[0] <= s <= _lines(where, body[k])[1] for s in saves)
                or _calls_into(body[k], modules) or _runs_into(where, block, body[k], modules)), None)
    if cut is None and barrier:
        return None, barrier
    if cut is None:
        shown = ", ".join(str(s) for s in sorted(saves)) or "?"
        return None, (f"the forward through the stepped module (line {shown}, where the run saw the parameter "
                      f"saved) is not among the statements that build {loss} in the block of `{step}`")
    copies = {k for k in chosen if k >= cut}
    why = _grown_from_start(where, body, chosen, copies)
    if why:
        return None, why
    # The copies go right before the first statement after the step that reads what they make
    # (the backward where none does), so that each statement reads the values it read before
    # the step, or their fresh ones.
    made_all = set().union(*(_binds(body[k]) for k in copies))
    at = next((m for m in sorted(after) if _reads_all(body[m]) & made_all), j)
    why = _filled_again(where, body, i, at, copies, made_all)
    if why:
        return None, why
    ordered = sorted(copies)
    made: Set[str] = set()
    for k in ordered:
        # What the copy reads must be what the original read: not bound again by a statement up
        # to the insertion point (the copy itself and the later ones included).
        others = [body[m] for m in range(k, at) if m != i]
        rebound = set().union(*(_any_binding(s) for s in others)) if others else set()
        clash = sorted((_reads_all(body[k]) - made) & rebound)
        if clash:
            return None, (f"line {_lines(where, body[k])[0]} reads `{clash[0]}`, which is bound again before "
                          f"{'the copies' if at != j else backward_text}: running it again there "
                          "would read another value")
        made |= _binds(body[k])
    shown = "; ".join(f"`{_first_line(body[k])}`" for k in ordered)
    where_to = (f"right before {backward_text}" if at == j
                else f"right before line {_lines(where, body[at])[0]}, which finishes {loss} after the step")
    plan = Plan(block, i, j, "recompute", (
        f"run {shown} again after `{step}`, {where_to}, so that the backward goes "
        f"through a fresh forward on the updated parameters"))
    plan.copies = ordered
    plan.taken = [back]
    plan.before = at if at != j else None
    return plan, ""


def _helper_backwards(where: Positions, body: List["cst.BaseStatement"], i: int,
                      backward_lines: Sequence[int]) -> List[Tuple[int, "cst.SimpleStatementLine"]]:
    """The calls after ``body[i]`` (statements of the block) that ran the backward that failed
    in a helper (``update_params(policy_optim, policy, policy_loss)``), found by the run's
    frames of that backward."""
    out: List[Tuple[int, "cst.SimpleStatementLine"]] = []

    def walk(stmt: "cst.BaseStatement", top: int) -> None:
        first, last = _lines(where, stmt)
        if not any(first <= line <= last for line in backward_lines):
            return
        if _call_of(stmt) is not None and _is_backward(stmt) is None:
            out.append((top, cast("cst.SimpleStatementLine", stmt)))
        elif isinstance(stmt, (cst.If, cst.With, cst.Try)):  # as ``_later_backwards``: never into a loop
            orelse = getattr(stmt, "orelse", None)
            blocks = [stmt.body, *([orelse.body] if isinstance(orelse, cst.Else) else [])]
            for block in blocks:
                for inner in getattr(block, "body", ()):
                    if isinstance(inner, cst.BaseStatement):
                        walk(inner, top)

    for k in range(i + 1, len(body)):
        walk(body[k], k)
    return out


def _no_later_backward(where: Positions, body: List["cst.BaseStatement"], i: int,
                       backward_lines: Sequence[int]) -> str:
    """Why no backward after the step ``body[i]`` can be rebuilt, with the failing backward's
    place where the run gave it."""
    step = _step_text(body[i])
    first = next((k for k in range(i) for line in backward_lines
                  if _lines(where, body[k])[0] <= line <= _lines(where, body[k])[1]), None)
    if first is not None:
        return (f"the backward that failed (line {_lines(where, body[first])[0]}) comes before `{step}` in its "
                "block: it goes through a graph built before an earlier pass of the step (kept across it by "
                "`retain_graph=True` or a value carried over to the next iteration); the rewrite does not run an "
                "earlier iteration's forward again")
    if backward_lines:
        return (f"no `backward()` after `{step}` in its block: the backward that failed runs at line "
                f"{min(backward_lines)}, in another block or function (the forward cannot be run again before it "
                "here)")
    return f"no `backward()` after `{step}` in its block (the forward cannot be run again before it here)"


def _optimizers(stmt: "cst.BaseStatement") -> List[str]:
    """The optimizer a step statement steps (``opt_D.step()``), or, where a helper steps it
    (``update_params(self.q1_optim, ...)``), each name or attribute chain passed to it."""
    optimizer = _is_step(stmt)
    if optimizer is not None:
        return [code(optimizer)]
    call = _call_of(stmt)
    return [code(a.value) for a in call.args if _dotted_ok(a.value)] if call is not None else []


def _runs_into(where: Positions, block: "cst.CSTNode", stmt: "cst.BaseStatement", modules: Set[str],
               depth: int = 3) -> bool:
    """Whether a statement calls a method of the block's class (``self.calc_policy_loss(...)``)
    or a function of this module that runs a stepped module (``self.critic(...)`` in it), up
    to ``depth`` calls deep."""
    if not modules or depth == 0:
        return False
    defs = _definitions(where, block)
    called: Set[str] = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: "cst.Call") -> None:
            if _dotted_ok(node.func):
                called.add(code(node.func))

    stmt.visit(Calls())
    for name in sorted(called):
        for inner in defs.get(name, ()):
            body = list(inner.body.body) if isinstance(inner.body, cst.IndentedBlock) else []
            if any(_calls_into(s, modules) or _runs_into(where, block, s, modules, depth - 1) for s in body):
                return True
    return False


def _definitions(where: Positions, block: "cst.CSTNode") -> Dict[str, List["cst.FunctionDef"]]:
    """``self.<name>`` -> the methods of the class around ``block``; ``<name>`` -> this
    module's functions."""
    found: Dict[str, List["cst.FunctionDef"]] = {}
    node: Optional[cst.CSTNode] = block
    while node is not None and not isinstance(node, cst.ClassDef):
        node = where.parents.get(node)
    if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock):
        for s in node.body.body:
            if isinstance(s, cst.FunctionDef):
                found.setdefault(f"self.{s.name.value}", []).append(s)
    top: Optional[cst.CSTNode] = block
    while top is not None and where.parents.get(top) is not None:
        top = where.parents.get(top)
    if isinstance(top, cst.Module):
        for s in top.body:
            if isinstance(s, cst.FunctionDef):
                found.setdefault(s.name.value, []).append(s)
    return found


def _moved(where: Positions, body: List["cst.BaseStatement"], i: int, plan: Plan) -> Optional[Plan]:
    """The copies of ``plan`` moved instead (the statements taken out where they were): where no
    statement between them and their new place reads or changes what they make. A move keeps the
    order of the program's random draws where nothing between draws any (``policy_loss, ent =
    self.calc_policy_loss(batch)`` sampling actions), which a copy changes."""
    at = plan.before if plan.before is not None else plan.backward
    if plan.before is None and plan.taken[0] is not body[plan.backward]:
        return None  # the backward is inside an ``if``: its block is another one
    copies = set(plan.copies)
    made = set().union(*(_binds(body[k]) for k in copies))
    for m in range(min(copies) + 1, at):
        if m in copies:
            continue
        if (_reads_all(body[m]) | _grows(body[m]) | _written_into(body[m])) & made:
            return None
    moved = Plan(plan.block, i, plan.backward, "recompute", plan.title.replace("run ", "move ", 1).replace(
        " again after ", " after ", 1))
    moved.copies, moved.taken, moved.before, moved.move = plan.copies, plan.taken, plan.before, True
    return moved


def _chain_after(body: List["cst.BaseStatement"], i: int, j: int, start: Set[str]) -> Tuple[Set[str], Set[int]]:
    """What the loss (``start``: the names its backward reads) needs from before the step at
    ``body[i]``, walking back from its backward in ``body[j]`` over the statements between them
    that build it (which stay where they are); and those statements."""
    needed, after = set(start), set()
    for k in range(j - 1, i, -1):
        bound = _targets(body[k])
        if bound is not None and bound & needed:
            after.add(k)
            needed = (needed - bound) | _reads(body[k])
        elif (_grows(body[k]) | _written_into(body[k]) | _any_binding(body[k])) & needed:
            after.add(k)
            needed |= _reads_all(body[k])
    return needed, after


def _chain_before(where: Positions, body: List["cst.BaseStatement"], i: int, needed: Set[str],
                  loss: str) -> Tuple[List[int], Set[str], str]:
    """The statements before the step that build what ``needed`` names, latest first: a name
    bound by a plain assignment needs nothing earlier; ``name += value``, a write into
    ``name[key]`` and a ``for``/``if`` that builds part of it need what ``name`` was. And why
    the walk stopped early (a statement that builds part of it but cannot run again)."""
    chosen: List[int] = []
    for k in range(i - 1, -1, -1):
        stmt = body[k]
        bound = _targets(stmt)
        if bound is not None and bound & needed:
            chosen.append(k)
            needed = (needed - bound) | _reads(stmt)
        elif (_grows(stmt) | _written_into(stmt) | _any_binding(stmt)) & needed:
            if not isinstance(stmt, cst.SimpleStatementLine) and not _repeatable(stmt):
                return chosen, needed, (f"line {_lines(where, stmt)[0]} builds part of {loss} in a statement "
                                        "the rewrite cannot repeat (assignments, `for` loops and `if`s without "
                                        "a step, a backward, a `return` or a definition are run again)")
            if isinstance(stmt, cst.SimpleStatementLine) and not _simple_ok(stmt):
                return chosen, needed, (f"line {_lines(where, stmt)[0]} builds part of {loss} in a statement "
                                        "the rewrite cannot repeat (only assignments are run again)")
            chosen.append(k)
            needed |= _reads_all(stmt)
    return chosen, needed, ""


def _grown_from_start(where: Positions, body: List["cst.BaseStatement"], chosen: List[int],
                      copies: Set[int]) -> str:
    """``name += value`` run again needs ``name`` as it was before: its chain from the plain
    assignment, which must make a new value (an alias was changed in place by the ``+=``); the
    copies grow by that chain. Why not, or ""."""
    for k in sorted(copies, reverse=True):
        for grown in sorted(_grows(body[k])):
            start = next((m for m in sorted(chosen, reverse=True) if m < k and grown in (_targets(body[m]) or ())),
                         None)
            if start is None:
                return (f"line {_lines(where, body[k])[0]} adds to `{grown}`, which is not built in the block "
                        "of the step: running it again would add twice")
            if isinstance(_value(body[start]), (cst.Name, cst.Attribute, cst.Subscript)):
                return (f"line {_lines(where, body[k])[0]} adds in place to `{grown}`, which starts as "
                        f"`{code(cast('cst.BaseExpression', _value(body[start])))}` (line "
                        f"{_lines(where, body[start])[0]}): that tensor keeps the first addition")
            copies |= {m for m in chosen if start <= m < k and (grown in (_targets(body[m]) or ())
                                                                 or grown in _grows(body[m]))}
    return ""


def _filled_again(where: Positions, body: List["cst.BaseStatement"], i: int, at: int, copies: Set[int],
                  made: Set[str]) -> str:
    """A container the copies make again (``terms = {...}``) that a statement left out writes
    into before they run (``terms["adv"] = adv``): that write runs again too (a plain line), so
    the fresh container holds what the old one held. Why not, or ""."""
    first = min(copies)
    for m in range(first + 1, at):
        if m in copies or m == i or not (_written_into(body[m]) & made):
            continue
        if isinstance(body[m], cst.SimpleStatementLine) and _simple_ok(body[m]) and _targets(body[m]) is None:
            copies.add(m)
            continue
        name = sorted(_written_into(body[m]) & made)[0]
        return (f"line {_lines(where, body[m])[0]} writes into `{name}`, which the rewrite makes again: "
                "the fresh one would lack that write")
    return ""


def fix(where: Positions, plan: Plan) -> Fix:
    """The copies inserted right before the backward (in the block that holds it: the step's
    block, or one inside it, as ``if train_dec:``), or right before the statement of the step's
    block that finishes the loss after the step (``plan.before``). Found by its text, so that
    the copies for another conflict of the same block go in beside them; copies already there
    are not put in twice. A plan of several backwards (``plan.parts``) is one fix of each."""
    body = _body(plan.block)
    if plan.parts:
        # One fix of the block's owner (the function, the loop): the repair takes one fix per
        # node and round, and another conflict's copies may be fixing the block itself.
        inserts = [_insert_before(body[part.before] if part.before is not None else part.taken[0],
                                  _made(body, part)) for part in plan.parts]
        owner = where.parents.get(plan.block)
        if owner is None or getattr(owner, "body", None) is not plan.block:
            raise ValueError("the block has no owner to fix")

        def build_all(node: "cst.CSTNode") -> "cst.CSTNode":
            block = cast("cst.CSTNode", getattr(node, "body"))
            for insert in inserts:
                block = insert(block)
            return node.with_changes(body=block)
        return Fix(owner, build_all, plan.title, order=1)
    made = _made(body, plan)
    if plan.move:
        anchor = body[plan.before] if plan.before is not None else plan.taken[0]
        return Fix(plan.block, _move_before(anchor, [body[k] for k in plan.copies]), plan.title, order=1)
    if plan.before is not None:
        return Fix(plan.block, _insert_before(body[plan.before], made), plan.title, order=1)
    back = plan.taken[0]
    inner = where.parents.get(back)
    if not isinstance(inner, cst.IndentedBlock) and inner is not plan.block:
        raise ValueError("the backward is not a statement of a block")
    return Fix(inner, _insert_before(back, made), plan.title, order=1)


def _made(body: List["cst.BaseStatement"], plan: Plan) -> List["cst.BaseStatement"]:
    copies = [body[k] for k in plan.copies]
    comment = cst.EmptyLine(comment=cst.Comment(COMMENT))
    return [s.with_changes(leading_lines=[comment] if n == 0 else []) for n, s in enumerate(copies)]


def _insert_before(anchor: "cst.BaseStatement",
                   made: List["cst.BaseStatement"]) -> "Callable[[cst.CSTNode], cst.CSTNode]":
    def build(node: "cst.CSTNode") -> "cst.CSTNode":
        now = list(cast("cst.IndentedBlock", node).body)
        hits = [k for k, s in enumerate(now) if s.deep_equals(anchor)]
        if len(hits) != 1:
            return node  # the statement is gone, or not one: leave the block
        at = hits[0]
        bare = [s.with_changes(leading_lines=[]) for s in made]
        there = [s.with_changes(leading_lines=[]) for s in now[max(0, at - len(made)):at]]
        if len(there) == len(bare) and all(a.deep_equals(b) for a, b in zip(there, bare)):
            return node  # the same copies, for another conflict: in once
        return node.with_changes(body=now[:at] + made + now[at:])
    return build


COMMENT_MOVED = "# inplacefix (recompute): the forward through the stepped module, moved after the step"


def _move_before(anchor: "cst.BaseStatement",
                 moved: List["cst.BaseStatement"]) -> "Callable[[cst.CSTNode], cst.CSTNode]":
    def build(node: "cst.CSTNode") -> "cst.CSTNode":
        now = list(cast("cst.IndentedBlock", node).body)
        hits = [[k for k, s in enumerate(now) if s.deep_equals(m)] for m in moved]
        at = [k for k, s in enumerate(now) if s.deep_equals(anchor)]
        if len(at) != 1 or any(len(h) != 1 for h in hits):
            return node  # gone, or not one: leave the block
        taken = {h[0] for h in hits}
        comment = cst.EmptyLine(comment=cst.Comment(COMMENT_MOVED))
        lines = [list(getattr(now[k], "leading_lines", ())) for k in sorted(taken)]
        made = [now[k].with_changes(leading_lines=[comment, *lines[n]] if n == 0 else lines[n])
                for n, k in enumerate(sorted(taken))]
        rest = [s for k, s in enumerate(now) if k not in taken]
        anchor_at = [k for k, s in enumerate(rest) if s.deep_equals(anchor)][0]
        return node.with_changes(body=rest[:anchor_at] + made + rest[anchor_at:])
    return build
