"""IPF005 leaf update: wrap in-place updates of tensors that require grad in ``torch.no_grad()``.

The rule's documentation is its class docstring (``inplacefix rule CODE`` prints it)."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple

from codemod import torch_api
from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import FUNCTIONS, bound_names, subscript_base
from codemod.findings import Fix, Status
from codemod.fixes import _cst as cst
from codemod.fixes.edits import clone_after, clone_of, copy_leaf, ensure_import, fix_title, insert_before, wrap_run_in_with
from codemod.fixes.site import FixSite, Plan
from codemod.rules.augmented_assignment import build_assignment
from codemod.rules.base import Rule, calls_trailing_underscore, may_write_in_place, twin_keeps_result
from codemod.rules.safety import assess
from codemod.rules.subscript_assignment import reads

_LEAF_ERROR = "PyTorch raises \"a leaf Variable that requires grad is being used in an in-place operation\""
_UPDATING_METHODS = set(torch_api.INPLACE_METHODS) | {"copy_", "zero_", "fill_", "normal_", "uniform_"}


class LeafUpdate(Rule):
    """Wrap in-place updates of tensors that require grad in `with torch.no_grad():`.

    ## What it does
    Finds in-place updates, with grad on, of tensors that require grad and are leaves of the
    graph: parameters and their slices (`conv.weight[:] = W`, `self.emb.weight.copy_(vectors)`,
    `layer.weight[:, pos] -= d`), manual optimizer steps over `.parameters()`
    (`p -= lr * p.grad`, `p.add_(p.grad, alpha=-lr)`), EMA and target-network updates
    (`tp.mul_(tau).add_(p, alpha=1 - tau)`), state resets, and tensors created with
    `requires_grad=True` and then updated. The fix wraps the smallest run of such statements
    (or the loop over the parameters) in `with torch.no_grad():`, re-indented, comments kept,
    adding `import torch` where the module does not import it.

    ## Why is this bad?
    PyTorch refuses it: "a leaf Variable that requires grad is being used in an in-place
    operation". Weight surgery, initialisation, manual SGD, EMA and resets mean to change the
    tensor's values outside autograd, which is what `torch.no_grad()` says. Rewriting the update
    out of place instead (`p = p - lr * p.grad`) only rebinds a name: the parameter never moves.

    ## Example
    ```python
    for p in model.parameters():
        p -= lr * p.grad
    ```
    Use instead:
    ```python
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad
    ```

    ## Fix safety
    Safe where the tensor is known to require grad (an `nn.Parameter`, a torch module's
    `.weight`/`.bias`, a loop over `.parameters()`, a tensor made with `requires_grad=True`):
    the original cannot run at all. Unsafe where it may not (`.weight` of an object the analysis
    cannot name): if it does not require grad and the new value is differentiable, `no_grad`
    would cut that gradient (`may-not-require-grad`). Where a tensor made with
    `requires_grad=True` is read again after the update by the computation that is
    differentiated (`leaf-read-after`), the code means "update a copy": the fix, unsafe, is
    the update written on a copy, `c2 = c.index_copy(...)` (`c2 = c + v` for `c += v`,
    `c2 = c.clone()` before `c2[i] = v`), and the later uses on `c2`, except where `c` is
    returned (the leaf, with its `.grad`); where it is not, the name is rebound instead
    (`c = c + v`: the same copy). In straight-line code of one function only (no fix where `c`
    is aliased, rebound or used in a nested scope after the update). Later reads of the leaf's
    state only (`c.grad`, `c.detach()`, `c.data`, `c.shape`, `c.size()`, `c.item()`) are no
    such computation: they see the same values under both meanings, and a copy has no `.grad`
    of its own, so a manual step (`c -= lr * c.grad; c.grad.zero_()`) gets the wrap, safe.
    Where nothing can observe the leaf's own gradient (a start value: `acc = torch.zeros(n,
    requires_grad=True)` bound once, outside any `with`, then used only in computations: indexed,
    an operand, a tensor method's receiver, a torch function's argument; never returned, kept,
    handed to the file's code, an optimizer or `torch.autograd`, its `.grad` or hooks never
    touched), the two meanings differ only in whether the written values stay differentiable,
    which the copy keeps: the fix clones it where it is made (`acc = acc.clone()`), safe, in
    loops too.
    A parameter reached through modules the file builds (`line.layer.weight[0, 0] = v`,
    `net.blocks[i].proj.weight`, `getattr(self.rnn, f'bias_hh_l{i}').chunk(4)[1].fill_(1)`,
    `for head, s in zip(self.heads, strides): head.bias[0] += s` over a `ModuleList`) is
    proven only where every way into the write's function is seen with grad on, and its wrap is
    safe only where the new value carries no gradient (numbers, constants, gradients): otherwise
    it is unsafe (`value-requires-grad`: a later backward may have meant to reach what the value
    was computed from). A function handed on (`self.apply(self._init_weights)`) proves nothing.
    The output of a module a forward hook makes a leaf that requires grad (`output.requires_grad_(True)`
    on a frozen embedding, `enable_input_require_grads`; an attribution hook returning its own leaf; also bound on
    a branch no other binding follows, `if x is None: x = self.tok(ids)`) is part of the computation: its update is
    never wrapped in `no_grad`, which would cut the gradients of the values written; the fix updates a copy (`x = x * s`, `x = x.clone()`
    before `x[mask] = v`), safe where no other holder of the tensor is seen, unsafe otherwise
    (the reason given), manual (`hooked-output`) where no copy can be written.
    Updates under `no_grad`, through `.data`, or in optimizer code are left alone.
    """

    CODE = "IPF005"
    POSSIBLE_FORM = False  # PyTorch refuses the write: proven (IPF1xx) or not known to require grad (IPF0xx)
    NAME = "leaf-update"
    HAZARD_FORM = ("where the analysis proves the tensor requires grad (an `nn.Parameter`, a torch module's "
                   "weight, a loop over `.parameters()`, a tensor made with `requires_grad=True`) and grad is "
                   "on: PyTorch refuses the write at once with \"a leaf Variable that requires grad is being "
                   "used in an in-place operation\" (no saved tensor is involved)")
    TRIGGERS = (rb"(?:[-+*/%&|^@]|\*\*|//|<<|>>)=", rb"\][\s\\]*=(?!=)", rb"[A-Za-z]\w*_\s*\(")

    def __init__(self, model) -> None:  # type: ignore[no-untyped-def]
        super().__init__(model)
        self._runs: Dict[ast.AST, Tuple[ast.stmt, int, Plan]] = {}
        self._copies: Dict[Tuple[ast.AST, str], Optional[Plan]] = {}  # (function, name) -> its copy fix
        self._clones: Dict[ast.AST, Plan] = {}  # a start value's creation -> its clone fix

    @classmethod
    def could_start(cls, node: ast.AST) -> bool:
        return may_write_in_place(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check(node, node.target)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self._check(node, target)

    def visit_Call(self, node: ast.Call) -> None:
        target = _updated(node, self.model.torch_name(node.func)) or self._helper_target(node)
        if target is not None and not isinstance(self.model.parent(node), ast.Attribute):
            self._check(node, target)  # a chain `tp.mul_(t).add_(p)` is reported once, at its end

    def _helper_target(self, call: ast.Call) -> Optional[ast.expr]:
        """``truncated_normal_(w)`` -> ``w``: a helper of this module named like PyTorch's in-place
        functions, which fills its first argument with grad on. Helpers defined elsewhere are not
        followed (timm's ``trunc_normal_``, torch's ``nn.init``: they turn grad off themselves),
        nor ones that turn grad off around their work, nor ones whose writes into it are not seen
        (through ``.data``, which autograd does not see: torch_geometric's ``reset_bias_``)."""
        func = call.func
        if not (isinstance(func, ast.Name) and calls_trailing_underscore(call) and call.args
                and not isinstance(call.args[0], ast.Starred)):
            return None
        defs = {s.name: s for s in self.model.module.body if isinstance(s, FUNCTIONS)}
        helper = defs.get(func.id)
        if helper is None or self._turns_grad_off(helper, defs, set()):
            return None
        summary = self.model.summaries.of_function(helper)
        if summary is None or 0 not in summary.mutates:
            return None  # no in-place write into it seen (`value.data.uniform_()`: outside autograd)
        return call.args[0]

    def _turns_grad_off(self, func: ast.AST, defs: Dict[str, ast.AST], seen: set) -> bool:  # type: ignore[type-arg]
        """``func`` (or a function of this module it calls) turns grad off itself."""
        if func in seen:
            return False
        seen.add(func)
        body = getattr(func, "body", [])
        if body and self.model.intended_reason(body[0], None):
            return True  # decorated with no_grad, an optimizer's method...
        for node in self.model.walk(func):
            if isinstance(node, (ast.With, ast.AsyncWith)) and self.model.grad.with_grad_state(node) is False:
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defs \
                    and self._turns_grad_off(defs[node.func.id], defs, seen):
                return True
        return False

    # ------------------------------------------------------------------ the decision
    def _check(self, node: ast.AST, target: ast.expr) -> None:
        stmt = self.model.statement_of(node)
        origin = self.model.leaves.origin(target, stmt)
        if origin is None or self.model.intended_reason(node, target):
            return  # not a leaf that requires grad, or grad is off there / meant in place
        message = f"In-place update of {origin.what} with grad on"
        base = subscript_base(target)
        if origin.hooked:
            _report_hooked(self, node, stmt, base, message, origin.known)
            return
        if origin.fresh and isinstance(base, ast.Name):
            key = (self.model.owner(base), base.id)
            if key in self._copies or self.model.leaves.read_by_computation(base, stmt):
                start = self.model.start_values.creation(base)  # type: ignore[arg-type]
                if start is not None:  # nothing observes the leaf's gradient: clone it where it is made
                    plan = self._clones.get(start) or self._clones.setdefault(start, _clone_plan(self.source, start, base.id))
                    self.report(node, message, Status.SAFE, None, plan, hazard=_LEAF_ERROR)
                    return
                if key not in self._copies:
                    self._copies[key] = _copy_plan(self, stmt, base)  # type: ignore[arg-type]
                copy = self._copies[key]
                status = Status.MANUAL if copy is None else Status.UNSAFE
                self.report(node, message, status, "leaf-read-after", copy, hazard=_LEAF_ERROR)
                return
        status, reason = (Status.SAFE, None) if origin.known else (Status.UNSAFE, "may-not-require-grad")
        # issue 23's meaning rule, for the parameters reached through the file's modules (the
        # other known leaves keep their policy: the original cannot run at all; the lead decides)
        if origin.known and origin.chained and not all(_carries_no_grad(self.model, v) for v in _new_values(node) if v is not target):
            status, reason = Status.UNSAFE, "value-requires-grad"
        plan = self._wrap_plan(stmt, base, origin.known)
        self.report(node, message, status, reason, plan, hazard=_LEAF_ERROR if origin.known else None)

    # -------------------------------------------------------------------- the fix
    def _wrap_plan(self, stmt: ast.AST, base: ast.expr, known: bool) -> Optional[Plan]:
        """One plan per run of consecutive leaf updates of one tier (shared by their findings):
        a safe wrap never takes in an update that may not need it, nor the reverse."""
        first = self._outermost(stmt, base)
        found = self._runs.get(first)
        if found is not None:
            return found[2]
        run = self._run_from(first, known)
        context, needs_import = self._no_grad_expression()
        count = len(run)
        start: ast.stmt = run[0]
        kind = "SimpleStatementLine" if not _compound(start) else type(start).__name__

        def make(node: cst.CSTNode, site: FixSite) -> Optional[Fix]:
            block, index = site.block(node)  # type: ignore[arg-type]
            run = list(block.body[index:index + count])
            also: Tuple[Fix, ...] = ()
            if needs_import:
                module = site.module
                also = (Fix(module, lambda m: ensure_import(m, "torch"), "Add `import torch`", order=-1),)
            return Fix(block, lambda b: wrap_run_in_with(b, run, context, index),
                       f"Wrap in `with {context}:`", order=index, also=also)

        plan = Plan((start.lineno, self.source.char_column(start.lineno, start.col_offset)), kind, make,
                    whole_module=needs_import)
        for s in run:
            self._runs[s] = (start, count, plan)
        return plan

    def _outermost(self, stmt: ast.AST, base: ast.expr) -> ast.stmt:
        """The loop over the parameters around ``stmt`` when the leaf is its variable, else ``stmt``."""
        parent = self.model.parent(stmt)
        if isinstance(parent, (ast.For, ast.AsyncFor)) and isinstance(base, ast.Name) \
                and any(s is stmt for s in parent.body) and base.id in bound_names(parent.target):
            return parent
        return stmt  # type: ignore[return-value]

    def _run_from(self, stmt: ast.stmt, known: bool) -> List[ast.stmt]:
        """``stmt`` and the leaf updates right before and after it in its block."""
        block = _block_of(self.model.parent(stmt), stmt)
        if block is None:
            return [stmt]
        i = next(k for k, s in enumerate(block) if s is stmt)
        lo = hi = i
        while lo > 0 and self._updates_a_leaf(block[lo - 1], known):
            lo -= 1
        while hi + 1 < len(block) and self._updates_a_leaf(block[hi + 1], known):
            hi += 1
        return block[lo:hi + 1]

    def _updates_a_leaf(self, stmt: ast.stmt, known: bool) -> bool:
        """``stmt`` is an update of a leaf whose origin is ``known`` (or not), fixed by a wrap."""
        node: Optional[ast.AST] = None
        target: Optional[ast.expr] = None
        if isinstance(stmt, ast.AugAssign):
            node, target = stmt, stmt.target
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Subscript):
            node, target = stmt, stmt.targets[0]
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            node, target = stmt.value, _updated(stmt.value, self.model.torch_name(stmt.value.func))
        if node is None or target is None:
            return False
        origin = self.model.leaves.origin(target, stmt)
        if origin is None or origin.known != known or origin.hooked or self.model.intended_reason(node, target):
            return False
        base = subscript_base(target)
        return not (origin.fresh and isinstance(base, ast.Name)  # an "update a copy" case: not wrapped
                    and ((self.model.owner(base), base.id) in self._copies
                         or self.model.leaves.read_by_computation(base, stmt)))

    def _no_grad_expression(self) -> Tuple[str, bool]:
        """(how this module spells ``torch.no_grad()``, whether ``import torch`` must be added)."""
        imports = self.model.names.module_names()[0]
        for name, qualified in imports.items():
            if "torch" in qualified:
                return f"{name}.no_grad()", False
        return "torch.no_grad()", True


def _copy_plan(rule: "LeafUpdate", stmt: ast.stmt, name: ast.Name, keep_returned: bool = True) -> Optional[Plan]:
    """"Update a copy": the update written on a copy (:func:`_copy_form`), and every later use
    of ``c`` in the function on the copy, except where ``c`` is returned (the leaf, with its
    ``.grad``). Only in straight-line code: the update is a statement of the function's own
    body, ``c`` is bound once before it, and nothing after it rebinds or aliases ``c``
    (``d = c``) or reads it from a nested scope."""
    owner = rule.model.owner(name)
    body = getattr(owner, "body", None)
    if not isinstance(owner, FUNCTIONS) or not isinstance(body, list) or not any(s is stmt for s in body):
        return None
    index = next(k for k, s in enumerate(body) if s is stmt)
    uses: List[ast.Name] = []
    form = _copy_form(stmt, name.id)
    if form is None:
        return None  # no twin to write (`c.zero_()`, a helper): a clone would be rewritten again
    if any(_copy_form(s, name.id) in ("twin", "operator") for s in body[index + 1:]):
        return None  # another update: in place on the copy, a second run would rewrite it again
    for s in body[index:]:
        for node in ast.walk(s):
            if isinstance(node, (*FUNCTIONS, ast.Lambda, ast.ClassDef, ast.comprehension)):
                return None  # scopes of their own: not followed
            if isinstance(node, ast.Name) and node.id == name.id:
                own = form == "operator" and node is getattr(stmt, "target", None)  # `c += v` itself
                if not own and (not isinstance(node.ctx, ast.Load) or isinstance(rule.model.parent(node), ast.Assign)):
                    return None
                uses.append(node)
    stores = [n for s in body[:index] for n in ast.walk(s)
              if isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load)]
    if len(stores) != 1 or any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in ast.walk(owner)):
        return None
    uses.sort(key=lambda n: (n.lineno, n.col_offset))
    inside = {id(n) for n in ast.walk(stmt)}
    renamed = [not (form != "clone" and id(n) in inside) and not (keep_returned and rule.model.leaves.returned(n))
               for n in uses]  # (a hooked output returned is the computation's value: the copy)
    original = name.id
    kept = any(not flag and id(n) not in inside for n, flag in zip(uses, renamed))
    # A fresh name only where the leaf itself is used again (returned, with its .grad);
    # otherwise rebinding the name is the same copy, with the smallest diff (`w = w + 1`).
    copy = rule.model.fresh_name(f"{name.id}2") if kept else original
    written = {"twin": lambda: f"{original}.{_twin_chain(stmt)}",
               "operator": lambda: f"{original} {_OPERATORS[type(stmt.op)]} ...",  # type: ignore[attr-defined]
               "clone": lambda: f"{original}.clone()"}[form]()
    title = f"Update a copy: `{copy} = {written}`, then `{copy}` from here on"

    def make(node: cst.CSTNode, site: FixSite) -> Optional[Fix]:
        block, at = site.block(node)  # type: ignore[arg-type]
        return Fix(block, lambda b: copy_leaf(b, at, original, copy, renamed, form), title)  # type: ignore[arg-type]

    start = stmt
    kind = "SimpleStatementLine" if not _compound(start) else type(start).__name__
    return Plan((start.lineno, rule.source.char_column(start.lineno, start.col_offset)), kind, make)


def _report_hooked(rule: "LeafUpdate", node: ast.AST, stmt: ast.stmt, base: ast.expr, message: str, known: bool) -> None:
    """A module's output a forward hook made a leaf (``enable_input_require_grads``, an attribution's
    replacement) is part of the computation: the update is meant as on any tensor of the graph, so
    it is written out of place (``x = x * s``; ``x = x.clone()`` before ``x[mask] = v``; the copy
    plan where the function's later reads follow it): gradients reach the leaf through the copy,
    and the values written keep theirs. A ``no_grad`` wrap would cut them: never offered. Safe
    where the rewrite IPF001/IPF004 would make is (no other holder of the tensor is seen)."""
    subscript = isinstance(node, ast.Assign) and node is stmt and len(node.targets) == 1
    if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        verdict = assess(rule.model, node, node.target, operands=[node.value], creates_binding=False,
                         known_tensor=True, leaf_rule=True)
    else:
        verdict = assess(rule.model, node, base, require_known=True, dtype_neutral=subscript, known_tensor=True,
                         leaf_rule=True)
    status, reason = (Status.SAFE, None) if known else (Status.UNSAFE, "may-not-require-grad")
    if verdict.status is not Status.SAFE:
        status, reason = Status.UNSAFE, reason or verdict.reason or "hooked-output"
    rewritable = verdict.status in (Status.SAFE, Status.UNSAFE)
    plan: Optional[Plan] = None
    if rewritable and isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        also = verdict.also_rebind  # `x *= s` -> `x = x * s` (`x = y = x * s` where `y` names it too)

        def make(aug: cst.CSTNode, site: FixSite) -> Fix:
            assert isinstance(aug, cst.AugAssign)
            return Fix(aug, lambda n: build_assignment(n, also), fix_title(build_assignment(aug, also)))

        plan = rule.plan(node, "AugAssign", make)
    if plan is None and rewritable and subscript and isinstance(base, ast.Name) \
            and not reads(node.value, base.id):  # type: ignore[attr-defined]
        key_text, rebound = base.id, verdict.also_rebind  # `x[mask] = v`: IPF004's clone first

        def make_clone(small: cst.CSTNode, site: FixSite) -> Fix:
            container, index = site.container(small)  # type: ignore[arg-type]
            clone = clone_of(key_text, rebound)
            return Fix(container, lambda c: insert_before(c, index, clone, None),  # type: ignore[arg-type]
                       fix_title(clone, "Insert"), order=index)

        plan = rule.plan(stmt, "BaseSmallStatement", make_clone)
    key = (rule.model.owner(base), base.id) if isinstance(base, ast.Name) else None
    if plan is None and rewritable and not verdict.also_rebind and key is not None:
        if key not in rule._copies:  # `x.mul_(s)`: the copy plan's twin (`x = x.mul(s)`), later reads on it
            rule._copies[key] = _copy_plan(rule, stmt, base, keep_returned=False)  # type: ignore[arg-type]
        plan = rule._copies[key]
    if plan is None:
        rule.report(node, message, Status.MANUAL, "hooked-output", None, hazard=_LEAF_ERROR if known else None)
        return
    rule.report(node, message, status, reason, plan, hazard=_LEAF_ERROR if known else None)


def _carries_no_grad(model, value: ast.expr) -> bool:  # type: ignore[no-untyped-def]
    """The new value cannot require grad (numbers, constants, detached values) or is built
    from gradients only (``lr * p.grad``: a gradient requires grad only under
    ``create_graph=True``, which the module never passes): a ``no_grad`` wrap cuts nothing
    the program differentiates (issue 23's meaning rule)."""
    if model.kind(value) is Kind.SCALAR or model.hazards.constants.constant(value):
        return True
    if "create_graph" in model.source.text:
        return False
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute) and node.attr == "grad":
            continue
        if isinstance(node, (ast.Name, ast.Attribute)) and not _inside_grad(model, node, value) \
                and isinstance(node.ctx, ast.Load) and not _harmless(model, node):
            return False
        if isinstance(node, ast.Call) and not _harmless(model, node.func):
            return False
    return True


def _inside_grad(model, node: ast.AST, top: ast.expr) -> bool:  # type: ignore[no-untyped-def]
    """``node`` is (part of) the receiver of a ``.grad`` read within ``top``."""
    while node is not top:
        parent = model.parent(node)
        if isinstance(parent, ast.Attribute) and parent.attr == "grad":
            return True
        if parent is None:
            return False
        node = parent
    return False


def _harmless(model, node: ast.expr) -> bool:  # type: ignore[no-untyped-def]
    """A number, a size, a torch function's name: nothing that can require grad itself."""
    parent = model.parent(node)
    if isinstance(parent, ast.Call) and parent.func is node:
        return model.torch_name(node) is not None
    if isinstance(parent, ast.Attribute):
        return True  # a receiver: its attribute decides
    return model.kind(node) is Kind.SCALAR or model.hazards.constants.constant(node)


def _new_values(node: ast.AST) -> List[ast.expr]:
    """What the update stores: ``v`` of ``w[i] = v`` / ``w -= v``; the arguments of the in-place
    calls of ``w.mul_(a).add_(b, alpha=c)``, the other arguments of ``torch.relu_(w)``."""
    if isinstance(node, (ast.Assign, ast.AugAssign)):
        return [node.value]
    values: List[ast.expr] = []
    call = node
    while isinstance(call, ast.Call):
        values.extend(a.value if isinstance(a, ast.Starred) else a for a in call.args)
        values.extend(k.value for k in call.keywords)
        func = call.func
        call = func.value if isinstance(func, ast.Attribute) and func.attr in _UPDATING_METHODS else None  # type: ignore[assignment]
    return values


def _updated(call: ast.Call, torch_name: Optional[str]) -> Optional[ast.expr]:
    """The tensor an in-place call writes: ``x.add_(...)`` -> ``x``; ``torch.relu_(x)`` -> ``x``;
    helpers are :meth:`LeafUpdate._helper_target`'s."""
    func = call.func
    if torch_name is not None:
        if torch_name in torch_api.INPLACE_FUNCTIONS and call.args:
            return call.args[0]
        return None

    if isinstance(func, ast.Attribute) and func.attr in _UPDATING_METHODS:
        receiver = func.value
        while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) \
                and receiver.func.attr in _UPDATING_METHODS:
            receiver = receiver.func.value  # tp.mul_(tau).add_(p): the chain writes tp
        return receiver
    return None



_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/", ast.Mod: "%",
              ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^",
              ast.BitAnd: "&", ast.FloorDiv: "//"}


def _copy_form(stmt: ast.stmt, name: str) -> Optional[str]:
    """How the update of ``name`` at ``stmt`` is written on a copy: ``twin`` for a statement
    ``c.index_copy_(...)`` (a chain of them, every method with an out-of-place twin: ``c2 =
    c.index_copy(...)``), ``operator`` for ``c += v`` (``c2 = c + v``), ``clone`` for a write into
    part of it (``c2 = c.clone()`` before ``c2[i] = v``); None for anything else."""
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
        return "operator"
    target = stmt.target if isinstance(stmt, ast.AugAssign) else stmt.targets[0] if isinstance(stmt, ast.Assign) else None
    if isinstance(target, ast.Subscript):
        return "clone"
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
            and torch_api.INPLACE_METHODS.get(call.func.attr) and twin_keeps_result(call):
        call = call.func.value
    if call is not getattr(stmt, "value", None) and isinstance(call, ast.Name) and call.id == name:
        return "twin"
    return None


def _twin_chain(stmt: ast.stmt) -> str:
    """``index_copy(...)``, ``mul(...).add(...)``: the out-of-place twins of the update's chain."""
    methods: List[str] = []
    call = stmt.value  # type: ignore[attr-defined]
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
        methods.append(f"{torch_api.INPLACE_METHODS[call.func.attr]}(...)")
        call = call.func.value
    return ".".join(reversed(methods))


def _compound(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.If, ast.With, ast.AsyncWith, ast.Try,
                             *FUNCTIONS, ast.ClassDef))


def _block_of(parent: Optional[ast.AST], stmt: ast.AST) -> Optional[List[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        stmts = getattr(parent, field, None)
        if isinstance(stmts, list) and any(s is stmt for s in stmts):
            return stmts
    return None


def _clone_plan(source, creation: ast.Assign, name: str) -> Plan:  # type: ignore[no-untyped-def]
    """``c = c.clone()`` right after ``c = torch.zeros(..., requires_grad=True)``: every write and
    read of ``c`` then works on the copy (one plan per leaf, shared by its writes)."""
    title = f"Clone the start value where it is made: `{name} = {name}.clone()`"

    def make(node: cst.CSTNode, site: FixSite) -> Optional[Fix]:
        block, at = site.block(node)  # type: ignore[arg-type]
        return Fix(block, lambda b: clone_after(b, at, name), title)  # type: ignore[arg-type]

    return Plan((creation.lineno, source.char_column(creation.lineno, creation.col_offset)), "SimpleStatementLine", make)
