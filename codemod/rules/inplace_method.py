"""IPF003 in-place methods: ``x.add_(y)`` -> ``x = x.add(y)``; ``b = x.exp_()`` -> ``b = x = x.exp()``.

The rule's documentation is its class docstring (``inplacefix rule CODE`` prints it)."""

from __future__ import annotations

import ast
from typing import cast

from codemod import torch_api
from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import subscript_base, target_key
from codemod.findings import Fix, Status
from codemod.fixes import _cst as cst
from codemod.fixes.edits import (
    code,
    fix_title,
    out_of_place_chain,
    rebind,
)
from codemod.fixes.site import Plan
from codemod.rules.base import Rule, calls_trailing_underscore, twin_keeps_result
from codemod.rules.safety import assess

# Methods without a twin that have an exact out-of-place spelling: (template, needs number arg)
_EQUIVALENTS = {"zero_": ("torch.zeros_like({x})", False), "fill_": ("torch.full_like({x}, {a})", True)}


def is_inplace_method_call(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in torch_api.INPLACE_METHODS
    )


class InplaceMethod(Rule):
    """Rewrite in-place tensor methods and functions out of place.

    ## What it does
    Finds calls of tensor methods that write their receiver (``add_``, ``exp_``,
    ``masked_fill_``, chains such as ``x.mul_(a).add_(b)``) and of torch's in-place functions
    (``torch.relu_(x)``, ``F.relu_(x)``); which names mutate, and their out-of-place twins, come
    from torch's operator schemas (``torch_api.py``). Methods that end in ``_`` without changing
    values (``requires_grad_``, ``share_memory_``) are never matched. The fix keeps every
    binding: a statement becomes ``x = x.add(y)``, an assignment ``b = x = x.exp()``, a return
    ``return x.exp()``. ``zero_()`` and ``fill_(number)`` become ``torch.zeros_like(x)`` and
    ``torch.full_like(x, number)`` where ``torch`` is imported.

    ## Why is this bad?
    A method ending in ``_`` writes into its receiver. ``b = x.exp_()`` even makes ``b`` and
    ``x`` one tensor, which ``exp`` saved for backward: the next write into either breaks
    ``backward()``.

    ## Example
    ```python
    y = x.sigmoid()
    y.mul_(2)
    ```
    Use instead:
    ```python
    y = x.sigmoid()
    y = y.mul(2)
    ```

    ## Fix safety
    As for IPF001 (dtype promotion by tensor operands, except for twins that keep self's dtype
    such as ``masked_fill``; parameters; aliases). No fix for a call nested in a larger
    expression (``nested-call``), a method without a twin (``copy_``, ``normal_``; a comparison, ``logical_not_`` or
    ``bernoulli_()`` without ``p``, whose twin computes something else: ``no-twin``),
    a name that is not local to the function (``non-local-name``), or ``nn.Parameter``
    receivers. ``torch.nn.init`` calls are skipped as intended (``nn-init``). A method called
    on a call's result that no name holds (``fea = branch(x).unsqueeze_(1)``) gets its twin,
    safe, where that result is a new tensor nobody else sees (a torch op that neither writes in
    place, views nor hands its input back; ``torch.Tensor(n)`` from sizes, not ``torch.Tensor(x)``
    of a tensor; a module of the file or torch's whose call returns a new tensor and keeps none
    of its results) and every operand is a Python number (or the twin keeps self's dtype),
    as an assignment's value or a ``return``, or, a single method, inside a larger expression
    (``x / norm(x).add_(eps)``: renamed where it stands); otherwise no fix (``unsupported-target``).
    """

    CODE = "IPF003"
    NAME = "inplace-method"
    TRIGGERS = (rb"[A-Za-z]\w*_\s*\(",)

    @classmethod
    def could_start(cls, node: ast.AST) -> bool:
        return calls_trailing_underscore(node)

    def visit_Call(self, node: ast.Call) -> None:
        name = self.model.torch_name(node.func)
        if name is not None:
            if name.startswith("torch.nn.init.") and name.endswith("_"):
                self.report(node, f"`{name}` initialises in place", Status.SKIPPED, "nn-init")
            elif name in torch_api.INPLACE_FUNCTIONS:
                self._function_form(node, name)
            return
        if is_inplace_method_call(node) and not self._is_chain_link(node):
            self._method_form(node)

    def _is_chain_link(self, node: ast.Call) -> bool:
        """``x.mul_(2)`` inside ``x.mul_(2).add_(1)``: the outer call reports the chain."""
        attr = self.model.parent(node)
        outer = self.model.parent(attr) if isinstance(attr, ast.Attribute) else None
        return is_inplace_method_call(outer) and outer.func is attr

    # ------------------------------------------------------------ x.add_(y)
    def _method_form(self, node: ast.Call) -> None:
        chain, base = [], node
        while is_inplace_method_call(base):
            chain.append(base)
            base = base.func.value
        chain.reverse()  # innermost first
        methods = [c.func.attr for c in chain]
        message = f"In-place `{'().'.join(methods)}()` on `{self.code(base)}`"
        hazard = self.hazard(node, base)
        if isinstance(subscript_base(base), ast.Subscript) or isinstance(base, ast.Subscript):
            return  # IPF004 clones the subscripted tensor
        if target_key(base) is None:
            if isinstance(base, ast.Call) and self.model.is_factory(base):
                if hazard is not None and any(k.arg == "requires_grad" for k in base.keywords):
                    # `torch.zeros(n, requires_grad=True).normal_()`: a new leaf that requires grad,
                    # refused with grad on (no fix: the flag belongs after the draw)
                    self.report(node, message, Status.MANUAL, "leaf-update", hazard=hazard)
                return  # otherwise a new tensor nobody else sees: harmless
            intended = self.model.intended_reason(node, base)
            if intended:
                self.report(node, message, Status.SKIPPED, intended, hazard=hazard)
                return
            if self._temporary_twin(node, base, chain, message, hazard):
                return
            self.report(node, message, Status.MANUAL, "unsupported-target", hazard=hazard)
            return
        operands = [
            a for c in chain for a in (*c.args, *(k.value for k in c.keywords))
            if c.func.attr[:-1] not in torch_api.SAME_DTYPE_TWINS
        ]
        verdict = assess(self.model, node, base, operands=operands, known_tensor=True)
        if verdict.status is None:
            return
        if verdict.status not in (Status.SAFE, Status.UNSAFE):
            self.report(node, message, verdict.status, verdict.reason, hazard=hazard)
            return
        convert = self._converter(chain)
        if convert is None:
            self.report(node, message, Status.MANUAL, "no-twin", hazard=hazard)
            return
        self._report_with_context(node, base, convert, message, verdict, hazard)

    def _temporary_twin(self, node, base, chain, message, hazard) -> bool:
        """``fea = branch(x).unsqueeze_(1)``: the receiver is a call's result no name holds. The
        twin (``branch(x).unsqueeze(1)``) is safe where that result is a new tensor nobody else
        sees (:func:`fresh_temporary`: not a view, not an input handed back, not kept by the
        code the call runs) and it computes the same values: every operand is a Python number
        or the method keeps its receiver's dtype (a tensor operand of a wider dtype: in place
        keeps the receiver's, the twin promotes). As the value of an assignment to names or of
        a ``return`` (a chain), or one method inside a larger expression (:meth:`_renamed_twin`);
        reported (True) or left to the caller (False)."""
        from codemod.analysis.arguments import fresh_temporary  # heavy: not at import (warm runs)

        parent = self.model.parent(node)
        if not (isinstance(base, ast.Call) and fresh_temporary(self.model, base)):
            return False
        direct = isinstance(parent, ast.Assign) and all(isinstance(t, ast.Name) for t in parent.targets) \
            or isinstance(parent, ast.Return)
        if not direct and len(chain) != 1:
            return False  # inside a larger expression: one method, renamed where it stands
        operands = [a for c in chain for a in (*c.args, *(k.value for k in c.keywords))
                    if c.func.attr[:-1] not in torch_api.SAME_DTYPE_TWINS]
        if any(isinstance(a, ast.Starred) or self.model.kind(a) is not Kind.SCALAR for a in operands):
            return False
        if not all(torch_api.INPLACE_METHODS[c.func.attr] and twin_keeps_result(c) for c in chain):
            return False

        if not direct:
            self._renamed_twin(node, message, hazard)
            return True

        def build(stmt):
            return stmt.with_changes(value=out_of_place_chain(stmt.value))

        def make(stmt, site) -> Fix:
            return Fix(stmt, build, fix_title(build(stmt)))

        kind = "Assign" if isinstance(parent, ast.Assign) else "Return"
        self.report(node, message, Status.SAFE, None, self.plan(parent, kind, make), hazard=hazard)
        return True

    def _renamed_twin(self, node: ast.Call, message: str, hazard) -> None:
        """``x / norm(x).add_(1e-16).unsqueeze(-1)``: the method of a fresh temporary inside a
        larger expression becomes its twin where it stands (the name ``add_`` -> ``add``); the
        expression around it gets the same values, and nobody else sees the temporary."""
        func = cast(ast.Attribute, node.func)
        twin = cast(str, torch_api.INPLACE_METHODS[func.attr])
        line, start = cast(int, func.end_lineno), cast(int, func.end_col_offset) - len(func.attr)
        text = self.code(node)
        at = text.rfind("." + func.attr) + 1
        title = f"Rewrite as `{text[:at]}{twin}{text[at + len(func.attr):]}`"

        def make(name, site) -> Fix:
            return Fix(name, lambda n: n.with_changes(value=twin), title)

        plan = Plan((line, self.source.char_column(line, start)), "Name", make)
        self.report(node, message, Status.SAFE, None, plan, hazard=hazard)

    def _converter(self, chain):
        """A function from the (updated) libcst call to its out-of-place form, or None."""
        if all(torch_api.INPLACE_METHODS[c.func.attr] and twin_keeps_result(c) for c in chain):
            return out_of_place_chain
        method = chain[0].func.attr
        if len(chain) == 1 and method in _EQUIVALENTS and self._torch_imported():
            template, needs_number = _EQUIVALENTS[method]
            call = chain[0]
            if needs_number and not (
                len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)
                and self.model.kind(call.args[0]) is Kind.SCALAR
            ):
                return None
            return lambda call: cst.parse_expression(template.format(
                x=code(call.func.value), a=code(call.args[0].value) if call.args else ""
            ))
        return None

    def _torch_imported(self) -> bool:
        return any(
            isinstance(stmt, ast.Import) and any(a.name == "torch" and a.asname is None for a in stmt.names)
            for stmt in self.model.module.body
        )

    # ----------------------------------------------------------- torch.relu_(x)
    def _function_form(self, node: ast.Call, name: str) -> None:
        short = name.rsplit(".", 1)[-1]
        if not node.args or isinstance(node.args[0], ast.Starred):
            return
        target = node.args[0]
        message = f"In-place `{short}()` on `{self.code(target)}`"
        hazard = self.hazard(node, target)
        if isinstance(target, ast.Subscript):
            return  # IPF004 clones the subscripted tensor
        twin = torch_api.INPLACE_FUNCTIONS[name]
        verdict = assess(self.model, 
            node, target, operands=[*node.args[1:], *(k.value for k in node.keywords)], known_tensor=True
        )
        if verdict.status is None:
            return
        if verdict.status not in (Status.SAFE, Status.UNSAFE):
            self.report(node, message, verdict.status, verdict.reason, hazard=hazard)
            return
        if twin is None or not isinstance(node.func, ast.Attribute):
            self.report(node, message, Status.MANUAL, "no-twin", hazard=hazard)
            return
        twin_name = twin.rsplit(".", 1)[-1]
        self._report_with_context(
            node, target,
            lambda call: call.with_changes(func=call.func.with_changes(attr=cst.Name(twin_name))),
            message, verdict, hazard,
        )

    # ------------------------------------------------------------- bindings
    def _report_with_context(self, node, target, convert, message, verdict, hazard) -> None:
        """Keep the bindings the in-place call had, by where the call stands.

        ``convert`` maps the libcst call, as updated by fixes inside it, to its out-of-place form.
        """
        parent = self.model.parent(node)
        also = verdict.also_rebind
        key = target_key(target)
        if isinstance(parent, ast.Expr):
            def build(stmt):
                return rebind([cst.parse_expression(key)], convert(stmt.value), also, like=stmt)
            kind = "Expr"
        elif isinstance(parent, ast.Assign) and all(target_key(t) for t in parent.targets):
            keys = {target_key(t) for t in parent.targets}
            extra = ([] if key in keys else [key]) + [k for k in also if k not in keys]

            def build(stmt):
                return stmt.with_changes(
                    targets=[*stmt.targets, *(cst.AssignTarget(cst.parse_expression(e)) for e in extra)],
                    value=convert(stmt.value),
                )
            kind = "Assign"
        elif isinstance(parent, ast.Return) and isinstance(target, ast.Name) and not also:
            def build(stmt):
                return stmt.with_changes(value=convert(stmt.value))
            kind = "Return"
        else:
            self.report(node, message, Status.MANUAL, "nested-call", hazard=hazard)
            return

        def make(stmt, site) -> Fix:
            return Fix(stmt, build, fix_title(build(stmt)))

        self.report(node, message, verdict.status, verdict.reason, self.plan(parent, kind, make), hazard=hazard)


