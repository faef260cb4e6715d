"""IPF001 augmented assignment: ``x op= y`` -> ``x = x op y``.

The rule's documentation is its class docstring (``inplacefix rule CODE`` prints it)."""

from __future__ import annotations

import ast

from codemod.fixes import _cst as cst
from codemod.findings import Fix, Status
from codemod.analysis.syntax import target_key
from codemod.rules.safety import assess
from codemod.rules.base import Rule, code, fix_title, rebind

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

# Python's binding strength, low to high (https://docs.python.org/3/reference/expressions.html).
_BINARY_PRECEDENCE = {
    "BitOr": 6, "BitXor": 7, "BitAnd": 8, "LeftShift": 9, "RightShift": 9, "Add": 10,
    "Subtract": 10, "Multiply": 11, "MatrixMultiply": 11, "Divide": 11, "FloorDivide": 11,
    "Modulo": 11, "Power": 13,
}


def precedence(expr: cst.BaseExpression) -> int:
    if expr.lpar:
        return 100
    if isinstance(expr, cst.BinaryOperation):
        return _BINARY_PRECEDENCE[type(expr.operator).__name__]
    if isinstance(expr, cst.UnaryOperation):
        return 4 if isinstance(expr.operator, cst.Not) else 12
    if isinstance(expr, cst.Comparison):
        return 5
    if isinstance(expr, cst.BooleanOperation):
        return 3 if isinstance(expr.operator, cst.And) else 2
    if isinstance(expr, cst.IfExp):
        return 1
    if isinstance(expr, (cst.Lambda, cst.NamedExpr, cst.Yield)):
        return 0
    if isinstance(expr, cst.Await):
        return 14
    return 100  # atoms, calls, subscripts, attributes


def right_operand(op: type, value: cst.BaseExpression) -> cst.BaseExpression:
    """``value`` as the right operand of ``op``, parenthesised only where it must be.

    Equal precedence gets parentheses too (``x -= a - b`` -> ``x - (a - b)``), except for the
    right-associative ``**``; a unary operand of ``**`` needs none (``x ** -y``).
    """
    mine, theirs = _BINARY_PRECEDENCE[op.__name__], precedence(value)
    if op is cst.Power and (theirs >= mine or isinstance(value, cst.UnaryOperation)):
        return value
    if theirs > mine:
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


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
    every comment. Subscript targets (``x[i] += 1``) belong to IPF004, which clones.

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
    parameter the caller may rely on (``param-mutation``), or when another name aliases it
    (``alias``: the fix rebinds that name too). No fix for ``nn.Parameter`` attributes
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
            return  # IPF004 clones the base instead
        verdict = assess(self.model, node, target, operands=[node.value], creates_binding=False)
        if verdict.status is None:
            return
        hazard = self.hazard(node, target) if verdict.status is not Status.SKIPPED else None
        message = f"In-place `{_SYMBOLS[type(node.op)]}=` on `{self.code(target)}`"
        plan = None
        if verdict.status in (Status.SAFE, Status.UNSAFE) and target_key(target):
            also = verdict.also_rebind

            def make(aug: cst.AugAssign, site, also=also) -> Fix:
                return Fix(aug, lambda n: build_assignment(n, also), fix_title(build_assignment(aug, also)))

            plan = self.plan(node, "AugAssign", make)
        self.report(node, message, verdict.status, verdict.reason, plan, hazard=hazard)
