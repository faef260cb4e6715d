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

It applies where the step and the ``backward()`` are statements of one block, the loss is a
name (or an attribute chain) bound in that block before the step by plain assignments, and no
name the copies read is rebound between the original statement and the backward. Elsewhere it
says why. Unsafe by nature (it picks a meaning); verified against the recompute reference
(``codemod.runtime.recompute``). libcst only; no torch here.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Set, Tuple, cast

from codemod.findings import Fix
from codemod.fixes import _cst as cst
from codemod.fixes.edits import code
from codemod.fixes.from_run import Positions
from codemod.fixes.step_order import Plan, _body, _call_of, _dotted_ok, _is_backward, _replace_body, _step_text

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
    """The names and attribute chains a plain assignment reads (its right-hand side)."""
    small = cast("cst.SimpleStatementLine", stmt).body[0]
    value = small.value if isinstance(small, cst.Assign) else cast("cst.AnnAssign", small).value
    found: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, node: "cst.Name") -> None:
            found.add(node.value)

        def visit_Attribute(self, node: "cst.Attribute") -> None:
            if _dotted_ok(node):
                found.add(code(node))

    if value is not None:
        value.visit(Collect())
    return found


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
    j = next((k for k in range(i + 1, len(body)) if _is_backward(body[k]) is not None), None)
    step = _step_text(body[i])
    if j is None:
        return None, f"no `backward()` after `{step}` in its block (the forward cannot be run again before it here)"
    loss_expr = cast("cst.Attribute", cast("cst.Call", _is_backward(body[j])).func).value
    if not _dotted_ok(loss_expr):
        return None, f"`{code(loss_expr)}.backward()`: the loss is not a name the rewrite can rebuild"
    loss = code(loss_expr)
    # The statements before the step that the loss depends on, latest first.
    needed, chosen = {loss}, []
    for k in range(i - 1, -1, -1):
        bound = _targets(body[k])
        if bound is None:
            if _any_binding(body[k]) & needed:
                return None, (f"line {_lines(where, body[k])[0]} builds part of `{loss}` in a statement the "
                              "rewrite cannot repeat (only plain assignments are run again)")
            continue
        if bound & needed:
            chosen.append(k)
            needed |= _reads(body[k])
    if not chosen:
        return None, f"`{loss}` is not built in the block of `{step}` before it"
    saves = set(save_lines)
    cut = next((k for k in sorted(chosen)
                if any(_lines(where, body[k])[0] <= s <= _lines(where, body[k])[1] for s in saves)), None)
    if cut is None:
        shown = ", ".join(str(s) for s in sorted(saves)) or "?"
        return None, (f"the forward through the stepped module (line {shown}, where the run saw the parameter "
                      f"saved) is not among the statements that build `{loss}` in the block of `{step}`")
    copies = sorted(k for k in chosen if k >= cut)
    made: Set[str] = set()
    for k in copies:
        others = [body[m] for m in range(k + 1, j) if m not in copies]
        rebound = set().union(*(_any_binding(s) for s in others)) if others else set()
        reads = _reads(body[k]) - made
        clash = sorted(reads & rebound)
        if clash:
            return None, (f"line {_lines(where, body[k])[0]} reads `{clash[0]}`, which is bound again before "
                          f"`{loss}.backward()`: running it again there would read another value")
        made |= cast(Set[str], _targets(body[k]))
    shown = "; ".join(f"`{code(body[k]).strip()}`" for k in copies)
    plan = Plan(block, i, j, "recompute", (
        f"run {shown} again after `{step}`, right before `{loss}.backward()`, so that the backward goes "
        f"through a fresh forward on the updated parameters"))
    plan.copies = copies
    return plan, ""


def fix(where: Positions, plan: Plan) -> Fix:
    """The block with the copies inserted right before the backward."""
    body = _body(plan.block)
    copies = [body[k] for k in plan.copies]
    comment = cst.EmptyLine(comment=cst.Comment(COMMENT))
    made = [s.with_changes(leading_lines=[comment] if n == 0 else []) for n, s in enumerate(copies)]
    new_body = body[:plan.backward] + made + body[plan.backward:]
    return Fix(plan.block, _replace_body(body, new_body), plan.title, order=1)
