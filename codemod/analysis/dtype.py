"""dtype: would the out-of-place form of an op compute in another dtype than the in-place one?

``x += y`` keeps ``x``'s dtype; ``x = x + y`` takes the promoted dtype of both operands (half +=
float32 stays half, half + float32 is float32). Python numbers never promote a tensor's dtype
category they already match, so only non-scalar operands count.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Iterable, Optional, Set

from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import target_key
from codemod.analysis.tensor_kind import TensorKinds

if TYPE_CHECKING:
    from codemod.analysis.model import SemanticModel


def may_promote(kinds: TensorKinds, key: Optional[str], operands: Iterable[ast.expr],
                assume_same_dtype: bool = False) -> bool:
    """Whether ``x = x op y`` could take another dtype than ``x op= y`` keeps (``key``: x's)."""
    if assume_same_dtype:
        return False
    for operand in operands:
        if key is not None and target_key(operand) == key:
            continue
        if kinds.kind(operand) is not Kind.SCALAR:
            return True
    return False


# Integral or boolean results, whatever the operands (autograd never tracks those).
_INTEGRAL_METHODS = frozenset({
    "long", "int", "bool", "byte", "short", "char", "argmax", "argmin", "argsort", "nonzero",
    "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "isclose", "logical_and",
    "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "randint", "randperm", "bucketize", "searchsorted", "eq_", "ne_",
})
_INTEGRAL_DTYPES = frozenset({
    "long", "int", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool",
    "short", "uint", "qint8", "quint8",
})
# Results in the dtype of the receiver (or first operand): integral when it is.
_SAME_DTYPE = frozenset({
    "clone", "contiguous", "detach", "view", "reshape", "expand", "expand_as", "repeat", "flatten",
    "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "narrow", "select", "flip",
    "roll", "cpu", "cuda", "index_select", "gather", "masked_fill", "zeros_like", "ones_like",
    "empty_like", "full_like", "new_zeros", "new_ones", "new_empty", "new_full", "cumsum", "sum",
    "tile", "repeat_interleave", "tril", "triu", "clamp", "clamp_min", "clamp_max", "clip",
    "abs", "neg", "max", "min", "amax", "amin",
})
# Bitwise operators: defined on integral and boolean tensors only.
BITWISE = (ast.BitAnd, ast.BitOr, ast.BitXor, ast.LShift, ast.RShift)


class Integral:
    """Which expressions are integral or boolean tensors (or Python ints and bools): values
    autograd cannot differentiate, so an in-place write into them breaks nothing."""

    def __init__(self, model: "SemanticModel") -> None:
        self.model = model
        self._open: Set[ast.expr] = set()

    def integral(self, expr: ast.expr) -> bool:
        """Whether ``expr`` is known to be integral or boolean."""
        if expr in self._open or len(self._open) > 12:
            return expr in self._open  # a cycle: the other bindings decide
        self._open.add(expr)
        try:
            return self._integral(expr)
        finally:
            self._open.discard(expr)

    def _integral(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, (bool, int))
        if isinstance(expr, (ast.Compare, ast.BoolOp)):
            return True
        if isinstance(expr, ast.UnaryOp):
            return isinstance(expr.op, (ast.Invert, ast.Not)) or self.integral(expr.operand)
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, BITWISE):
                return True
            if isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)):
                return self.integral(expr.left) and self.integral(expr.right)
            return False
        if isinstance(expr, ast.Subscript):
            return self.integral(expr.value)
        if isinstance(expr, ast.IfExp):
            return self.integral(expr.body) and self.integral(expr.orelse)
        if isinstance(expr, ast.Name):
            from codemod.analysis.requires_grad import bound_values

            values = bound_values(self.model, expr, updates=False)
            return bool(values) and all(self.integral(v) for v in values or ())
        if isinstance(expr, ast.Call):
            return self._integral_call(expr)
        return False

    def _integral_call(self, call: ast.Call) -> bool:
        dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
        if dtype is not None:
            return self._integral_dtype(dtype)
        func = call.func
        name = self.model.torch_name(func)
        short = (name or "").rsplit(".", 1)[-1] if name else (func.attr if isinstance(func, ast.Attribute) else "")
        if isinstance(func, ast.Name) and func.id in ("int", "len", "bool", "round"):
            return True
        if short in _INTEGRAL_METHODS:
            return True
        if short in ("to", "type") and call.args:
            return self._integral_dtype(call.args[0])
        if short in _SAME_DTYPE:
            if name is None and isinstance(func, ast.Attribute):
                return self.integral(func.value)
            return bool(call.args) and self.integral(call.args[0])
        return False

    def _integral_dtype(self, dtype: ast.expr) -> bool:
        name = self.model.torch_name(dtype) or ""
        return name.startswith("torch.") and name.rsplit(".", 1)[-1] in _INTEGRAL_DTYPES


# Ops that accept integral and boolean tensors (and save them): a tensor such an op saved may
# be an index or a mask, never differentiated. Any other op that saves a tensor raises on one
# that is not floating, so having run it shows the tensor is floating.
INTEGRAL_OK = frozenset({
    "gather", "mul", "*", "/", "%", "//", "abs", "clamp", "clip", "clamp_min", "clamp_max", "max", "min",
    "amax", "amin", "sum", "prod", "cumsum", "cumprod", "index_select", "masked_select", "where", "square",
    "pow", "**", "neg", "matmul", "@", "mm", "bmm", "einsum", "remainder", "floor_divide", "repeat", "cat",
    "stack", "outer", "addmm", "baddbmm", "take", "sort", "topk", "div", "sub", "add", "sgn", "sign",
    "max_dim", "min_dim", "pad", "scatter", "scatter_add", "index_add", "masked_fill", "flip", "roll",
})
# Floating results whatever the operands (or the operands must be floating).
_FLOAT_FACTORIES = frozenset({  # without a dtype: the default dtype, floating
    "rand", "randn", "rand_like", "randn_like", "linspace", "logspace", "normal", "zeros", "ones", "empty", "eye",
    # the legacy typed constructors: `torch.FloatTensor([[1., 2.]])`; `torch.Tensor(...)` is the default dtype
    "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor",
})
_FLOAT_METHODS = frozenset({"float", "double", "half", "bfloat16"})
_FLOAT_DTYPES = frozenset({"float", "float16", "float32", "float64", "double", "half", "bfloat16"})


def op_short(name: str) -> str:
    """``torch.nn.functional.softmax`` -> ``softmax``; ``x.sigmoid_()`` -> ``sigmoid``."""
    short = name.rstrip("()").rsplit(".", 1)[-1]
    return short[:-1] if short.endswith("_") and len(short) > 1 else short


class Floating:
    """Which expressions are known to be floating tensors (the dtype autograd differentiates)."""

    def __init__(self, model: "SemanticModel", known_op: Callable[[str], bool]) -> None:
        self.model = model
        self.known_op = known_op  # an op with data on what it saves (all such ops compute in float)
        self._open: Set[ast.expr] = set()

    def floating(self, expr: ast.expr) -> bool:
        if expr in self._open or len(self._open) > 12:
            return expr in self._open
        self._open.add(expr)
        try:
            return self._floating(expr)
        finally:
            self._open.discard(expr)

    def _floating(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Constant):
            return isinstance(expr.value, float)
        if self.model.kind(expr) is Kind.PARAMETER:
            return True
        if isinstance(expr, ast.BinOp):
            if isinstance(expr.op, ast.Div):
                return True  # true division
            return self.floating(expr.left) or self.floating(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self.floating(expr.operand)
        if isinstance(expr, ast.Subscript):
            return self.floating(expr.value)
        if isinstance(expr, ast.IfExp):
            return self.floating(expr.body) and self.floating(expr.orelse)
        if isinstance(expr, ast.Name):
            from codemod.analysis.requires_grad import bound_values

            values = bound_values(self.model, expr, updates=False)
            return bool(values) and all(self.floating(v) for v in values or ())
        if isinstance(expr, ast.Call):
            return self._floating_call(expr)
        return False

    def _floating_call(self, call: ast.Call) -> bool:
        dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
        if dtype is not None:
            return (self.model.torch_name(dtype) or "").rsplit(".", 1)[-1] in _FLOAT_DTYPES
        func = call.func
        if self.model.kind(func) is Kind.MODULE:
            return True  # a torch module's output (Linear, Conv, norms...)
        name = self.model.torch_name(func)
        if name is not None:
            short = name.rsplit(".", 1)[-1]
            if short in _FLOAT_FACTORIES or (name.startswith("torch.nn.functional.") and short not in ("pad", "one_hot")):
                return True
            if short in _SAME_DTYPE or short in INTEGRAL_OK:  # float with int promotes to float
                return any(self.floating(a) for a in call.args if not isinstance(a, ast.Starred))
            return self.known_op(short) and short not in _INTEGRAL_METHODS
        if isinstance(func, ast.Attribute):
            method = op_short(func.attr)
            if method in _FLOAT_METHODS:
                return True
            if method in ("to", "type") and call.args:
                return (self.model.torch_name(call.args[0]) or "").rsplit(".", 1)[-1] in _FLOAT_DTYPES \
                    or (not self._is_dtype(call.args[0]) and self.floating(func.value))
            if method in _SAME_DTYPE or method in INTEGRAL_OK:
                return self.floating(func.value)
            if self.known_op(method) and method not in _INTEGRAL_METHODS:
                return True
        return False

    def _is_dtype(self, expr: ast.expr) -> bool:
        return (self.model.torch_name(expr) or "").startswith("torch.") and isinstance(expr, ast.Attribute)
