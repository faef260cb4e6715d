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

It applies where the step is a statement of a block and the ``backward()`` comes after it in
that block (or in an ``if``/``with``/``try`` inside it: the copies go right before it there),
the loss is a name (or an attribute chain) built in that block before the step by assignments
(``name += value`` too, its chain rebuilt from a plain assignment that makes a new value: an
alias was changed in place by the ``+=``), and no name the copies read is bound again between
the original statement and the backward. Statements before an ``if`` or a loop that builds part
of the loss stay as they are; where such a statement would have to run again, it says why. Unsafe by nature (it picks a meaning); verified against the recompute reference
(``codemod.runtime.recompute``). libcst only; no torch here.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Set, Tuple, cast

from codemod.findings import Fix
from codemod.fixes import _cst as cst
from codemod.fixes.edits import code
from codemod.fixes.from_run import Positions
from codemod.fixes.step_order import (Plan, _body, _call_of, _dotted_ok, _is_backward, _is_step, _later_backwards,
                                      _replace_body, _step_text)

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
    side; an augmented one reads its target too)."""
    found: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: "cst.Name") -> None:
            found.add(node.value)

        def visit_Attribute(self, node: "cst.Attribute") -> None:
            if _dotted_ok(node):
                found.add(code(node))

    value = _value(stmt)
    if value is not None:
        value.visit(Collect())
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
    holds it (``net(x)`` for ``net.encoder``; ``model.generator(x)`` does not run
    ``model.discriminator``)."""
    called: Set[str] = set()

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: "cst.Call") -> None:
            if _dotted_ok(node.func):
                called.add(code(node.func))

    value = _value(stmt)
    if value is not None:
        value.visit(Calls())
    return any(r in modules for r in _reads(stmt)) or any(
        c != "self" and m.startswith(c + ".") for c in called for m in modules)


def _lines(where: Positions, stmt: "cst.BaseStatement") -> Tuple[int, int]:
    rng = where.ranges[stmt]
    return rng.start.line, rng.end.line


def plans(where: Positions, step_line: Optional[int], save_lines: Sequence[int]) -> Tuple[List[Plan], str]:
    """The recompute rewrites of the step at ``step_line``, whose later loss's forward saved the
    stepped parameter at one of ``save_lines`` (this file's lines); or none and why."""
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
            plan, reason = _plan(where, node, body, i, save_lines)
            if plan is not None:
                found.append(plan)
            else:
                why = reason
    return found, why


def _plan(where: Positions, block: "cst.CSTNode", body: List["cst.BaseStatement"], i: int,
          save_lines: Sequence[int]) -> Tuple[Optional[Plan], str]:
    later = _later_backwards(body, i)
    step = _step_text(body[i])
    if not later:
        return None, f"no `backward()` after `{step}` in its block (the forward cannot be run again before it here)"
    j, back = later[0]
    loss_expr = cast("cst.Attribute", cast("cst.Call", _is_backward(back)).func).value
    if not _dotted_ok(loss_expr):
        return None, f"`{code(loss_expr)}.backward()`: the loss is not a name the rewrite can rebuild"
    loss = code(loss_expr)
    # The statements before the step that the loss depends on, latest first (a name bound by a
    # plain assignment needs nothing earlier; ``name += value`` needs what ``name`` was).
    needed, chosen = {loss}, []
    barrier = ""
    for k in range(i - 1, -1, -1):
        bound, grown = _targets(body[k]), _augmented(body[k])
        if grown is not None and grown in needed:
            chosen.append(k)
            needed |= _reads(body[k])
        elif bound is not None and bound & needed:
            chosen.append(k)
            needed = (needed - bound) | _reads(body[k])
        elif bound is None and _any_binding(body[k]) & needed:
            # What comes before it cannot be run again (an ``if``, a loop): the statements after
            # it are what may be.
            barrier = (f"line {_lines(where, body[k])[0]} builds part of `{loss}` in a statement the "
                       "rewrite cannot repeat (only assignments are run again)")
            break
    if not chosen:
        return None, barrier or f"`{loss}` is not built in the block of `{step}` before it"
    # From the stepped module's call: the line where the run saw the parameter saved, or a
    # statement that reads a module the stepped optimizer was built over.
    saves = set(save_lines)
    optimizer = _is_step(body[i])
    modules = _stepped_modules(where, code(optimizer)) if optimizer is not None else set()
    cut = next((k for k in sorted(chosen)
                if any(_lines(where, body[k])[0] <= s <= _lines(where, body[k])[1] for s in saves)
                or _calls_into(body[k], modules)), None)
    if cut is None and barrier:
        return None, barrier
    if cut is None:
        shown = ", ".join(str(s) for s in sorted(saves)) or "?"
        return None, (f"the forward through the stepped module (line {shown}, where the run saw the parameter "
                      f"saved) is not among the statements that build `{loss}` in the block of `{step}`")
    copies = {k for k in chosen if k >= cut}
    # ``name += value`` run again needs ``name`` as it was before: its chain from the plain
    # assignment, which must make a new value (an alias was changed in place by the ``+=``).
    for k in sorted(copies, reverse=True):
        grown = _augmented(body[k])
        if grown is None:
            continue
        start = next((m for m in sorted(chosen, reverse=True) if m < k and grown in (_targets(body[m]) or ())), None)
        if start is None:
            return None, (f"line {_lines(where, body[k])[0]} adds to `{grown}`, which is not built in the block "
                          "of the step: running it again would add twice")
        if isinstance(_value(body[start]), (cst.Name, cst.Attribute, cst.Subscript)):
            return None, (f"line {_lines(where, body[k])[0]} adds in place to `{grown}`, which starts as "
                          f"`{code(cast('cst.BaseExpression', _value(body[start])))}` (line "
                          f"{_lines(where, body[start])[0]}): that tensor keeps the first addition")
        copies |= {m for m in chosen if start <= m < k and (grown in (_targets(body[m]) or ())
                                                             or _augmented(body[m]) == grown)}
    ordered = sorted(copies)
    made: Set[str] = set()
    for k in ordered:
        others = [body[m] for m in range(k + 1, j) if m not in copies]
        rebound = set().union(*(_any_binding(s) for s in others)) if others else set()
        clash = sorted((_reads(body[k]) - made) & rebound)
        if clash:
            return None, (f"line {_lines(where, body[k])[0]} reads `{clash[0]}`, which is bound again before "
                          f"`{loss}.backward()`: running it again there would read another value")
        made |= _targets(body[k]) or set()
    shown = "; ".join(f"`{code(body[k]).strip()}`" for k in ordered)
    plan = Plan(block, i, j, "recompute", (
        f"run {shown} again after `{step}`, right before `{loss}.backward()`, so that the backward goes "
        f"through a fresh forward on the updated parameters"))
    plan.copies = ordered
    plan.taken = [back]
    return plan, ""


def fix(where: Positions, plan: Plan) -> Fix:
    """The copies inserted right before the backward (in the block that holds it: the step's
    block, or one inside it, as ``if train_dec:``)."""
    body = _body(plan.block)
    back = plan.taken[0]
    inner = where.parents.get(back)
    if not isinstance(inner, cst.IndentedBlock) and inner is not plan.block:
        raise ValueError("the backward is not a statement of a block")
    copies = [body[k] for k in plan.copies]
    comment = cst.EmptyLine(comment=cst.Comment(COMMENT))
    made = [s.with_changes(leading_lines=[comment] if n == 0 else []) for n, s in enumerate(copies)]
    old = _body(inner)
    at = next(k for k, s in enumerate(old) if s is back)
    new = old[:at] + made + old[at:]
    return Fix(inner, _replace_body(old, new), plan.title, order=1)
