"""dtype: would the out-of-place form of an op compute in another dtype than the in-place one?

``x += y`` keeps ``x``'s dtype; ``x = x + y`` takes the promoted dtype of both operands (half +=
float32 stays half, half + float32 is float32). Python numbers never promote a tensor's dtype
category they already match, so only non-scalar operands count.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterable, List, Mapping, Optional, Protocol, Set, Tuple

from codemod.analysis.kinds import Kind
from codemod.analysis.project import INTEGRAL_ONLY, integral_only  # noqa: F401  (the model asks dtype)
from codemod.analysis.requires_grad import RequiresGradFacts, bound_values
from codemod.analysis.syntax import target_key
from codemod.analysis.tensor_kind import JOINING, TensorKinds, is_tensor


def may_promote(kinds: TensorKinds, key: Optional[str], operands: Iterable[ast.expr],
                assume_same_dtype: bool = False) -> bool:
    """Whether ``x = x op y`` could take another dtype than ``x op= y`` keeps (``key``: x's)."""
    if assume_same_dtype:
        return False
    for operand in operands:
        if key is not None and target_key(operand) == key:
            continue
        if kinds.kind(operand) is not Kind.SCALAR and not (key is not None and _from_target(kinds, operand, key)):
            return True
    return False


# Ops whose result has their input's dtype (or, for a complex input, its real counterpart; for
# an integral one, a floating dtype the in-place form would have refused): ``x / x.norm()``
# computes in x's dtype, as ``x /= x.norm()`` does.
_DTYPE_KEEPING = frozenset({
    "norm", "vector_norm", "sum", "mean", "sqrt", "rsqrt", "abs", "pow", "square", "exp", "log", "log1p",
    "expm1", "sigmoid", "tanh", "softmax", "log_softmax", "logsumexp", "amax", "amin", "max", "min", "clamp",
    "clamp_min", "clamp_max", "clip", "std", "var", "neg", "reciprocal", "unsqueeze", "squeeze", "view",
    "reshape", "expand", "detach", "clone", "contiguous", "t", "transpose", "permute", "flatten", "normalize",
})


# Keywords of those ops that pick which entries (or which norm) the result is made of, never its
# dtype: any value does (`x.norm(p=self.p, dim=self.dim, keepdim=True)`; measured with torch:
# a half `x` gives a half norm for `p` a float64 tensor too). `dtype=` is not one.
_SHAPE_KEYWORDS = frozenset({"dim", "keepdim", "p", "ord"})


def _from_target(kinds: TensorKinds, expr: ast.expr, key: str, depth: int = 0) -> bool:
    """``expr`` is computed from the tensor ``key`` names and Python numbers only, through ops
    that keep its dtype (``x.norm(dim=-1, keepdim=True) + 1e-6``): ``x op expr`` then has x's
    dtype, as ``x op= expr`` does."""
    if depth > 12:
        return False
    if target_key(expr) == key:
        return True
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp):
        return _from_target(kinds, expr.operand, key, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _from_target(kinds, expr.left, key, depth + 1) and _from_target(kinds, expr.right, key, depth + 1)
    if isinstance(expr, ast.Subscript):  # `x.max(-1)[0]`, `n[..., None]`
        return _from_target(kinds, expr.value, key, depth + 1)
    if not isinstance(expr, ast.Call) or any(k.arg in (None, "dtype", "out") for k in expr.keywords):
        return False
    if not all(_constant(k.value) or k.arg in _SHAPE_KEYWORDS for k in expr.keywords):
        return False
    name = kinds.names.torch_name(expr.func)
    if name is not None:
        args = [a for a in expr.args]
        return name.rsplit(".", 1)[-1] in _DTYPE_KEEPING and bool(args) \
            and _from_target(kinds, args[0], key, depth + 1) and all(_constant(a) for a in args[1:])
    func = expr.func
    return isinstance(func, ast.Attribute) and func.attr in _DTYPE_KEEPING and not kinds.names.qualified_names(func) \
        and _from_target(kinds, func.value, key, depth + 1) and all(_constant(a) for a in expr.args)


def _constant(expr: ast.expr) -> bool:
    """A Python number, string, bool or None, or a tuple or list of them (``dim=(1, 2)``)."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.UnaryOp):
        return _constant(expr.operand)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(_constant(e) for e in expr.elts)
    return False


# Integral or boolean results, whatever the operands (autograd never tracks those).
_INTEGRAL_METHODS = frozenset({
    "long", "int", "bool", "byte", "short", "char", "argmax", "argmin", "argsort", "nonzero",
    "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "isclose", "logical_and",
    "logical_or", "logical_not", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_not", "randint", "randperm", "bucketize", "searchsorted", "eq_", "ne_",
    "multinomial",  # (int64 samples: no gradient, the probabilities' history ends there)
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


def integral_by_operator(expr: ast.expr) -> bool:
    """``~m``, ``not m``, ``a < b``, ``a & b``: the operator alone makes the value integral or
    boolean (``~`` and the bitwise operators raise on a floating tensor; a comparison gives a
    bool or a mask), so it never requires grad, whatever its operands are."""
    if isinstance(expr, ast.UnaryOp):
        return isinstance(expr.op, (ast.Invert, ast.Not))
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.op, BITWISE)
    return isinstance(expr, ast.Compare)


class Integral:
    """Which expressions are integral or boolean tensors (or Python ints and bools): values
    autograd cannot differentiate, so an in-place write into them breaks nothing."""

    def __init__(self, model: RequiresGradFacts) -> None:
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

    def _integral_dtype(self, dtype: ast.expr, depth: int = 0) -> bool:
        """``torch.long``, ``torch.int32``; a conditional of such (``torch.int32 if n < m else
        torch.long``); a name every binding of which that reaches the read is such, a parameter
        where every call of its function that the file holds passes such (``dtype=index_dtype``,
        the caller's ``index_dtype = torch.int32 if ... else torch.long``). Shown, never assumed:
        a parameter whose calls the file does not all show, a default, any other value: unknown."""
        if depth > 6:
            return False
        if isinstance(dtype, ast.IfExp):
            return self._integral_dtype(dtype.body, depth + 1) and self._integral_dtype(dtype.orelse, depth + 1)
        name = self.model.torch_name(dtype) or ""
        if name.startswith("torch."):
            return name.rsplit(".", 1)[-1] in _INTEGRAL_DTYPES
        if not isinstance(dtype, ast.Name) or dtype in self._open or len(self._open) > 12:
            return False
        self._open.add(dtype)
        try:
            values = bound_values(self.model, dtype, callers=True, updates=False)
            return bool(values) and all(self._integral_dtype(v, depth + 1) for v in values or ())
        finally:
            self._open.discard(dtype)


_ORDERS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)
# Boolean results of a tensor receiver or operand (a mask), whatever its dtype.
_MASK_METHODS = frozenset({
    "any", "all", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "isclose", "isneginf",
    "isposinf", "logical_and", "logical_or", "logical_not", "logical_xor", "bool", "signbit",
})


def boolean_tensor(model: RequiresGradFacts, expr: ast.expr, depth: int = 0) -> bool:
    """Whether ``expr`` is known to be a boolean *tensor* (a mask): a comparison with a tensor
    operand, ``.any(dim)`` / ``.all()`` / ``isnan`` / ``logical_*`` of a tensor, ``~``, ``&``, ``|``,
    ``^`` of masks, a name bound only to such values. Indexing with one is advanced indexing,
    a copy, whatever its dims (checked with torch by tests/test_precision35.py)."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Compare):  # an order or equality (not `is`, `in`)
        return all(isinstance(op, _ORDERS) for op in expr.ops) \
            and any(is_tensor(e, model) for e in (expr.left, *expr.comparators))
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):
        return boolean_tensor(model, expr.operand, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        sides = (expr.left, expr.right)
        masks = [boolean_tensor(model, e, depth + 1) for e in sides]
        return any(masks) and all(m or isinstance(e, ast.Compare) or isinstance(e, ast.Constant) and isinstance(e.value, bool)
                                  for m, e in zip(masks, sides))
    if isinstance(expr, ast.Subscript):
        return boolean_tensor(model, expr.value, depth + 1)
    if isinstance(expr, ast.Call):
        func = expr.func
        name = model.torch_name(func)
        if name is not None:
            return name.rsplit(".", 1)[-1] in _MASK_METHODS and bool(expr.args) and is_tensor(expr.args[0], model)
        helper = _own_function(model, func)
        if helper is not None:  # `is_clipped(x)`: a function of the file whose every return is a mask
            returns = [n for n in model.walk(helper) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await))
                       and model.owner(n) is helper]
            return bool(returns) and all(isinstance(r, ast.Return) and r.value is not None
                                         and boolean_tensor(model, r.value, depth + 1) for r in returns)
        return isinstance(func, ast.Attribute) and func.attr in _MASK_METHODS \
            and (is_tensor(func.value, model) or boolean_tensor(model, func.value, depth + 1))
    if isinstance(expr, ast.Name):
        values = bound_values(model, expr, updates=False)
        return bool(values) and all(boolean_tensor(model, v, depth + 1) for v in values or ())
    return False


def _own_function(model: RequiresGradFacts, func: ast.expr) -> Optional[ast.FunctionDef]:
    """``helper`` of ``helper(x)``: a top-level, undecorated ``def`` bound once in the module, and
    no local of a function around the call (what the call runs, alone)."""
    if not isinstance(func, ast.Name) or _local(model, func, func.id):
        return None
    bound = model.flow(model.module, nested=False).bindings.get(func.id, [])
    made = bound[0].stmt if len(bound) == 1 else None
    if isinstance(made, ast.FunctionDef) and model.parent(made) is model.module and not made.decorator_list:
        return made
    return None


def _local(model: RequiresGradFacts, node: ast.AST, name: str) -> bool:
    """``name`` is bound by a function (or a lambda's parameters) around ``node``."""
    for up in model.ancestors(node):
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and name in model.flow(up).bindings:
            return True
        if isinstance(up, ast.Lambda) and name in {a.arg for a in ast.walk(up.args) if isinstance(a, ast.arg)}:
            return True
    return False


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
# In-place ops that raise on integral and boolean tensors (measured with torch 2.x): their
# result is floating whatever the operand.
_FLOAT_ONLY_INPLACE = frozenset({
    "sqrt", "rsqrt", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sigmoid", "tanh", "sin",
    "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "reciprocal", "erf",
    "erfc", "erfinv", "logit", "lgamma", "digamma", "frac",
})
# Augmented operators whose result is floating when the other operand is.
_FLOATING_OPERAND_OPS = (ast.Add, ast.Sub, ast.Mult, ast.Pow)
_FLOAT_DTYPES = frozenset({"float", "float16", "float32", "float64", "double", "half", "bfloat16"})


def op_short(name: str) -> str:
    """``torch.nn.functional.softmax`` -> ``softmax``; ``x.sigmoid_()`` -> ``sigmoid``."""
    short = name.rstrip("()").rsplit(".", 1)[-1]
    return short[:-1] if short.endswith("_") and len(short) > 1 else short


class Floating:
    """Which expressions are known to be floating tensors (the dtype autograd differentiates)."""

    def __init__(self, model: RequiresGradFacts, known_op: Callable[[str], bool]) -> None:
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
            values = bound_values(self.model, expr, updates=False, pieces=True)
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
            if short in JOINING and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
                # torch.cat([x, pad]): the pieces' dtypes promote, a floating one makes the result floating
                return any(self.floating(e) for e in call.args[0].elts if not isinstance(e, ast.Starred))
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

    def written_floating(self, write: ast.AST) -> bool:
        """The in-place write itself raises on an integral or boolean tensor ("result type
        Float can't be cast to the desired output type Long", measured): true division
        (``x /= n``, ``x.div_(n)`` without ``rounding_mode``), a floating operand (``x *= 0.5``,
        ``x.add_(h)`` with ``h`` floating) or a float-only op (``x.sqrt_()``). Where the program
        gets past the write, the written tensor is floating."""
        if isinstance(write, ast.AugAssign):
            if isinstance(write.op, ast.Div):
                return True
            return isinstance(write.op, _FLOATING_OPERAND_OPS) and self.floating(write.value)
        if not (isinstance(write, ast.Call) and isinstance(write.func, ast.Attribute)
                and write.func.attr.endswith("_") and self.model.torch_name(write.func) is None):
            return False
        method = write.func.attr[:-1]
        if method in _FLOAT_ONLY_INPLACE:
            return True
        if method in ("div", "true_divide") and not any(k.arg == "rounding_mode" for k in write.keywords):
            return True
        return method in ("add", "sub", "mul", "pow") and bool(write.args) \
            and not isinstance(write.args[0], ast.Starred) and self.floating(write.args[0])

    def _is_dtype(self, expr: ast.expr) -> bool:
        return (self.model.torch_name(expr) or "").startswith("torch.") and isinstance(expr, ast.Attribute)


# ---------------------------------------------------------------- the project's dtypes
# Where a project computes in one float dtype (the default, float32) and one integral dtype
# (int64, with bool), ``x = x op y`` cannot take another dtype than ``x op= y`` keeps: every
# floating operand is float32 (float32 op int64 or bool is float32), every integral one int64.
# Anything that can make another dtype, or a dtype the analysis cannot read, is evidence of
# mixed dtypes, found by one walk of each file (of every file of the run, through the index).
_OTHER_DTYPE_NAMES = frozenset({
    "half", "double", "bfloat16", "float16", "float64", "cfloat", "cdouble", "chalf", "complex32",
    "complex64", "complex128", "int", "int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64",
    "short", "qint8", "quint8", "qint32", "quint4x2", "HalfTensor", "DoubleTensor", "BFloat16Tensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "autocast", "amp", "GradScaler",
    "set_default_dtype", "set_default_tensor_type", "from_numpy", "torch_dtype", "read_image",
    "decode_image", "pil_to_tensor", "PILToTensor",
})
# Not among them: complex64, the complex counterpart of the project's float32 that
# `view_as_complex`, `polar` and `complex` make of it (as `fft` always did): measured with
# torch, wherever `x op= y` runs over float32, int64, bool and complex64 (a float target with
# a complex operand raises), `x op y` has x's dtype (tests/test_dtype_model.py). complex128
# and complex32 are other dtypes (the conversions `.cfloat()`, `torch.complex64` still count).
_OTHER_DTYPE_METHODS = frozenset({"half", "double", "bfloat16", "int", "short", "byte", "char", "cfloat",
                                  "cdouble", "type", "view"})  # `.view(torch.int32)`: a reinterpretation
_OTHER_DTYPE_WORDS = ("float16", "float64", "bfloat16", "bf16", "fp16", "fp64", "half", "double",
                      "autocast", "complex", "int8", "int16", "int32", "uint8", "float8", "mixed")
_DATA_LIBRARIES = ("numpy", "scipy", "pandas", "h5py", "PIL", "cv2", "imageio", "skimage")
_CONVERSIONS = frozenset({"tensor", "as_tensor", "asarray", "Tensor"})
_CALL_NAMES = _OTHER_DTYPE_METHODS | {"to", "type", "load"} | _CONVERSIONS  # a call ``_hit`` may name


def other_dtype(module: ast.Module, children: Optional[Mapping[ast.AST, List[ast.AST]]] = None) -> Optional[str]:
    """The first thing in ``module`` that makes (or may make) a tensor of another dtype than
    float32, int64 or bool, as ``"`.half()` at line 12"``; None when there is none. The first
    that may make another *floating* dtype (or one the analysis cannot read) is named before any
    that only makes another integral one; where all of them are integral, the first is named
    with :data:`INTEGRAL_ONLY` after it (:func:`integral_only`).
    ``children``: every node's child nodes (``Source.children``), to walk without ``ast.walk``.
    One walk, in ``ast.walk``'s order (breadth first): it was four walks of every file of a run."""
    if children is None:
        nodes = list(ast.walk(module))
    else:
        nodes, i = [module], 0
        while i < len(nodes):
            nodes.extend(children[nodes[i]])
            i += 1
    state = _FileFacts(lambda: nodes, lambda: nodes, lambda: nodes)
    integral: Optional[Tuple[str, ast.AST]] = None
    for node in nodes:
        found = _hit(node, state)
        if found is None:
            continue
        if not _integral_hit(found[1]):
            return found[0].format(getattr(found[1], "lineno", 0))
        integral = integral or found
    if integral is not None:
        return integral[0].format(getattr(integral[1], "lineno", 0)) + INTEGRAL_ONLY
    return None


# The dtypes (and typed constructors) whose tensors are integral; quantized ones are not among
# them (a quantized model computes in floating dtypes of its own choosing).
_INTEGRAL_NAMES = frozenset({
    "int", "int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64", "short", "IntTensor", "ShortTensor",
    "CharTensor", "ByteTensor",
})
_INTEGRAL_METHODS_MADE = frozenset({"int", "short", "byte", "char"})  # `.int()`: int32; `.char()`: int8


def _integral_dtype_expr(expr: ast.expr) -> bool:
    """``torch.int32``, ``np.uint8``, ``torch.IntTensor``, ``int``: an integral dtype, read off the text."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in _INTEGRAL_NAMES
    return isinstance(expr, ast.Name) and expr.id in ("int", *_INTEGRAL_NAMES)


def _integral_hit(node: ast.AST) -> bool:
    """A hit of :func:`_hit` that can only make an integral tensor: the name of an integral
    dtype (``torch.int32``, ``from torch import int16``), ``dtype=`` one, ``.int()`` /
    ``.short()`` / ``.byte()`` / ``.char()``, ``.to`` / ``.type`` / ``.view`` with integral
    dtypes only. Strings (``"int8"`` names quantization as often as a dtype), loads, arrays and
    ``torch_dtype=`` never count as integral."""
    cls = node.__class__
    if cls is ast.Attribute:
        return node.attr in _INTEGRAL_NAMES  # type: ignore[attr-defined]
    if cls is ast.Name:
        return node.id in _INTEGRAL_NAMES  # type: ignore[attr-defined]
    if cls is ast.alias:
        return node.name.rsplit(".", 1)[-1] in _INTEGRAL_NAMES  # type: ignore[attr-defined]
    if cls is ast.keyword:
        return node.arg == "dtype" and _integral_dtype_expr(node.value)  # type: ignore[attr-defined]
    if cls is ast.Call and isinstance(node.func, ast.Attribute):  # type: ignore[attr-defined]
        method = node.func.attr  # type: ignore[attr-defined]
        args = [a for a in node.args if _looks_like_dtype(a) and not _plain_dtype(a)]  # type: ignore[attr-defined]
        args += [k.value for k in node.keywords if k.arg == "dtype" and not _plain_dtype(k.value)]  # type: ignore[attr-defined]
        if method in _INTEGRAL_METHODS_MADE and not args:
            return True
        return method in ("to", "type", "view") and bool(args) and all(_integral_dtype_expr(a) for a in args)
    return False


class IndexedSource(Protocol):
    """What :func:`indexed_other_dtype` reads of a ``source.Source``."""

    children: Dict[ast.AST, List[ast.AST]]
    parents: Dict[ast.AST, ast.AST]

    def walked(self, node_type: type) -> List[ast.AST]: ...


def indexed_other_dtype(source: IndexedSource) -> Optional[str]:
    """:func:`other_dtype` of ``source``'s module, the same answer without walking every node:
    only the node types that can make another dtype are looked at (from the lists the source's
    one walk filed: names and attributes, calls, constants, the imports' aliases, the calls' and
    classes' keywords), and of those that do, the first in breadth-first order is named (the
    shallower; at one depth, the one whose path from the module comes first), one that may make
    a floating dtype before any integral one, as :func:`other_dtype` names them."""
    walked = source.walked
    calls = walked(ast.Call)
    imports = walked(ast.Import)  # with ImportFrom
    state = _FileFacts(lambda: list(source.children), lambda: calls, lambda: imports, source.parents)
    Attribute, Name = ast.Attribute, ast.Name
    # Each group screened first by what ``_hit`` requires of its nodes (their names, a string).
    names = [n for n in walked(Name) if (n.attr if n.__class__ is Attribute else n.id) in _OTHER_DTYPE_NAMES]  # type: ignore[attr-defined]
    called = [c for c in calls if (c.func.attr if c.func.__class__ is Attribute  # type: ignore[attr-defined]
                                   else c.func.id if c.func.__class__ is Name else "") in _CALL_NAMES]  # type: ignore[attr-defined]
    texts = [c for c in walked(ast.Constant) if c.value.__class__ is str]  # type: ignore[attr-defined]
    hits = []
    for group in (names, called, texts, [a for i in imports for a in i.names],  # type: ignore[attr-defined]
                  [k for n in (*calls, *walked(ast.ClassDef)) for k in n.keywords]):  # type: ignore[attr-defined]
        for node in group:
            found = _hit(node, state)
            if found is not None:
                hits.append(found)
    if not hits:
        return None
    parents, children = source.parents, source.children
    floating = [hit for hit in hits if not _integral_hit(hit[1])]
    first = min(floating or hits, key=lambda hit: _breadth_first_key(hit[1], parents, children))
    return first[0].format(getattr(first[1], "lineno", 0)) + ("" if floating else INTEGRAL_ONLY)


def _breadth_first_key(node: ast.AST, parents: Mapping[ast.AST, ast.AST],
                       children: Mapping[ast.AST, List[ast.AST]]) -> Tuple[int, List[int]]:
    """Where ``node`` comes in a breadth-first walk: its depth, then its path from the module
    (each step's position among its parent's children); a breadth-first walk meets the nodes of
    one depth in the order of their paths."""
    path: List[int] = []
    up = parents.get(node)
    while up is not None:
        path.append(next(i for i, child in enumerate(children[up]) if child is node))
        node, up = up, parents.get(up)
    path.reverse()
    return len(path), path


class _FileFacts:
    """What :func:`_hit` may need of the whole file, worked out once when first needed:
    ``every()`` its nodes, ``calls()`` its calls, ``imports()`` its import statements;
    ``parents`` (where known) every node's parent: a string is then a docstring where its
    parent is an expression statement (the value of one), without a look at every node."""

    def __init__(self, every: Callable[[], Iterable[ast.AST]], calls: Callable[[], Iterable[ast.AST]],
                 imports: Callable[[], Iterable[ast.AST]],
                 parents: Optional[Mapping[ast.AST, ast.AST]] = None) -> None:
        self.every, self.calls, self.imports, self.parents = every, calls, imports, parents
        self.data_library: Optional[bool] = None
        self.docstrings: Optional[Set[int]] = None
        self.into_state: Optional[Set[int]] = None


def _hit(node: ast.AST, state: _FileFacts) -> Optional[Tuple[str, ast.AST]]:
    """(message with ``{}`` for the line, node) when ``node`` makes another dtype; whether it
    does depends on the node and on facts of the whole file (``state``), not on where the walk is."""
    Attribute, Name, Constant, Call = ast.Attribute, ast.Name, ast.Constant, ast.Call
    cls = node.__class__
    if cls is Attribute:
        attr = node.attr  # type: ignore[attr-defined]
        if attr in _OTHER_DTYPE_NAMES and attr != "int":
            return f"`.{attr}` at line {{}}", node
        value = node.value  # type: ignore[attr-defined]
        if attr == "int" and isinstance(value, Name) and value.id == "torch":
            return "`torch.int` at line {}", node
    elif cls is Name:
        name = node.id  # type: ignore[attr-defined]
        if name in _OTHER_DTYPE_NAMES and name not in ("int", "complex"):
            return f"`{name}` at line {{}}", node
    elif cls is ast.alias:
        name = node.name  # type: ignore[attr-defined]
        if name.rsplit(".", 1)[-1] in _OTHER_DTYPE_NAMES:
            return f"`{name}` imported at line {getattr(node, 'lineno', 0) or 0}", node
    elif cls is ast.keyword:
        arg = node.arg  # type: ignore[attr-defined]
        if arg in ("dtype", "torch_dtype") and not _plain_dtype(node.value):  # type: ignore[attr-defined]
            return f"`{arg}=` at line {getattr(node.value, 'lineno', 0)}", node  # type: ignore[attr-defined]
    elif cls is Constant:
        value = node.value  # type: ignore[attr-defined]
        if isinstance(value, str):
            text = value.lower()
            word = next((w for w in _OTHER_DTYPE_WORDS if w in text), None)
            if word is not None:
                if state.parents is not None:  # (an expression statement's one child is its value)
                    if state.parents.get(node).__class__ is not ast.Expr:
                        return f"{word!r} at line {{}}", node
                    return None
                if state.docstrings is None:
                    state.docstrings = {id(s.value) for s in state.every() if isinstance(s, ast.Expr)
                                        and isinstance(s.value, Constant)}
                if id(node) not in state.docstrings:
                    return f"{word!r} at line {{}}", node
    elif cls is Call:
        func = node.func  # type: ignore[attr-defined]
        if isinstance(func, Attribute):
            method = func.attr
            if method in _OTHER_DTYPE_METHODS and (
                    method not in ("type", "view", "int") or _dtype_argument(node)  # type: ignore[arg-type]
                    or method == "int" and not node.args and not node.keywords  # type: ignore[attr-defined]
                    and not (isinstance(func.value, Name) and func.value.id in ("np", "numpy"))):
                return f"`.{method}(...)` at line {{}}", node
            if method in ("to", "type") and any(not _plain_dtype(a) and _looks_like_dtype(a)
                                                for a in node.args):  # type: ignore[attr-defined]
                return f"`.{method}(...)` at line {{}}", node
            if method == "load" and isinstance(func.value, Name) \
                    and func.value.id in ("torch", "pickle", "joblib"):
                if state.into_state is None:  # copied into the parameters' dtypes
                    state.into_state = {id(a) for c in state.calls() if isinstance(c, Call)
                                        and isinstance(c.func, Attribute) and c.func.attr == "load_state_dict"
                                        for a in c.args}
                if id(node) not in state.into_state:
                    return f"`{func.value.id}.load(...)` (tensors of any dtype) at line {{}}", node
        if state.data_library is None:
            state.data_library = _imports_data_library(state.imports())
        if state.data_library and not any(k.arg == "dtype" for k in node.keywords):  # type: ignore[attr-defined]
            name = func.attr if isinstance(func, Attribute) else func.id if isinstance(func, Name) else ""
            if name in _CONVERSIONS and node.args and not _literal_data(node.args[0]):  # type: ignore[attr-defined]
                return f"`{name}(...)` of data that may come from an array at line {{}}", node
    return None


def _imports_data_library(nodes: Iterable[ast.AST]) -> bool:
    """Whether one of ``nodes`` imports numpy, PIL... (``_DATA_LIBRARIES``)."""
    Import, ImportFrom = ast.Import, ast.ImportFrom
    for n in nodes:
        cls = n.__class__
        if cls is Import:
            if any(a.name.split(".")[0] in _DATA_LIBRARIES for a in n.names):  # type: ignore[attr-defined]
                return True
        elif cls is ImportFrom and (n.module or "").split(".")[0] in _DATA_LIBRARIES:  # type: ignore[attr-defined]
            return True
    return False


def _plain_dtype(expr: ast.expr) -> bool:
    """``torch.float32``/``torch.float``/``torch.long``/``torch.int64``/``torch.bool``, a
    tensor's own ``.dtype``, ``None``, or the Python types ``float``/``int``/``bool``."""
    if isinstance(expr, ast.Constant):
        return expr.value is None
    if isinstance(expr, ast.Name):
        return expr.id in ("float", "bool")
    if isinstance(expr, ast.Attribute):
        if expr.attr == "dtype":  # a tensor's own dtype; not an object's setting (`self.dtype`, `args.dtype`)
            owner = expr.value.id if isinstance(expr.value, ast.Name) else expr.value.attr \
                if isinstance(expr.value, ast.Attribute) else ""
            return not any(w in owner.lower() for w in ("self", "cls", "config", "cfg", "args", "opt", "param"))
        return isinstance(expr.value, ast.Name) and expr.value.id == "torch" \
            and expr.attr in ("float", "float32", "long", "int64", "bool")
    return False


def _looks_like_dtype(expr: ast.expr) -> bool:
    """An argument of ``.to``/``.type`` that is a dtype or may be one (``.to(device)`` by name
    may also be a dtype: names that say ``dtype`` count; a tensor's ``.device`` does not)."""
    if isinstance(expr, ast.Attribute):
        return expr.attr != "device" and ("dtype" in expr.attr.lower() or isinstance(expr.value, ast.Name)
                                          and expr.value.id == "torch")
    if isinstance(expr, ast.Name):
        return "dtype" in expr.id.lower() or "type" == expr.id.lower()
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str) and "tensor" in expr.value.lower()


def _dtype_argument(call: ast.Call) -> bool:
    return any(_looks_like_dtype(a) and not _plain_dtype(a) for a in call.args) or any(
        k.arg == "dtype" and not _plain_dtype(k.value) for k in call.keywords)


def _literal_data(expr: ast.expr) -> bool:
    """Python numbers written out (a list of them, nested): float32 or int64, never float64."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, (int, float, bool))
    if isinstance(expr, (ast.List, ast.Tuple)):
        return all(_literal_data(e) for e in expr.elts)
    if isinstance(expr, ast.UnaryOp):
        return _literal_data(expr.operand)
    return False
