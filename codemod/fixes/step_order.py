"""Rewrites for step-order conflicts: an optimizer step between a forward and its backward.

``opt_D.step()`` changes D's parameters in place; a loss built before it through D (a GAN's
generator loss, an actor loss through the critic) then fails at ``backward()``. No local rewrite
of an in-place op fixes this; the order of the statements must change, and that picks a meaning.
The meaning built here is **as computed**: the later loss's gradients through the values its
forward really used (the snapshot oracle's), so the rewrites below are verified against it.

Three rewrites of one statement block (the block that holds both the step and the backward), in
this order:

- **gradients before the step**: the later loss's gradients are taken with
  ``torch.autograd.grad`` right before the step (for every leaf its graph reaches), and the
  ``backward()`` becomes a backward pass of those leaves with those gradients: every statement
  keeps its place and every ``.grad`` its value, whoever reads it.
- **mutation allowed**: the step's block (or a block around it, up to its function's body,
  around a loop too: a graph reused in a later iteration needs the loop inside) runs under
  ``torch.autograd.graph.allow_mutation_on_saved_tensors()``: PyTorch keeps the original of every
  saved tensor changed in place inside it, for the backward. The contexts cannot be nested: a
  wrap around another one (of an earlier round, or of another conflict) takes its place.
- **reorder**: the step moves right after the later ``backward()``, and that backward is
  restricted to the parameters of the optimizer stepped after it (``backward(inputs=[...])``), so
  the moved step still sees only the gradients it saw before (the later loss adds nothing to them);
  the stepped parameters' ``.grad`` then lacks the later loss's part (verified where it matters).

Both are unsafe by nature (a meaning is chosen): the runtime's repair offers them only for a
conflict the run located, and writes one only once it is verified. libcst only; no torch here.
"""

from __future__ import annotations

from typing import Callable, List, Optional, Sequence, Set, Tuple, Union, cast

from codemod.findings import Fix
from codemod.fixes import _cst as cst
from codemod.fixes.edits import code, ensure_import, wrap_in_with

from codemod.fixes.from_run import Positions

GRADS_NOW = "_inplacefix_grads_now"
ACCUMULATE = "_inplacefix_accumulate"
PAIRS = "_inplacefix_later_grads"

HELPERS = f'''

def {GRADS_NOW}(loss, gradient=None, retain_graph=None):
    """inplacefix (step order, as computed): the gradients `loss.backward()` gives every leaf,
    taken now, before an optimizer step changes the values its forward used."""
    import torch
    leaves, seen, todo = [], set(), [loss.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if hasattr(node, "variable"):
            leaves.append(node.variable)
        todo.extend(following for following, _ in node.next_functions)
    grads = torch.autograd.grad(loss, leaves, gradient, retain_graph=retain_graph, allow_unused=True)
    return loss, [(leaf, grad) for leaf, grad in zip(leaves, grads) if grad is not None]


def {ACCUMULATE}(taken):
    """inplacefix (step order): the backward pass of `loss`, with its gradients taken earlier (a
    leaf's backward adds its gradient to `.grad`)."""
    import torch
    loss, pairs = taken
    if pairs:
        torch.autograd.backward([leaf for leaf, _ in pairs], [grad for _, grad in pairs])

'''

Block = cst.CSTNode  # an IndentedBlock or the Module: what has a ``body`` of statements


def _call_of(stmt: "cst.BaseStatement") -> Optional["cst.Call"]:
    """The call of a statement that is only a call (``x.f(...)``)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return small.value
    return None


def _method(call: "cst.Call") -> Optional[Tuple["cst.BaseExpression", str]]:
    if isinstance(call.func, cst.Attribute):
        return call.func.value, call.func.attr.value
    return None


def _is_step(stmt: "cst.BaseStatement") -> Optional["cst.BaseExpression"]:
    """The optimizer of a step-like statement (``opt.step()``, ``sam.first_step(...)``)."""
    call = _call_of(stmt)
    found = _method(call) if call is not None else None
    if found is None or "step" not in found[1] or not _dotted_ok(found[0]):
        return None
    return found[0]


def _is_backward(stmt: "cst.BaseStatement") -> Optional["cst.Call"]:
    call = _call_of(stmt)
    found = _method(call) if call is not None else None
    if found is None or found[1] != "backward" or not _dotted_ok(found[0]):
        return None
    return call


def _dotted_ok(expr: "cst.BaseExpression") -> bool:
    """A name, an attribute chain or a subscript by a constant of one (``self.opt``,
    ``optimizers['backbone']``): re-evaluating it gives the same object."""
    while True:
        if isinstance(expr, cst.Name):
            return True
        if isinstance(expr, cst.Attribute):
            expr = expr.value
        elif isinstance(expr, cst.Subscript) and all(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.Integer))
                for e in expr.slice):
            expr = expr.value
        else:
            return False


def _root(expr: "cst.BaseExpression") -> str:
    while not isinstance(expr, cst.Name):
        expr = cast("cst.Attribute", expr).value
    return expr.value


def _bound_names(stmts: Sequence["cst.BaseStatement"]) -> Set[str]:
    """Names (and dotted targets' roots) assigned anywhere in these statements."""
    names: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def _target(self, target: "cst.BaseExpression") -> None:
            if isinstance(target, (cst.Tuple, cst.List)):
                for element in target.elements:
                    self._target(element.value)
            elif isinstance(target, (cst.Name, cst.Attribute, cst.Subscript)):
                names.add(code(target))
                if _dotted_ok(target):
                    names.add(_root(target))
            elif isinstance(target, cst.StarredElement):
                self._target(target.value)

        def visit_AssignTarget(self, node: "cst.AssignTarget") -> None:
            self._target(node.target)

        def visit_AugAssign(self, node: "cst.AugAssign") -> None:
            self._target(node.target)

        def visit_AnnAssign(self, node: "cst.AnnAssign") -> None:
            self._target(node.target)

        def visit_For(self, node: "cst.For") -> None:
            self._target(node.target)

        def visit_NamedExpr(self, node: "cst.NamedExpr") -> None:
            self._target(node.target)

    for stmt in stmts:
        stmt.visit(Collect())
    return names


def _keyword(call: "cst.Call", name: str) -> Optional["cst.Arg"]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _backward_args(call: "cst.Call") -> Optional[Tuple[Optional["cst.BaseExpression"], Optional["cst.BaseExpression"]]]:
    """(gradient, retain_graph) of ``loss.backward(...)``; None where it asks for more
    (``create_graph``, ``inputs``, unknown arguments) than the rewrite keeps."""
    gradient = retain = None
    for i, arg in enumerate(call.args):
        if arg.star:
            return None
        key = arg.keyword.value if arg.keyword is not None else ("gradient", "retain_graph")[i] if i < 2 else None
        if key == "gradient":
            gradient = arg.value
        elif key == "retain_graph":
            retain = arg.value
        else:
            return None
    return gradient, retain


def _expression(text: str) -> "cst.BaseExpression":
    return cst.parse_expression(text)


def _line(text: str, like: "cst.BaseStatement") -> "cst.BaseStatement":
    stmt = cst.parse_statement(text + "\n")
    if isinstance(like, cst.SimpleStatementLine) and isinstance(stmt, cst.SimpleStatementLine):
        stmt = stmt.with_changes(leading_lines=like.leading_lines)
    return stmt


class Plan:
    """One step-order rewrite of one block: what to build and how to say it."""

    def __init__(self, block: Block, step: int, backward: int, kind: str, title: str, owner: str = "") -> None:
        self.block, self.step, self.backward, self.kind, self.title, self.owner = \
            block, step, backward, kind, title, owner
        self.at: Optional[int] = None  # the step's line, where the block is one around the step's
        self.taken: List["cst.SimpleStatementLine"] = []  # the backward statements whose gradients are taken early
        self.copies: List[int] = []  # recompute (``fixes.step_recompute``): the statements run again
        self.before: Optional[int] = None  # recompute: the statement of the block the copies go before
        self.parts: List["Plan"] = []  # recompute: one plan per later backward, built together
        self.move = False  # recompute: the statements moved after the step, not copied


def wraps_around(where: Positions, line: int) -> List[Plan]:
    """The mutation-allowed wraps around the statement at ``line`` (the call, in an outer
    function, that leads to the step: the forward may be there), innermost first."""
    best: Optional[Tuple["cst.BaseStatement", Block]] = None
    for node in where.ranges:
        if not isinstance(node, cst.IndentedBlock):
            continue
        for stmt in node.body:
            rng = where.ranges[stmt]
            if rng.start.line <= line <= rng.end.line and _call_of(stmt) is not None:
                if best is None or where.ranges[stmt].start.line >= where.ranges[best[0]].start.line:
                    best = (stmt, node)
    if best is None:
        return []
    stmt, block = best
    return _wraps(where, block, stmt, cast("cst.Call", _call_of(stmt)).func)


def _later_backwards(body: Sequence["cst.BaseStatement"], i: int) -> List[Tuple[int, "cst.SimpleStatementLine"]]:
    """The ``loss.backward(...)`` statements after ``body[i]``: (index of the top-level statement
    that holds it, the statement), in order; inside ``if``/``with``/``try`` too, never inside a
    loop or a definition (those run another number of times)."""
    out: List[Tuple[int, "cst.SimpleStatementLine"]] = []

    def walk(stmt: "cst.BaseStatement", top: int) -> None:
        if _is_backward(stmt) is not None:
            out.append((top, cast("cst.SimpleStatementLine", stmt)))
        elif isinstance(stmt, (cst.If, cst.With, cst.Try)):
            blocks = [stmt.body]
            orelse = getattr(stmt, "orelse", None)
            while orelse is not None:
                blocks.append(orelse.body)
                orelse = getattr(orelse, "orelse", None)
            blocks += [h.body for h in getattr(stmt, "handlers", ())]
            final = getattr(stmt, "finalbody", None)
            if final is not None:
                blocks.append(final.body)
            for block in blocks:
                for inner in getattr(block, "body", ()):
                    if isinstance(inner, cst.BaseStatement):
                        walk(inner, top)

    for k in range(i + 1, len(body)):
        walk(body[k], k)
    return out


def plans(where: Positions, step_line: Optional[int]) -> List[Plan]:
    """Every step-order rewrite in the file, those of the step at ``step_line`` first: for each
    step-like statement, the gradients of every later backward of its block taken before it;
    then the step moved after the first backward of its block."""
    found: List[Tuple[int, Plan]] = []
    for node in where.ranges:
        if not isinstance(node, (cst.IndentedBlock, cst.Module)):
            continue
        body = list(node.body)
        for i, stmt in enumerate(body):
            rng = where.ranges[stmt]
            here = step_line is not None and rng.start.line <= step_line <= rng.end.line
            optimizer = _is_step(stmt)
            if optimizer is None and here and _call_of(stmt) is not None:
                optimizer = cast("cst.Call", _call_of(stmt)).func  # the call of a helper that steps
            if optimizer is None:
                continue
            first = 0 if here else 1
            taken = []
            for top, line in _later_backwards(body, i):
                call = cast("cst.Call", _is_backward(line))
                loss = cast("cst.Attribute", call.func).value
                bound = _bound_names(body[i + 1:top + 1])
                if _backward_args(call) is not None and _root(loss) not in bound and code(loss) not in bound:
                    taken.append(line)
            if taken:
                losses = ", ".join(dict.fromkeys(f"`{code(cast('cst.Attribute', cast('cst.Call', _is_backward(t)).func).value)}`"
                                                 for t in taken))
                plan = Plan(node, i, i, "grads-before-step", (
                    f"take the gradients of {losses} before `{_step_text(stmt)}` and add them "
                    f"to `.grad` where their `backward()` was"))
                plan.taken = taken
                found.append((first * 3, plan))
            found += [(first * 3 + 1, plan) for plan in _wraps(where, node, stmt, optimizer)]
            j = next((k for k in range(i + 1, len(body)) if _is_backward(body[k]) is not None), None)
            if j is None:
                continue
            call = cast("cst.Call", _is_backward(body[j]))
            loss = cast("cst.Attribute", call.func).value
            between = body[i + 1:j]
            if any(_is_step(s) is not None and code(cast("cst.BaseExpression", _is_step(s))) == code(optimizer)
                   for s in between):
                continue  # the same optimizer steps again before the backward
            owner = next((_is_step(s) for s in body[j + 1:] if _is_step(s) is not None), None)
            if _backward_args(call) is not None and owner is not None and code(owner) != code(optimizer) \
                    and _keyword(call, "inputs") is None:
                found.append((first * 3 + 2, Plan(node, i, j, "reorder", (
                    f"move `{_step_text(stmt)}` after `{code(loss)}.backward()`, which only "
                    f"fills the gradients of `{code(owner)}`'s parameters"), code(owner))))
    # By the step's line; a step's wraps innermost first (stable sort: as ``_wraps`` built them).
    found.sort(key=lambda p: (p[0], p[1].at if p[1].at is not None
                              else where.ranges[_body(p[1].block)[p[1].step]].start.line))
    out, wrapped = [], set()
    for _, plan in found:
        if plan.kind == "mutation-allowed":
            if id(plan.block) in wrapped:
                continue  # one wrap per block, whichever step asked for it
            wrapped.add(id(plan.block))
        out.append(plan)
    return out


MUTATION_ALLOWED = "torch.autograd.graph.allow_mutation_on_saved_tensors()"


def _wraps(where: Positions, block: Block, stmt: "cst.BaseStatement", optimizer: "cst.BaseExpression") -> List[Plan]:
    """The step's block, and each block around it up to its function's body, run under
    ``allow_mutation_on_saved_tensors()`` (PyTorch keeps the original of a saved tensor that is
    changed in place, for the backward): the block must hold the forward and the backward too."""
    out: List[Plan] = []
    node: Optional[cst.CSTNode] = block
    inner: Optional["cst.CSTNode"] = stmt
    wrapped = _under_wrap(where, block)  # an earlier round's wrap: only the blocks around it are left
    while isinstance(node, cst.IndentedBlock):
        body = list(node.body)
        holder = next((k for k, s in enumerate(body) if s is inner), None)
        if holder is None:
            break
        start = 1 if _docstring(body[0]) else 0
        if wrapped is not None and any(s is wrapped for s in body):
            wrapped = None  # this block holds the wrap: it and the blocks around it are offered
        if start < len(body) and wrapped is None and not _is_wrap(body[start:]):
            out.append(Plan(node, holder, holder, "mutation-allowed", (
                f"run the block of line {where.ranges[body[start]].start.line} to "
                f"{where.ranges[body[-1]].end.line} under `{MUTATION_ALLOWED}`, so that "
                f"`{_step_text(stmt)}` changes a copy of what the graph saved")))
            out[-1].owner = str(start)
            out[-1].at = where.ranges[stmt].start.line
        owner = where.parents.get(node)
        if owner is None or isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
            break
        inner = owner
        while inner is not None and not isinstance(where.parents.get(inner), (cst.IndentedBlock, cst.Module)):
            inner = where.parents.get(inner)
        node = where.parents.get(inner) if inner is not None else None
        # Around a loop too (after the blocks inside it): a graph of one iteration used in the
        # next (``retain_graph=True`` across steps, a hidden state carried on) needs its saved
        # originals kept across the iterations, so the wrap must hold the loop.
    return out


def _is_wrap(stmts: Sequence["cst.BaseStatement"]) -> bool:
    """The statements are one ``with allow_mutation_on_saved_tensors():`` (a block already wrapped)."""
    return len(stmts) == 1 and isinstance(stmts[0], cst.With) and any(
        code(item.item) == MUTATION_ALLOWED for item in stmts[0].items)


def _under_wrap(where: Positions, node: "cst.CSTNode") -> Optional["cst.With"]:
    """The outermost ``with allow_mutation_on_saved_tensors():`` around ``node`` in its function
    (a wrap of an earlier round), if any."""
    found = None
    current = where.parents.get(node)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.ClassDef)):
        if isinstance(current, cst.With) and _is_wrap([current]):
            found = current
        current = where.parents.get(current)
    return found


class _Unwrap(cst.CSTTransformer):
    """Every ``with allow_mutation_on_saved_tensors():`` replaced by its statements (a wrap around
    them takes its place: the contexts cannot be nested); not inside nested definitions."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0

    def visit_FunctionDef(self, node: "cst.FunctionDef") -> bool:
        return False

    def visit_ClassDef(self, node: "cst.ClassDef") -> bool:
        return False

    def leave_With(self, original: "cst.With", updated: "cst.With") -> "Union[cst.With, cst.FlattenSentinel[cst.BaseStatement]]":
        if len(updated.items) != 1 or code(updated.items[0].item) != MUTATION_ALLOWED \
                or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        inner = list(updated.body.body)
        if inner and isinstance(inner[0], (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            inner[0] = inner[0].with_changes(leading_lines=list(updated.leading_lines) + list(inner[0].leading_lines))
        return cst.FlattenSentinel(inner)


def _unwrapped(stmts: Sequence["cst.BaseStatement"]) -> List["cst.BaseStatement"]:
    """The statements with every mutation-allowed wrap in them replaced by what it holds."""
    return [x for s in stmts for x in _flat(s.visit(_Unwrap()))]


def _flat(node: "Union[cst.BaseStatement, cst.FlattenSentinel[cst.BaseStatement], cst.RemovalSentinel]") -> List["cst.BaseStatement"]:
    if isinstance(node, cst.FlattenSentinel):
        return list(node.nodes)
    if isinstance(node, cst.RemovalSentinel):
        return []
    return [node]


def _docstring(stmt: "cst.BaseStatement") -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _step_text(stmt: "cst.BaseStatement") -> str:
    """``opt.step()``, ``update_params()``: the step's call, its arguments left out."""
    call = cast("cst.Call", _call_of(stmt))
    return f"{code(call.func)}()"


def fix(where: Positions, plan: Plan) -> Fix:
    """The plan as a fix of its block (and, for the gradients taken early, the helper functions
    added to the module after its imports)."""
    body = _body(plan.block)
    step, back = body[plan.step], body[plan.backward]
    if plan.kind == "mutation-allowed":
        start = int(plan.owner)

        def wrap(node: "cst.CSTNode") -> "cst.CSTNode":
            now = list(cast("cst.IndentedBlock", node).body)
            # A wrap inside this block, chosen for another conflict of the same attempt (or made
            # in an earlier round), is taken out: this one holds it, and they cannot be nested.
            flat_now, flat_body = _unwrapped(now), _unwrapped(body)
            if len(flat_now) != len(flat_body) or not all(a.deep_equals(b) for a, b in zip(flat_now, flat_body)):
                return node
            if _is_wrap(flat_now[start:]):
                return node
            block = cast("cst.IndentedBlock", node).with_changes(body=flat_now)
            return wrap_in_with(block, start, len(block.body), MUTATION_ALLOWED)

        torch_import = Fix(where.module, lambda m: ensure_import(cast("cst.Module", m), "torch"), "import torch",
                           order=-1)
        return Fix(plan.block, wrap, plan.title, order=1, also=(torch_import,))
    if plan.kind == "reorder":
        call = cast("cst.Call", _is_backward(back))
        inputs = cst.Arg(value=_expression(f'[p for group in {plan.owner}.param_groups for p in group["params"]]'),
                         keyword=cst.Name("inputs"),
                         equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""),
                                               whitespace_after=cst.SimpleWhitespace("")))
        args = list(call.args)
        if args:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        new_call = call.with_changes(args=args + [inputs])
        new_back = back.with_changes(body=[cast("cst.SimpleStatementLine", back).body[0].with_changes(value=new_call)])
        new_body = body[:plan.step] + body[plan.step + 1:plan.backward] + [new_back, step] + body[plan.backward + 1:]
        return Fix(plan.block, _replace_body(body, new_body), plan.title, order=1)
    takes: List["cst.BaseStatement"] = []
    replace = {}
    for n, line in enumerate(plan.taken, 1):
        call = cast("cst.Call", _is_backward(line))
        gradient, retain = cast("Tuple[Optional[cst.BaseExpression], Optional[cst.BaseExpression]]",
                                _backward_args(call))
        extra = f", {code(gradient)}" if gradient is not None else ""
        extra += f", retain_graph={code(retain)}" if retain is not None else ""
        name = PAIRS if n == 1 else f"{PAIRS}_{n}"
        takes.append(_line(f"{name} = {GRADS_NOW}({code(cast('cst.Attribute', call.func).value)}{extra})",
                           step if n == 1 else line))
        small = line.body[0]
        replace[id(small)] = cast("cst.Expr", small).with_changes(value=_expression(f"{ACCUMULATE}({name})"))
    if takes and isinstance(takes[0], cst.SimpleStatementLine):
        takes[1:] = [t.with_changes(leading_lines=[]) for t in takes[1:]]

    class Swap(cst.CSTTransformer):
        def leave_Expr(self, original: "cst.Expr", updated: "cst.Expr") -> "cst.Expr":
            return replace.get(id(original), updated)

    later = [cast("cst.BaseStatement", s.visit(Swap())) for s in body[plan.step + 1:]]
    new_body = body[:plan.step] + takes + [step.with_changes(leading_lines=[])] + later
    helpers = Fix(where.module, _add_helpers, "add the helpers", order=0)
    return Fix(plan.block, _replace_body(body, new_body), plan.title, order=1, also=(helpers,))


def _body(block: Block) -> List["cst.BaseStatement"]:
    return list(cast("cst.IndentedBlock", block).body)


def _replace_body(old: List["cst.BaseStatement"],
                  new: List["cst.BaseStatement"]) -> "Callable[[cst.CSTNode], cst.CSTNode]":
    def build(node: "cst.CSTNode") -> "cst.CSTNode":
        body = list(cast("cst.IndentedBlock", node).body)
        if len(body) != len(old) or not all(a.deep_equals(b) for a, b in zip(body, old)):
            return node  # the block changed under another fix: leave it
        return node.with_changes(body=new)
    return build


def _add_helpers(node: "cst.CSTNode") -> "cst.CSTNode":
    module = cast("cst.Module", node)
    if any(isinstance(s, cst.FunctionDef) and s.name.value == GRADS_NOW for s in module.body):
        return module
    helpers = list(cst.parse_module(HELPERS.lstrip("\n")).body)
    body = list(module.body)
    at = 0
    for i, stmt in enumerate(body):
        if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            at = i + 1
        elif i == 0 and isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Expr) \
                and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
            at = 1  # the docstring
        elif not (isinstance(stmt, cst.If) and "TYPE_CHECKING" in code(stmt.test)):
            break
    helpers[0] = helpers[0].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])
    if at < len(body):
        body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()] +
                                         [ln for ln in body[at].leading_lines if ln.comment is not None])
    return module.with_changes(body=body[:at] + helpers + body[at:])
