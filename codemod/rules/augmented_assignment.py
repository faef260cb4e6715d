"""IPF001 augmented assignment: ``x op= y`` -> ``x = x op y``.

The rule's documentation is its class docstring (``inplacefix rule CODE`` prints it)."""

from __future__ import annotations

import ast

from codemod.analysis.syntax import has_call, target_key
from codemod.findings import Fix, Status
from codemod.fixes import _cst as cst
from codemod.fixes.edits import code, fix_title, rebind, right_operand
from codemod.rules.base import Rule
from codemod.rules.safety import CONTRACTS, assess

_SYMBOLS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
    ast.BitXor: "^", ast.MatMult: "@",
}

# libcst's names (libcst itself is imported only when a fix is built).
BINARY_FOR_AUG = {
    "AddAssign": "Add", "SubtractAssign": "Subtract", "MultiplyAssign": "Multiply",
    "DivideAssign": "Divide", "FloorDivideAssign": "FloorDivide", "ModuloAssign": "Modulo",
    "PowerAssign": "Power", "LeftShiftAssign": "LeftShift", "RightShiftAssign": "RightShift",
    "BitAndAssign": "BitAnd", "BitOrAssign": "BitOr", "BitXorAssign": "BitXor",
    "MatrixMultiplyAssign": "MatrixMultiply",
}

def build_assignment(node: cst.AugAssign, also=()) -> cst.Assign:
    op = getattr(cst, BINARY_FOR_AUG[type(node.operator).__name__])
    tight = not code(node.operator.whitespace_before) and not code(node.operator.whitespace_after)
    space = cst.SimpleWhitespace("" if tight else " ")  # `x+=1` -> `x=x+1`
    value = cst.BinaryOperation(
        left=node.target.deep_clone(),
        operator=op(whitespace_before=space, whitespace_after=space),
        right=right_operand(op, node.value),
    )
    return rebind([node.target], value, also, like=node)


class AugmentedAssignment(Rule):
    """Rewrite `x op= y` on tensors as `x = x op y`.

    ## What it does
    Finds augmented assignments (all 13 operators) whose target is a name or an attribute chain
    (``self.h``) known to hold a tensor, and rewrites them as plain assignments, with
    parentheses only where precedence needs them, keeping the spacing around the operator and
    every comment. Subscript targets (``x[i] += 1``) belong to IPF004, which clones, but for an
    element of a list of tensors the function built (``laterals = [conv(x) for ...]``, then
    ``laterals[i - 1] += up``): ``laterals[i - 1] = laterals[i - 1] + up`` puts a new tensor in
    the list's slot.

    ## Why is this bad?
    ``x += y`` on a tensor is ``x.add_(y)``: it writes into the tensor ``x`` names. If autograd
    saved that tensor for backward (``x = w.exp()`` saves its output), ``backward()`` dies with
    "one of the variables needed for gradient computation has been modified by an inplace
    operation". ``x = x + y`` makes a new tensor and leaves the saved one intact.

    ## Example
    ```python
    h = torch.sigmoid(z)
    h += bias
    ```
    Use instead:
    ```python
    h = torch.sigmoid(z)
    h = h + bias
    ```

    ## Fix safety
    Safe when the target is a local (or attribute) tensor, no other name sees the mutation, and
    the right-hand side is a Python number (or the target itself). Unsafe when the right-hand
    side may be a tensor of another dtype (``x += y`` keeps x's dtype, ``x = x + y`` promotes:
    half += float32 stays half: ``dtype-promotion``), when the target is an unannotated
    parameter the caller may rely on (``param-mutation``: safe where the file shows every call
    of a ``forward``, or of a helper method called only as ``self.<helper>(...)``, and each
    passes a tensor nobody sees after the call), or when another name aliases it
    and the names are not all the references there are (``alias``: the fix rebinds that name
    too; local names bound on every path, from no container, get it safe), or when a list, a
    container method or a call that may keep it holds the tensor before the write, or, for a
    list's element, when an element was read into another holder before the write
    (``held-elsewhere``). No fix for ``nn.Parameter`` attributes
    (assigning a plain tensor to one raises), for targets whose evaluation calls something
    (``f().x += 1``), or for views whose base is used later. Known non-tensors (ints,
    strings, containers) are never reported.
    """

    CODE = "IPF001"
    NAME = "augmented-assignment"
    TRIGGERS = (rb"(?:[-+*/%&|^@]|\*\*|//|<<|>>)=",)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        target = node.target
        if isinstance(target, ast.Subscript):
            if self.model.hazards.producers.listed(target, node) is not None:
                self._element(node, target)
            return  # a tensor's part: IPF004 clones the base instead
        verdict = assess(self.model, node, target, operands=[node.value], creates_binding=False,
                         known_tensor=self._saved_result(node, target))
        if verdict.status is None:
            return
        hazard = self.hazard(node, target) if verdict.status is not Status.SKIPPED or verdict.reason in CONTRACTS else None
        message = f"In-place `{_SYMBOLS[type(node.op)]}=` on `{self.code(target)}`"
        plan = None
        if verdict.status in (Status.SAFE, Status.UNSAFE) and target_key(target):
            also = verdict.also_rebind

            def make(aug: cst.AugAssign, site, also=also) -> Fix:
                return Fix(aug, lambda n: build_assignment(n, also), fix_title(build_assignment(aug, also)))

            plan = self.plan(node, "AugAssign", make)
        self.report(node, message, verdict.status, verdict.reason, plan, hazard=hazard)

    def _element(self, node: ast.AugAssign, target: ast.Subscript) -> None:
        """``laterals[i - 1] += up`` on a list of tensors the function built: the rewrite
        ``laterals[i - 1] = laterals[i - 1] + up`` puts a new tensor in the list's slot and
        leaves the old one, which autograd may have saved, intact."""
        message = f"In-place `{_SYMBOLS[type(node.op)]}=` on `{self.code(target)}`"
        intended = self.model.intended_reason(node, target)
        if intended:
            self.report(node, message, Status.SKIPPED, intended)
            return
        hazard = self.hazard(node, target)
        listed = self.model.hazards.producers.listed(target, node)
        if hazard is None and not all(self._tensor_element(e) for e in (listed[0] if listed else [])):
            return  # elements the analysis knows nothing of: no candidate (`counts[k] += 1`)
        if has_call(target.slice):
            self.report(node, message, Status.MANUAL, "side-effect-target", hazard=hazard)
            return
        status, reason = Status.SAFE, None
        if not self.model.hazards.producers.elements_unheld(target, node):
            status, reason = Status.UNSAFE, "held-elsewhere"  # an element read into another holder first
        elif listed is not None and any(isinstance(e, ast.Call) and self.model.result_kept(e) for e in listed[0]):
            status, reason = Status.UNSAFE, "held-elsewhere"  # the module that made it keeps it (`self.last = out`)
        elif listed is not None and any(self._named_elsewhere(e, node) for e in listed[0]):
            status, reason = Status.UNSAFE, "held-elsewhere"  # `outs = [a, b]`, `outs.append(a)`: `a` holds it too
        elif self.model.may_promote(None, [node.value], target, node):
            status, reason = Status.UNSAFE, "dtype-promotion"

        def make(aug: cst.AugAssign, site) -> Fix:
            return Fix(aug, build_assignment, fix_title(build_assignment(aug)))

        self.report(node, message, status, reason, self.plan(node, "AugAssign", make), hazard=hazard)

    def _named_elsewhere(self, element: ast.expr, write: ast.AugAssign) -> bool:
        """The element is a name that also holds the tensor: read anywhere else in the function,
        or not bound there by assignments alone (a parameter: the caller holds it). Rebinding the
        list's slot would leave that name unchanged where the write changed it."""
        if not isinstance(element, ast.Name):
            return False
        flow = self.model.flow(self.model.owner(write))
        bindings = flow.bindings.get(element.id, [])
        return not bindings or any(b.form != "assign" for b in bindings) or element.id in flow.declared \
            or any(load is not element for _, load in flow.loads.get(element.id, []))

    def _tensor_element(self, element: ast.expr) -> bool:
        """A tensor, or what a call of the file's code returns that saves a tensor passed in."""
        from codemod.analysis.summaries import Saved
        from codemod.analysis.tensor_kind import is_tensor

        if is_tensor(element, self.model):
            return True
        summary = self.model.summaries.of_call(element) if isinstance(element, ast.Call) else None
        return summary is not None and Saved.YES in (*summary.inputs, summary.output)

    def _saved_result(self, node: ast.AugAssign, target: ast.expr) -> bool:
        """``x = self.pre_conv(x)`` (every binding that reaches the write), where the call is of
        the file's code whose result autograd saves (a ReLU's output), or of a module every class
        it may be built as saves its output (``self.act = getattr(nn, act)()``: a ReLU or a
        Tanh): a tensor."""
        from codemod.analysis.summaries import Saved

        if not isinstance(target, ast.Name):
            return False
        flow = self.model.flow(self.model.owner(node))
        reaching = [b for b in self.model.reaching(flow, target.id, self.model.statement_of(node)) if b.form != "aug"]
        return bool(reaching) and all(
            b.form == "assign" and isinstance(b.value, ast.Call)
            and ((lambda s: s is not None and s.output is Saved.YES)(self.model.summaries.of_call(b.value))
                 or self._saving_module(b.value))
            for b in reaching)

    def _saving_module(self, call: ast.Call) -> bool:
        """``self.act(h)`` of a torch module the analysis knows saves its output: a tensor."""
        found = self.model.hazards.ops._module_op(call.func)
        return found is not None and not isinstance(found.saves, str) and "output" in found.saves
