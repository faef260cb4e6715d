"""For whose gradient an op saves an input (issue 24, precision; stop 43).

``x @ c`` saves ``x`` only to compute ``c``'s gradient: where ``c`` requires no grad (a constant,
a fresh sample), autograd saves nothing of ``x`` and a later in-place write into ``x`` cannot
raise, although ``x`` itself requires grad. ``torch_api.SAVED_FOR`` holds what torch does,
measured (``scripts/gen_torch_api.py``): for each op, each saved input and the inputs whose
gradient needs it. A summary of a user function says the same of its parameters
(``Summary.saved_for``). This module maps those input numbers to the operands a call or an
operator passes; it only reads syntax.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Tuple, Union, cast

from codemod import torch_api
from codemod.analysis.dtype import op_short

# Operators by the name of their measured op.
_SYMBOLS = {"*": "mul", "/": "div", "@": "matmul", "**": "pow"}
# torch_api.SAVED_FOR, typed (the generated literal holds an empty table too)
_MEASURED = cast(Dict[str, Dict[str, Tuple[str, ...]]], torch_api.SAVED_FOR)
# Ops that take any number of tensor operands: measured with two, used with two only.
_VARIADIC = frozenset({"einsum"})
# Measured ops that also take a Python number for an operand (``torch.mul(x, 0.5)``, ``x ** 2``);
# the others raise on one (``torch.matmul(x, 0.5)``): what they are passed is a tensor.
_TAKE_NUMBERS = frozenset({"mul", "multiply", "div", "divide", "true_divide", "pow"})


def may_take_a_number(op: str, op_node: Union[ast.Call, ast.BinOp]) -> bool:
    """Whether an operand of the torch op ``op`` may be a Python number (an operator always may)."""
    return isinstance(op_node, ast.BinOp) or _SYMBOLS.get(op, op_short(op)) in _TAKE_NUMBERS


def operands(op_node: Union[ast.Call, ast.BinOp], method: bool) -> Optional[List[ast.expr]]:
    """The tensor operands of ``op_node`` in the order the measured facts number them: a
    binary operator's two sides; a method's receiver, then its positional arguments; a
    function's positional arguments (einsum's equation left out). None where ``*args`` hide them."""
    if isinstance(op_node, ast.BinOp):
        return [op_node.left, op_node.right]
    if any(isinstance(a, ast.Starred) for a in op_node.args):
        return None
    plain = list(op_node.args)
    if method and isinstance(op_node.func, ast.Attribute):
        return [op_node.func.value, *plain]
    if plain and isinstance(plain[0], ast.Constant) and isinstance(plain[0].value, str):
        plain = plain[1:]  # einsum("ij,jk->ik", a, b)
    return plain


def measured_users(op: str, index: int, op_node: Union[ast.Call, ast.BinOp], method: bool) -> Optional[List[ast.expr]]:
    """The operands whose gradient needs input ``index`` of the torch op ``op`` (a function's
    qualified name, a method's name or an operator's symbol) saved, as torch's measured facts say;
    None where there is no measure (an in-place op, another arity, an operand passed by keyword)."""
    if op.endswith("()") or op.endswith("_"):
        return None  # an in-place method (its receiver is the written tensor)
    short = _SYMBOLS.get(op, op_short(op))
    users = _MEASURED.get(short, {}).get(f"input{index}")
    found = operands(op_node, method) if users is not None else None
    if users is None or found is None or (short in _VARIADIC and len(found) != 2):
        return None
    picked = [int(u[len("input"):]) for u in users]
    if any(j >= len(found) for j in picked):
        return None  # an operand passed by keyword
    return [found[j] for j in picked]
