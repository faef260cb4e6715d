"""Generate ``codemod/torch_api.py``: the facts about torch's API that the static passes need.

The passes must not import torch (editors and CI checks should not pay for it), so what they
need to know about torch is kept as plain data, produced here from the installed torch and
checked against it by ``tests/test_torch_api.py``. Run: ``python scripts/gen_torch_api.py``.
"""

from __future__ import annotations

import ast
import inspect
import pathlib
import pprint
import re
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = pathlib.Path(__file__).resolve().parent.parent / "codemod" / "torch_api.py"

# Methods whose name ends in "_" but which do not change a tensor's values: rewriting them
# would only break code (requires_grad_ sets a flag, share_memory_ moves storage, detach_
# and the resize/set family change identity or metadata in ways no out-of-place twin keeps).
NOT_VALUE_MUTATING = {
    "requires_grad_", "share_memory_", "detach_", "set_", "resize_", "resize_as_",
    "resize_as_sparse_", "sparse_resize_", "sparse_resize_and_clear_", "as_strided_",
    "apply_", "map_", "map2_", "retain_grad_",
}

# In-place methods whose out-of-place twin always returns self's dtype (or raises), so the
# rewrite cannot promote the dtype whatever the other operands are. Checked by the test.
SAME_DTYPE_TWINS = {
    "masked_fill", "masked_scatter", "index_fill", "index_add", "index_copy", "index_put",
    "index_reduce", "scatter", "scatter_add", "scatter_reduce", "put", "lerp",
}

AUG_OPERATORS = {
    "+=": "add", "-=": "sub", "*=": "mul", "/=": "truediv", "//=": "floordiv", "%=": "mod",
    "**=": "pow", "<<=": "lshift", ">>=": "rshift", "&=": "and", "|=": "or", "^=": "xor",
    "@=": "matmul",
}


def _schema_writes_self() -> set[str]:
    """Names of aten ops whose first argument is written (``Tensor(a!) self``)."""
    names = set()
    for schema in torch._C._jit_get_all_schemas():
        args = schema.arguments
        if args and args[0].alias_info is not None and args[0].alias_info.is_write:
            names.add(schema.name.split("::", 1)[1])
    return names


def _pyi_tensor_returning(path: pathlib.Path, class_name: str | None = None) -> set[str]:
    """Functions (or methods of ``class_name``) whose every overload returns ``Tensor``."""
    tree = ast.parse(path.read_text())
    body = tree.body
    if class_name:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name).body
    returns: dict[str, set[str]] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef) and node.returns is not None:
            returns.setdefault(node.name, set()).add(ast.unparse(node.returns))
    return {n for n, r in returns.items() if r == {"Tensor"} and not n.startswith("__")}


def _documented_tensor_returning() -> set[str]:
    """``torch.linalg``, ``torch.fft`` and ``torch.special`` functions (builtins with no
    ``.pyi``) whose documented signature, the first line of their docstring, returns
    ``-> Tensor`` (``linalg.norm(A, ...) -> Tensor``; ``linalg.qr`` returns a tuple: left out)."""
    found: set[str] = set()
    for prefix in ("linalg", "fft", "special"):
        namespace = getattr(torch, prefix)
        for name in dir(namespace):
            fn = getattr(namespace, name)
            if name.startswith("_") or not callable(fn) or inspect.isclass(fn):
                continue
            doc = (fn.__doc__ or "").strip()
            first = doc.splitlines()[0] if doc else ""
            if re.search(r"\)\s*->\s*Tensor\s*$", first) and _fresh_when_called(fn):
                found.add(f"torch.{prefix}.{name}")
    return found


def _fresh_when_called(fn) -> bool:
    """Called on a small fixed matrix (alone, then twice), ``fn`` returns a tensor that shares
    no storage with its input (``linalg.diagonal`` is a view: left out, as are functions no
    such call runs)."""
    for count in (1, 2):
        # a fixed symmetric positive definite matrix: the verdict must not depend on the RNG
        x = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], dtype=torch.float64)
        try:
            with torch.random.fork_rng():
                out = fn(*([x] * count))
        except Exception:  # noqa: BLE001 - another signature
            continue
        if not isinstance(out, torch.Tensor):
            return False
        return out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
    return False


def _aten_single_tensor() -> set[str]:
    """aten op names every overload of which returns exactly one ``Tensor`` (what ``_VF.<name>``
    calls: ``aten::norm``, whose Python function ``torch.norm`` no ``.pyi`` annotates)."""
    returns: dict[str, set[str]] = {}
    for schema in torch._C._jit_get_all_schemas():
        namespace, name = schema.name.split("::", 1)
        if namespace == "aten":
            returns.setdefault(name, set()).add(", ".join(str(r.type) for r in schema.returns))
    return {n for n, r in returns.items() if r == {"Tensor"}}


def _python_defined_returning(functions_returning: set[str]) -> tuple[set[str], set[str]]:
    """The functions of ``torch/functional.py`` (``torch.norm``, ``torch.stft``) and the methods
    of ``torch.Tensor`` defined in Python (``torch/_tensor.py``: ``Tensor.norm``) that return a
    tensor: no ``.pyi`` lists them. A function counts where it is annotated ``-> Tensor`` or
    each of its returns (the ``handle_torch_function`` one aside) calls a tensor-returning
    function (``_VF.<op>`` of a single-tensor aten op, ``torch.linalg.vector_norm``); a method
    where each return calls such a ``torch.<name>(self, ...)``."""
    torch_dir = pathlib.Path(torch.__file__).parent
    aten = _aten_single_tensor()

    def returns_tensor(call: ast.expr, known: set[str]) -> bool:
        if not isinstance(call, ast.Call):
            return False
        text = ast.unparse(call.func)
        if text.startswith("_VF."):
            return text[4:] in aten
        return text.startswith("torch.") and text in known

    def each_return_tensor(fn: ast.FunctionDef, known: set[str]) -> bool:
        values = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return)]
        values = [v for v in values if not (isinstance(v, ast.Call) and isinstance(v.func, ast.Name)
                                            and v.func.id == "handle_torch_function")]
        return bool(values) and all(v is not None and returns_tensor(v, known) for v in values)

    functional = ast.parse((torch_dir / "functional.py").read_text())
    defs: dict[str, list[ast.FunctionDef]] = {}
    for node in functional.body:
        if isinstance(node, ast.FunctionDef) and node.name in torch.functional.__all__:
            defs.setdefault(node.name, []).append(node)
    functions = set()
    for name, found in defs.items():
        annotated = {ast.unparse(f.returns) for f in found if f.returns is not None}
        if annotated == {"Tensor"} or not annotated and len(found) == 1 \
                and each_return_tensor(found[0], functions_returning):
            functions.add(f"torch.{name}")
    known = functions_returning | functions
    tensor_class = next(n for n in ast.parse((torch_dir / "_tensor.py").read_text()).body
                        if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    methods = {f.name for f in tensor_class.body if isinstance(f, ast.FunctionDef) and not f.name.startswith("_")
               and f.returns is None and each_return_tensor(f, known)}
    return functions, methods


def _inplace_param_callables() -> dict[str, int]:
    """torch callables taking ``inplace``, by qualified name, with its positional index."""
    found: dict[str, int] = {}
    for name in dir(nn):
        cls = getattr(nn, name)
        if not (inspect.isclass(cls) and issubclass(cls, nn.Module)):
            continue
        params = list(inspect.signature(cls.__init__).parameters)[1:]
        if "inplace" in params:
            index = params.index("inplace")
            found[f"torch.nn.{name}"] = index
            found[f"{cls.__module__}.{name}"] = index
    for name in dir(F):
        fn = getattr(F, name)
        if name.startswith("_") or not callable(fn):
            continue
        try:
            params = list(inspect.signature(fn).parameters)
        except (TypeError, ValueError):
            continue
        if "inplace" in params:
            found[f"torch.nn.functional.{name}"] = params.index("inplace")
    return dict(sorted(found.items()))


def _modules_returning_tensor() -> list[str]:
    names = []
    for name in dir(nn):
        cls = getattr(nn, name)
        if inspect.isclass(cls) and issubclass(cls, nn.Module) and cls is not nn.Module:
            ret = inspect.signature(cls.forward).return_annotation
            if ret in (torch.Tensor, "Tensor", "torch.Tensor"):
                names.append(f"torch.nn.{name}")
                names.append(f"{cls.__module__}.{name}")
    return sorted(set(names))


def _probe_saves() -> dict:
    """What each common op saves for backward, found by running it and reading its grad_fn.

    Keys are how the op is spelled in code: a method or function name (``exp``, ``matmul``),
    an operator (``*`` with a tensor or a number on the right: ``*`` and ``*scalar``), or a
    torch.nn module class. Values: the sorted subset of {"input0", "input1", "output"}.
    """

    def leaf(*shape):
        return (torch.rand(*shape) + 0.5).requires_grad_()

    a, b = leaf(3, 3), leaf(3, 3)
    batch = leaf(2, 3, 3)
    image = leaf(1, 2, 5, 5)
    unary = [
        "exp", "expm1", "exp2", "sigmoid", "tanh", "relu", "sqrt", "rsqrt", "log", "log1p", "log2",
        "sin", "cos", "abs", "neg", "reciprocal", "erf", "sign", "square", "clone", "contiguous",
        "t", "sum", "mean", "flatten", "tril", "triu", "floor", "round", "sinh", "cosh",
        "asin", "acos", "atan", "atanh", "logit", "frac", "trunc", "ceil", "sgn",
    ]
    probes = {name: (lambda n=name: getattr(torch, n)(a) if hasattr(torch, n) else getattr(a, n)(), (a,))
              for name in unary}
    probes.update({
        "softmax": (lambda: torch.softmax(a, -1), (a,)),
        "log_softmax": (lambda: torch.log_softmax(a, -1), (a,)),
        "gelu": (lambda: F.gelu(a), (a,)), "silu": (lambda: F.silu(a), (a,)),
        "elu": (lambda: F.elu(a), (a,)), "leaky_relu": (lambda: F.leaky_relu(a), (a,)),
        "hardtanh": (lambda: F.hardtanh(a), (a,)), "relu6": (lambda: F.relu6(a), (a,)),
        "softplus": (lambda: F.softplus(a), (a,)), "mish": (lambda: F.mish(a), (a,)),
        "hardswish": (lambda: F.hardswish(a), (a,)), "hardsigmoid": (lambda: F.hardsigmoid(a), (a,)),
        "selu": (lambda: F.selu(a), (a,)), "celu": (lambda: F.celu(a), (a,)),
        "dropout": (lambda: F.dropout(a, 0.5, True), (a,)),
        "clamp": (lambda: torch.clamp(a, 0.6, 1.2), (a,)),
        "pow": (lambda: a ** b, (a, b)), "pow_scalar": (lambda: a ** 2, (a,)),
        "matmul": (lambda: a @ b, (a, b)), "mm": (lambda: torch.mm(a, b), (a, b)),
        "bmm": (lambda: torch.bmm(batch, batch), (batch, batch)),
        "mul": (lambda: a * b, (a, b)), "mul_scalar": (lambda: a * 2.0, (a,)),
        "div": (lambda: a / b, (a, b)), "div_scalar": (lambda: a / 2.0, (a,)),
        "add": (lambda: a + b, (a, b)), "add_scalar": (lambda: a + 2.0, (a,)),
        "sub": (lambda: a - b, (a, b)), "sub_scalar": (lambda: a - 2.0, (a,)),
        "remainder": (lambda: a % b, (a, b)), "remainder_scalar": (lambda: a % 2.0, (a,)),
        "floor_divide": (lambda: a // b, (a, b)), "floor_divide_scalar": (lambda: a // 2.0, (a,)),
        "where": (lambda: torch.where(a > 1, a, b), (a, b)),
        "masked_fill": (lambda: a.masked_fill(a > 1, 0.0), (a,)),
        "linear": (lambda: F.linear(a, b, None), (a, b)),
        "layer_norm": (lambda: F.layer_norm(a, (3,)), (a,)),
        "conv2d": (lambda: F.conv2d(image, leaf(2, 2, 3, 3)), (image,)),
        "argmax": (lambda: torch.argmax(a).float().requires_grad_(), (a,)),
        "argmin": (lambda: torch.argmin(a).float().requires_grad_(), (a,)),
        "gather": (lambda: torch.gather(a, 0, torch.zeros(1, 3, dtype=torch.long)), (a,)),
        "index_select": (lambda: torch.index_select(a, 0, torch.tensor([0])), (a,)),
        "cumsum": (lambda: torch.cumsum(a, 0), (a,)), "amax": (lambda: torch.amax(a, 0), (a,)),
        "logsumexp": (lambda: torch.logsumexp(a, 0), (a,)),
        "masked_select": (lambda: torch.masked_select(a, a > 1), (a,)),
        "cat": (lambda: torch.cat([a, b]), (a, b)), "stack": (lambda: torch.stack([a, b]), (a, b)),
        "einsum": (lambda: torch.einsum("ij,jk->ik", a, b), (a, b)),
        "repeat": (lambda: a.repeat(2, 1), (a,)), "max": (lambda: a.max(), (a,)),
        "norm": (lambda: a.norm(), (a,)), "var": (lambda: a.var(), (a,)),
        "std": (lambda: a.std(), (a,)), "prod": (lambda: a.prod(), (a,)),
        "addmm": (lambda: torch.addmm(a, a, b), (a, a, b)),
        "embedding": (lambda: F.embedding(torch.tensor([0, 2]), a), (torch.tensor([0, 2]), a)),
        "cross_entropy": (lambda: F.cross_entropy(a, torch.tensor([0, 1, 2])), (a,)),
        "mse_loss": (lambda: F.mse_loss(a, b), (a, b)),
        "cross": (lambda: torch.cross(a, b, dim=1), (a, b)),
        "scaled_dot_product_attention": (
            lambda: F.scaled_dot_product_attention(batch, batch, batch), (batch, batch, batch)),
    })
    for name in ("view", "reshape", "transpose", "permute", "expand", "squeeze", "unsqueeze",
                 "narrow", "select", "detach", "unflatten", "view_as"):
        probes.setdefault(name, (lambda: a.view(9), (a,)))  # views save no tensor
    modules = {
        "Linear": (lambda: nn.Linear(3, 3), a), "Sigmoid": (nn.Sigmoid, a), "Tanh": (nn.Tanh, a),
        "ReLU": (nn.ReLU, a), "GELU": (nn.GELU, a), "SiLU": (nn.SiLU, a), "ELU": (nn.ELU, a),
        "LeakyReLU": (nn.LeakyReLU, a), "Softmax": (lambda: nn.Softmax(-1), a),
        "LogSoftmax": (lambda: nn.LogSoftmax(-1), a), "Dropout": (nn.Dropout, a),
        "LayerNorm": (lambda: nn.LayerNorm(3), a), "Conv2d": (lambda: nn.Conv2d(2, 2, 3), image),
        "BatchNorm2d": (lambda: nn.BatchNorm2d(2), image), "Hardtanh": (nn.Hardtanh, a),
        "ReLU6": (nn.ReLU6, a), "Softplus": (nn.Softplus, a), "Mish": (nn.Mish, a),
        "Hardswish": (nn.Hardswish, a), "Identity": (nn.Identity, a),
        "Embedding": (lambda: nn.Embedding(4, 3), torch.tensor([0, 2])),
        "Conv1d": (lambda: nn.Conv1d(3, 3, 1), batch), "MaxPool2d": (lambda: nn.MaxPool2d(2), image),
        "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d(1), image),
        "BatchNorm1d": (lambda: nn.BatchNorm1d(3), a), "GroupNorm": (lambda: nn.GroupNorm(1, 2), image),
    }
    for name, (make, inp) in modules.items():
        module = make()
        probes[f"torch.nn.{name}"] = (lambda m=module, i=inp: m(i), (inp,))
    found = {}
    for name, (fn, inputs) in probes.items():
        out = fn()
        saved = set()
        if out.grad_fn is not None and out is not inputs[0]:
            for attr in dir(out.grad_fn):
                if not attr.startswith("_saved_"):
                    continue
                try:
                    value = getattr(out.grad_fn, attr)
                except Exception:
                    continue
                if not isinstance(value, torch.Tensor):
                    continue
                ptr = value.untyped_storage().data_ptr()
                if ptr == out.untyped_storage().data_ptr():
                    saved.add("output")
                for i, tensor in enumerate(inputs):
                    if ptr == tensor.untyped_storage().data_ptr():
                        saved.add(f"input{i}")
        found[name] = tuple(sorted(saved))
    return dict(sorted(found.items()))


# ---------------------------------------------------------------- views (issue 17)
# Candidates probed by ``_probe_views``: each is run on a small tensor and kept only where
# torch's own view metadata and errors say so.
_MULTI_VIEW_CANDIDATES = {
    "chunk": lambda t: t.chunk(2, 1), "split": lambda t: t.split(2, 1),
    "split_with_sizes": lambda t: t.split_with_sizes([2, 2], 1), "unbind": lambda t: t.unbind(1),
    "tensor_split": lambda t: t.tensor_split(2, 1), "hsplit": lambda t: t.hsplit(2),
    "vsplit": lambda t: t.vsplit(2), "dsplit": lambda t: t.unsqueeze(-1).expand(4, 4, 2).dsplit(2),
    "unsafe_chunk": lambda t: t.unsafe_chunk(2, 1), "unsafe_split": lambda t: t.unsafe_split(2, 1),
    "__iter__": lambda t: tuple(iter(t)),
}
_SINGLE_VIEW_CANDIDATES = {
    "view": lambda t: t.view(-1), "view_as": lambda t: t.view_as(t), "reshape": lambda t: t.reshape(-1),
    "reshape_as": lambda t: t.reshape_as(t.reshape(-1)), "t": lambda t: t.t(),
    "transpose": lambda t: t.transpose(0, 1), "permute": lambda t: t.permute(1, 0),
    "expand": lambda t: t.unsqueeze(0).expand(2, -1, -1), "expand_as": lambda t: t.expand_as(t),
    "narrow": lambda t: t.narrow(0, 0, 1), "select": lambda t: t.select(0, 0),
    "squeeze": lambda t: t.squeeze(), "unsqueeze": lambda t: t.unsqueeze(0),
    "flatten": lambda t: t.flatten(), "unflatten": lambda t: t.unflatten(0, (1, -1)),
    "diagonal": lambda t: t.diagonal(), "unfold": lambda t: t.unfold(0, 1, 1),
    "movedim": lambda t: t.movedim(0, 1), "moveaxis": lambda t: t.moveaxis(0, 1),
    "swapaxes": lambda t: t.swapaxes(0, 1), "swapdims": lambda t: t.swapdims(0, 1),
    "contiguous": lambda t: t.contiguous(), "detach": lambda t: t.detach(),
    "clone": lambda t: t.clone(), "mT": lambda t: t.mT, "T": lambda t: t.T,
}


def _raises_multi_view(fn) -> bool | None:
    """Does an in-place write to the result raise "... is the output of a function that
    returns multiple views ..." (the input requires grad)? None: the op refuses this input."""
    try:
        out = fn()
    except (RuntimeError, TypeError, AttributeError, IndexError):
        return None  # `view` of a non-contiguous tensor: no result at all
    try:
        out.mul_(2)
    except RuntimeError as exc:
        return "returns multiple views" in str(exc)
    return False


def _probe_views() -> dict:
    """Which methods return multiple views PyTorch refuses to modify in place (outputs of
    ``MULTI_VIEW_METHODS``), and which single-view methods keep that ban on a view of such an
    output: always (``VIEW_METHODS_ALWAYS``: a view whatever the input's layout) or only for
    some layouts (``VIEW_METHODS_SOMETIMES``: ``reshape`` copies a non-contiguous input)."""
    def base():
        return torch.randn(4, 4, requires_grad=True) * 1  # not a leaf: no leaf error first

    multi = sorted(name for name, make in _MULTI_VIEW_CANDIDATES.items()
                   if _raises_multi_view(lambda make=make: make(base())[0]))
    always, sometimes = [], []
    for name, make in _SINGLE_VIEW_CANDIDATES.items():
        contiguous = _raises_multi_view(lambda make=make: make(base().chunk(2, 0)[0]))
        strided = _raises_multi_view(lambda make=make: make(base().chunk(2, 1)[0]))
        if contiguous and strided is not False:
            always.append(name)
        elif contiguous or strided:
            sometimes.append(name)
    functions = []
    for name in multi:
        fn = getattr(torch, name, None)
        if fn is not None and _raises_multi_view(lambda fn=fn, name=name: _MULTI_VIEW_CANDIDATES[name](
                _FunctionForm(fn, base()))[0]):
            functions.append(f"torch.{name}")
    return {  # tuples: printed in this order (a one-line frozenset would not be)
        "MULTI_VIEW_METHODS": tuple(multi), "MULTI_VIEW_FUNCTIONS": tuple(sorted(functions)),
        "VIEW_METHODS_ALWAYS": tuple(sorted(always)), "VIEW_METHODS_SOMETIMES": tuple(sorted(sometimes)),
        "MODULES_WITH_PARAMETERS": tuple(_modules_with_parameters()),
    }


class _FunctionForm:
    """``t.chunk(2, 1)`` played as ``torch.chunk(t, 2, 1)``: the function form of a method."""

    def __init__(self, fn, tensor) -> None:
        self.fn, self.tensor = fn, tensor

    def __getattr__(self, name):
        return lambda *args: self.fn(self.tensor, *args)

    def unsqueeze(self, dim):  # dsplit's probe shapes its input first
        return _FunctionForm(self.fn, self.tensor.unsqueeze(dim))

    def expand(self, *sizes):
        return _FunctionForm(self.fn, self.tensor.expand(*sizes))


def _modules_with_parameters() -> list[str]:
    """torch.nn modules whose instances (made with small arguments) own parameters that require
    grad: their output requires grad while grad is on."""
    made = {
        "Linear": (3, 3), "Bilinear": (3, 3, 3), "Conv1d": (3, 3, 1), "Conv2d": (3, 3, 1),
        "Conv3d": (3, 3, 1), "ConvTranspose1d": (3, 3, 1), "ConvTranspose2d": (3, 3, 1),
        "Embedding": (4, 3), "EmbeddingBag": (4, 3), "LayerNorm": (3,), "GroupNorm": (1, 3),
        "BatchNorm1d": (3,), "BatchNorm2d": (3,), "RMSNorm": (3,), "GRU": (3, 3), "LSTM": (3, 3),
        "RNN": (3, 3), "MultiheadAttention": (4, 2), "PReLU": (), "LazyLinear": (3,),
        "ReLU": (), "Dropout": (), "Identity": (), "Flatten": (), "Tanh": (), "GELU": (),
    }
    found = []
    for name, args in made.items():
        cls = getattr(nn, name, None)
        if cls is None:
            continue
        module = cls(*args)
        if any(p.requires_grad for p in module.parameters(recurse=True)
               if not isinstance(p, nn.parameter.UninitializedParameter)):
            found += [f"torch.nn.{name}", f"{cls.__module__}.{name}"]
    return sorted(set(found))


# ---------------------------------------------------------------- saves measured by version counters
# (issue 14) What an op saves, found the way the error arises: run it on tensors that require
# grad, bump the version of one input (or of its output) in place, run backward, and see whether
# autograd complains that a tensor it saved was modified. Covers what ``_probe_saves`` does not:
# an operand that is a Python number (``x * 2`` saves nothing of x, ``x ** 2`` does), in-place
# variants (``leaky_relu_`` saves its result, ``leaky_relu`` its input), every norm, pad,
# pool, conv, reshape and cat module and function. Keys as in OP_SAVES; ``<op>_scalar`` is
# ``tensor op number``, ``r<op>_scalar`` is ``number op tensor`` (the tensor is input1).
# Entries here take precedence over OP_SAVES.

_INPLACE_ERROR = "modified by an inplace operation"


def _saves_by_version(fn, shapes, scalar_left: bool = False) -> tuple:
    """Which of the inputs (and the output) ``fn`` saves: the ones whose in-place change
    before backward raises the in-place error."""
    found = []
    for which in [*range(len(shapes)), "output"]:
        torch.manual_seed(0)
        leaves = [(torch.rand(*shape, dtype=torch.float64) + 0.5).requires_grad_() for shape in shapes]
        inputs = [leaf * 1 for leaf in leaves]
        out = fn(*inputs)
        if isinstance(out, (tuple, list)):
            out = out[0]
        if not isinstance(out, torch.Tensor) or not out.requires_grad:
            return ()
        victim = out if which == "output" else inputs[which]
        try:
            with torch.autograd.set_detect_anomaly(False):
                victim.add_(0)
                out.sum().backward()
        except RuntimeError as exc:
            if _INPLACE_ERROR in str(exc):
                index = which if which == "output" or not scalar_left else which + 1
                found.append("output" if which == "output" else f"input{index}")
    return tuple(sorted(found))


def _module_table() -> dict:
    """nn modules probed by the generator: a factory and an input shape (None: not probed)."""
    v, m, img, vol = (3, 4), (3, 4), (2, 3, 6, 6), (2, 3, 4, 4, 4)
    seq = (2, 3, 6)
    return {
        "BatchNorm1d": (lambda: nn.BatchNorm1d(3), seq), "BatchNorm2d": (lambda: nn.BatchNorm2d(3), img),
        "BatchNorm3d": (lambda: nn.BatchNorm3d(3), vol), "SyncBatchNorm": None,
        "InstanceNorm1d": (lambda: nn.InstanceNorm1d(3), seq), "InstanceNorm2d": (lambda: nn.InstanceNorm2d(3), img),
        "InstanceNorm3d": (lambda: nn.InstanceNorm3d(3), vol), "LayerNorm": (lambda: nn.LayerNorm(6), img),
        "GroupNorm": (lambda: nn.GroupNorm(1, 3), img), "RMSNorm": (lambda: nn.RMSNorm(6), img),
        "LocalResponseNorm": (lambda: nn.LocalResponseNorm(2), img),
        "Conv1d": (lambda: nn.Conv1d(3, 3, 3), seq), "Conv2d": (lambda: nn.Conv2d(3, 3, 3), img),
        "Conv3d": (lambda: nn.Conv3d(3, 3, 3), vol), "ConvTranspose1d": (lambda: nn.ConvTranspose1d(3, 3, 3), seq),
        "ConvTranspose2d": (lambda: nn.ConvTranspose2d(3, 3, 3), img),
        "ConvTranspose3d": (lambda: nn.ConvTranspose3d(3, 3, 3), vol),
        "ZeroPad2d": (lambda: nn.ZeroPad2d(1), img), "ConstantPad1d": (lambda: nn.ConstantPad1d(1, 0.0), seq),
        "ConstantPad2d": (lambda: nn.ConstantPad2d(1, 0.0), img), "ConstantPad3d": (lambda: nn.ConstantPad3d(1, 0.0), vol),
        "ReflectionPad1d": (lambda: nn.ReflectionPad1d(1), seq), "ReflectionPad2d": (lambda: nn.ReflectionPad2d(1), img),
        "ReplicationPad1d": (lambda: nn.ReplicationPad1d(1), seq),
        "ReplicationPad2d": (lambda: nn.ReplicationPad2d(1), img),
        "ReplicationPad3d": (lambda: nn.ReplicationPad3d(1), vol), "CircularPad2d": (lambda: nn.CircularPad2d(1), img),
        "MaxPool1d": (lambda: nn.MaxPool1d(2), seq), "MaxPool2d": (lambda: nn.MaxPool2d(2), img),
        "MaxPool3d": (lambda: nn.MaxPool3d(2), vol), "AvgPool1d": (lambda: nn.AvgPool1d(2), seq),
        "AvgPool2d": (lambda: nn.AvgPool2d(2), img), "AvgPool3d": (lambda: nn.AvgPool3d(2), vol),
        "AdaptiveAvgPool1d": (lambda: nn.AdaptiveAvgPool1d(1), seq),
        "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d(1), img),
        "AdaptiveAvgPool3d": (lambda: nn.AdaptiveAvgPool3d(1), vol),
        "AdaptiveMaxPool2d": (lambda: nn.AdaptiveMaxPool2d(1), img),
        "Flatten": (nn.Flatten, img), "Unflatten": (lambda: nn.Unflatten(1, (3, 1)), img),
        "Upsample": (lambda: nn.Upsample(scale_factor=2.0), img),
        "UpsamplingNearest2d": (lambda: nn.UpsamplingNearest2d(scale_factor=2.0), img),
        "UpsamplingBilinear2d": (lambda: nn.UpsamplingBilinear2d(scale_factor=2.0), img),
        "PixelShuffle": (lambda: nn.PixelShuffle(1), img), "PixelUnshuffle": (lambda: nn.PixelUnshuffle(1), img),
        "Dropout": (nn.Dropout, img), "Dropout1d": (nn.Dropout1d, seq), "Dropout2d": (nn.Dropout2d, img),
        "Dropout3d": (nn.Dropout3d, vol), "AlphaDropout": (nn.AlphaDropout, img),
        "Linear": (lambda: nn.Linear(6, 6), img), "Identity": (nn.Identity, img),
        "ReLU": (nn.ReLU, img), "LeakyReLU": (nn.LeakyReLU, img), "PReLU": (nn.PReLU, img), "ELU": (nn.ELU, img),
        "SELU": (nn.SELU, img), "CELU": (nn.CELU, img), "GELU": (nn.GELU, img), "SiLU": (nn.SiLU, img),
        "Mish": (nn.Mish, img), "Sigmoid": (nn.Sigmoid, img), "Tanh": (nn.Tanh, img),
        "Hardtanh": (nn.Hardtanh, img), "ReLU6": (nn.ReLU6, img), "Hardswish": (nn.Hardswish, img),
        "Hardsigmoid": (nn.Hardsigmoid, img), "Softplus": (nn.Softplus, img), "Softsign": (nn.Softsign, img),
        "LogSigmoid": (nn.LogSigmoid, img), "Threshold": (lambda: nn.Threshold(0.5, 0.0), img),
        "Softmax": (lambda: nn.Softmax(-1), img), "LogSoftmax": (lambda: nn.LogSoftmax(-1), img),
        "Softmax2d": (nn.Softmax2d, img), "GLU": (nn.GLU, img), "Tanhshrink": (nn.Tanhshrink, img),
        "Softshrink": (nn.Softshrink, img), "Hardshrink": (nn.Hardshrink, img),
    }


def _measured_saves() -> dict:
    v, m, img, vol = (3, 4), (3, 4), (2, 3, 6, 6), (2, 3, 4, 4, 4)
    seq = (2, 3, 6)
    probes: dict = {}
    scalar = {"mul": lambda a: a * 2.0, "div": lambda a: a / 2.0, "add": lambda a: a + 2.0,
              "sub": lambda a: a - 2.0, "pow": lambda a: a ** 2.0, "remainder": lambda a: a % 2.0,
              "floor_divide": lambda a: a // 2.0, "matmul": None}
    rscalar = {"mul": lambda a: 2.0 * a, "div": lambda a: 2.0 / a, "add": lambda a: 2.0 + a,
               "sub": lambda a: 2.0 - a, "pow": lambda a: 2.0 ** a, "remainder": lambda a: 2.0 % a,
               "floor_divide": lambda a: 2.0 // a}
    for name, fn in scalar.items():
        if fn is not None:
            probes[f"{name}_scalar"] = (fn, [v])
    for name, fn in rscalar.items():
        probes[f"r{name}_scalar"] = (fn, [v], True)
    probes.update({
        "mul": (lambda a, b: a * b, [v, v]), "div": (lambda a, b: a / b, [v, v]),
        "pow": (lambda a, b: a ** b, [v, v]), "matmul": (lambda a, b: a @ b, [(3, 4), (4, 3)]),
        "einsum": (lambda a, b: torch.einsum("nd,ndm->nm", a, b), [(2, 3), (2, 3, 3)]),
        "cat": (lambda a, b: torch.cat([a, b]), [v, v]), "concat": (lambda a, b: torch.concat([a, b]), [v, v]),
        "stack": (lambda a, b: torch.stack([a, b]), [v, v]),
        "reshape": (lambda a: a.reshape(-1), [v]), "flatten": (lambda a: a.flatten(), [v]),
        "repeat_interleave": (lambda a: a.repeat_interleave(2, 0), [v]), "tile": (lambda a: a.tile(2), [v]),
        "diag_embed": (lambda a: torch.diag_embed(a), [v]), "clip": (lambda a: a.clip(0.6, 1.2), [v]),
        "clamp_min": (lambda a: a.clamp_min(0.6), [v]), "clamp_max": (lambda a: a.clamp_max(1.2), [v]),
        "cumprod": (lambda a: a.cumprod(0), [v]), "roll": (lambda a: a.roll(1, 0), [v]),
        "flip": (lambda a: a.flip(0), [v]), "baddbmm": (lambda a, b, c: torch.baddbmm(a, b, c),
                                                        [(2, 3, 3), (2, 3, 3), (2, 3, 3)]),
        "max_dim": (lambda a: torch.max(a, 1), [v]), "min_dim": (lambda a: torch.min(a, 1), [v]),
        "maximum": (lambda a, b: torch.maximum(a, b), [v, v]), "minimum": (lambda a, b: torch.minimum(a, b), [v, v]),
        "fmax": (lambda a, b: torch.fmax(a, b), [v, v]), "fmin": (lambda a, b: torch.fmin(a, b), [v, v]),
        "outer": (lambda a, b: torch.outer(a, b), [(3,), (3,)]), "cdist": (lambda a, b: torch.cdist(a, b), [v, v]),
        "normalize": (lambda a: F.normalize(a, dim=-1), [v]), "rms_norm": (lambda a: F.rms_norm(a, (4,)), [v]),
        "pad": (lambda a: F.pad(a, (1, 1)), [v]),
        "interpolate": (lambda a: F.interpolate(a, scale_factor=2.0), [img]),
        "upsample": (lambda a: F.interpolate(a, scale_factor=2.0, mode="bilinear"), [img]),
        "batch_norm": (lambda a: F.batch_norm(a, None, None, training=True), [img]),
        "instance_norm": (lambda a: F.instance_norm(a), [img]),
        "group_norm": (lambda a: F.group_norm(a, 1), [img]), "local_response_norm": (
            lambda a: F.local_response_norm(a, 2), [img]),
        "max_pool1d": (lambda a: F.max_pool1d(a, 2), [seq]), "max_pool2d": (lambda a: F.max_pool2d(a, 2), [img]),
        "max_pool3d": (lambda a: F.max_pool3d(a, 2), [vol]), "avg_pool1d": (lambda a: F.avg_pool1d(a, 2), [seq]),
        "avg_pool2d": (lambda a: F.avg_pool2d(a, 2), [img]), "avg_pool3d": (lambda a: F.avg_pool3d(a, 2), [vol]),
        "adaptive_avg_pool1d": (lambda a: F.adaptive_avg_pool1d(a, 1), [seq]),
        "adaptive_avg_pool2d": (lambda a: F.adaptive_avg_pool2d(a, 1), [img]),
        "adaptive_max_pool2d": (lambda a: F.adaptive_max_pool2d(a, 1), [img]),
        "conv1d": (lambda a, w: F.conv1d(a, w), [seq, (3, 3, 3)]),
        "conv3d": (lambda a, w: F.conv3d(a, w), [vol, (3, 3, 3, 3, 3)]),
        "conv_transpose2d": (lambda a, w: F.conv_transpose2d(a, w), [img, (3, 3, 3, 3)]),
        "pixel_shuffle": (lambda a: F.pixel_shuffle(a, 1), [img]), "unfold": (lambda a: F.unfold(a, 2), [img]),
        "affine_grid": (lambda a: F.affine_grid(a, [2, 3, 4, 4], align_corners=False), [(2, 2, 3)]),
        "grid_sample": (lambda a, g: F.grid_sample(a, g - 1.0, align_corners=False), [img, (2, 4, 4, 2)]),
        "glu": (lambda a: F.glu(a), [v]), "logsigmoid": (lambda a: F.logsigmoid(a), [v]),
        "softsign": (lambda a: F.softsign(a), [v]), "tanhshrink": (lambda a: F.tanhshrink(a), [v]),
        "dropout1d": (lambda a: F.dropout1d(a, 0.5, True), [seq]),
        "dropout2d": (lambda a: F.dropout2d(a, 0.5, True), [img]),
    })
    for name in ("relu", "sigmoid", "tanh", "exp", "sqrt", "rsqrt", "reciprocal", "log", "abs", "neg",
                 "sin", "cos", "clamp", "leaky_relu", "elu", "hardtanh", "silu", "hardswish",
                 "hardsigmoid", "mish", "celu", "selu", "relu6", "dropout", "square", "floor", "round"):
        probes[f"{name}_"] = (_inplace_variant(name), [v])
    for name, other in (("mul_", True), ("div_", True), ("add_", True), ("sub_", True), ("pow_", True),
                        ("addcmul_", True), ("addcdiv_", True), ("lerp_", True), ("masked_fill_", False),
                        ("copy_", True), ("fill_", False), ("zero_", False)):
        probes[name] = (_inplace_binary(name), [v, v] if other else [v])
    modules = _module_table()
    for name, spec in modules.items():
        if spec is None:
            continue
        make, shape = spec
        module = make().double()
        probes[f"torch.nn.{name}"] = (lambda a, m=module: m(a), [shape])
    found = {}
    for name, (fn, shapes, *left) in probes.items():
        found[name] = _saves_by_version(fn, shapes, bool(left and left[0]))
    found.update(_indexed_forms())
    return dict(sorted(found.items()))


# (stop 46) The scatter and index family, which the probes above never ran: ``scatter_reduce`` and
# ``index_reduce`` save their input, their source and their result, the others none of these
# (``gather``-like reads save their input). Measured like OP_SAVES_MEASURED over every form of
# their arguments (each reduction, ``include_self`` or not, ``accumulate``, a number as the value);
# an op whose forms disagree is left out (unseen), so an entry holds for every call. Inputs are
# numbered by their place in the call, as the analysis numbers them: the receiver is input 0, then
# ``dim`` and ``index`` (inputs 1 and 2), so a source is input 3 (input 2 of ``index_put``, ``put``
# and ``masked_scatter``). In-place forms are measured on their own (``x.scatter_reduce_(...)``).

def _indexed_forms() -> dict:
    v = (3, 4)
    at = torch.tensor([[0, 1, 0, 2]] * 3)  # along dim 1 of a (3, 4) tensor
    rows = torch.tensor([0, 2, 0])  # along dim 0
    mask = torch.tensor([[True, False, True, False]] * 3)
    reductions = [(r, s) for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)]
    src = {0: 0, 1: 3}  # the receiver, the source (the fourth argument)
    forms: dict = {
        "scatter": [(lambda a, b, m: getattr(a, m)(1, at, b), [v, v], src),
                    (lambda a, m: getattr(a, m)(1, at, 2.0), [v], {0: 0}),
                    (lambda a, b, m: getattr(a, m)(1, at, b, reduce="add"), [v, v], src),
                    (lambda a, b, m: getattr(a, m)(1, at, b, reduce="multiply"), [v, v], src)],
        "scatter_add": [(lambda a, b, m: getattr(a, m)(1, at, b), [v, v], src)],
        "scatter_reduce": [(lambda a, b, m, r=r, s=s: getattr(a, m)(1, at, b, r, include_self=s), [v, v], src)
                           for r, s in reductions],
        "index_add": [(lambda a, b, m: getattr(a, m)(0, rows, b), [v, v], src),
                      (lambda a, b, m: getattr(a, m)(0, rows, b, alpha=2.0), [v, v], src)],
        "index_copy": [(lambda a, b, m: getattr(a, m)(0, rows, b), [v, v], src)],
        "index_fill": [(lambda a, m: getattr(a, m)(0, rows, 2.0), [v], {0: 0})],
        "index_reduce": [(lambda a, b, m, r=r, s=s: getattr(a, m)(0, rows, b, r, include_self=s), [v, v], src)
                         for r, s in reductions if r != "sum"],
        "index_put": [(lambda a, b, m, acc=acc: getattr(a, m)((rows,), b, accumulate=acc), [v, v], {0: 0, 1: 2})
                      for acc in (False, True)],
        "masked_scatter": [(lambda a, b, m: getattr(a, m)(mask, b), [v, v], {0: 0, 1: 2})],
        "put": [(lambda a, b, m, acc=acc: getattr(a, m)(rows, b.flatten()[:3], accumulate=acc), [v, v],
                 {0: 0, 1: 2}) for acc in (False, True)],
        "take_along_dim": [(lambda a, m: getattr(a, m)(at, 1), [v], {0: 0})],
        "take": [(lambda a, m: getattr(a, m)(at), [v], {0: 0})],
    }
    found = {}
    for name, variants in forms.items():
        for method in (name, f"{name}_"):
            if not hasattr(torch.Tensor, method):
                continue
            measured = set()
            for fn, shapes, places in variants:
                saved = _saves_by_version(lambda *t, fn=fn, method=method: fn(*t, method), shapes)
                measured.add(tuple(sorted(s if s == "output" else f"input{places[int(s[5:])]}" for s in saved)))
            if len(measured) == 1:
                found[method] = measured.pop()
    return found


def _inplace_variant(name: str):
    def run(a):
        if hasattr(a, f"{name}_"):
            return getattr(a, f"{name}_")(*((0.6, 1.2) if name == "clamp" else ()))
        fn = getattr(F, f"{name}_", None) or getattr(F, name)
        return fn(a, inplace=True) if fn is getattr(F, name, None) else fn(a)
    return run


def _inplace_binary(name: str):
    def run(a, *other):
        method = getattr(a, name)
        if name in ("addcmul_", "addcdiv_"):
            return method(other[0], other[0] + 1.0)
        if name == "lerp_":
            return method(other[0], 0.5)
        if name == "masked_fill_":
            return method(a.detach() > 1.0, 0.0)
        if name == "fill_":
            return method(1.0)
        return method(*other)
    return run


# ---------------------------------------------------------------- for whose gradient an input is saved
# (stop 43) ``x @ c`` saves ``x`` only to compute ``c``'s gradient: when ``c`` requires no grad
# (a constant, a fresh sample), nothing of ``x`` is saved and writing ``x`` later cannot raise.
# Measured the same way as OP_SAVES_MEASURED, once per pair: only input ``j`` requires grad, input
# ``k`` is bumped in place before backward; ``k``'s users are the ``j`` for which that raises. Keys
# as in OP_SAVES (the short name of the function or method; the operator's name for ``*``, ``/``,
# ``@``); values: each saved input and the inputs whose gradient needs it (itself included when
# its own gradient does). Inputs are positional, as the analysis numbers them (einsum's equation
# is no input; a method's receiver is input0).


def _users_by_version(fn, shapes) -> dict:
    def raises(grad: int, bumped: int) -> bool:
        torch.manual_seed(0)
        made = [torch.rand(*shape, dtype=torch.float64) + 0.5 for shape in shapes]
        inputs = [(t.requires_grad_() * 1) if i == grad else t for i, t in enumerate(made)]
        out = fn(*inputs)
        try:
            inputs[bumped].add_(0)
            out.sum().backward()
        except RuntimeError as exc:
            if _INPLACE_ERROR in str(exc):
                return True
            raise
        return False

    found = {}
    for bumped in range(len(shapes)):
        users = tuple(f"input{grad}" for grad in range(len(shapes)) if raises(grad, bumped))
        if users:
            found[f"input{bumped}"] = users
    return found


def _saved_for() -> dict:
    v, sq, vec = (3, 4), (4, 4), (4,)
    probes = {
        "mul": (lambda a, b: a * b, [v, v]), "multiply": (lambda a, b: torch.multiply(a, b), [v, v]),
        "div": (lambda a, b: a / b, [v, v]), "divide": (lambda a, b: torch.divide(a, b), [v, v]),
        "true_divide": (lambda a, b: torch.true_divide(a, b), [v, v]),
        "matmul": (lambda a, b: a @ b, [(3, 4), (4, 3)]), "mm": (lambda a, b: torch.mm(a, b), [(3, 4), (4, 3)]),
        "bmm": (lambda a, b: torch.bmm(a, b), [(2, 3, 4), (2, 4, 3)]),
        "mv": (lambda a, b: torch.mv(a, b), [(3, 4), vec]),
        "linear": (lambda a, w, b: F.linear(a, w, b), [(3, 4), (5, 4), (5,)]),
        "bilinear": (lambda a, b, w: F.bilinear(a, b, w), [(3, 4), (3, 4), (2, 4, 4)]),
        "addmm": (lambda c, a, b: torch.addmm(c, a, b), [(3, 3), (3, 4), (4, 3)]),
        "addbmm": (lambda c, a, b: torch.addbmm(c, a, b), [(3, 3), (2, 3, 4), (2, 4, 3)]),
        "baddbmm": (lambda c, a, b: torch.baddbmm(c, a, b), [(2, 3, 3), (2, 3, 4), (2, 4, 3)]),
        "addmv": (lambda c, a, b: torch.addmv(c, a, b), [(3,), (3, 4), vec]),
        "addcmul": (lambda c, a, b: torch.addcmul(c, a, b), [v, v, v]),
        "addcdiv": (lambda c, a, b: torch.addcdiv(c, a, b), [v, v, v]),
        "einsum": (lambda a, b: torch.einsum("nd,ndm->nm", a, b), [(2, 3), (2, 3, 3)]),
        "outer": (lambda a, b: torch.outer(a, b), [vec, (3,)]), "ger": (lambda a, b: torch.ger(a, b), [vec, (3,)]),
        "dot": (lambda a, b: torch.dot(a, b), [vec, vec]), "inner": (lambda a, b: torch.inner(a, b), [v, v]),
        "vdot": (lambda a, b: torch.vdot(a, b), [vec, vec]),
        "kron": (lambda a, b: torch.kron(a, b), [(2, 2), (2, 2)]),
        "tensordot": (lambda a, b: torch.tensordot(a, b, dims=1), [(3, 4), (4, 3)]),
        "pow": (lambda a, b: a ** b, [v, v]), "maximum": (lambda a, b: torch.maximum(a, b), [v, v]),
        "cdist": (lambda a, b: torch.cdist(a, b), [v, v]),
        "conv1d": (lambda a, w: F.conv1d(a, w), [(2, 3, 6), (3, 3, 3)]),
        "conv2d": (lambda a, w: F.conv2d(a, w), [(2, 3, 6, 6), (3, 3, 3, 3)]),
        "cosine_similarity": (lambda a, b: F.cosine_similarity(a, b), [v, v]),
    }
    return {name: _users_by_version(fn, shapes) for name, (fn, shapes) in sorted(probes.items())}


# ---------------------------------------------------------------- outputs of multi-output ops
# (issue 14) ``evals, evecs = torch.linalg.eigh(A)``: which of a tuple-returning op's outputs
# its backward saves, measured the same way (bump that output's version, run backward). Keys:
# the torch function's name; values: the indices of the saved outputs.
_MULTI_OUTPUT_PROBES = {
    "torch.linalg.eigh": (lambda a: torch.linalg.eigh(a @ a.mT), (4, 4)),
    "torch.linalg.svd": (lambda a: torch.linalg.svd(a, full_matrices=False), (4, 3)),
    "torch.linalg.qr": (lambda a: torch.linalg.qr(a), (4, 3)),
    "torch.linalg.slogdet": (lambda a: torch.linalg.slogdet(a), (4, 4)),
    "torch.sort": (lambda a: torch.sort(a, -1), (3, 4)),
    "torch.topk": (lambda a: torch.topk(a, 2), (3, 4)),
    "torch.std_mean": (lambda a: torch.std_mean(a, 0), (3, 4)),
    "torch.var_mean": (lambda a: torch.var_mean(a, 0), (3, 4)),
}


def _outputs_saved() -> dict:
    """For each op of ``_MULTI_OUTPUT_PROBES``: the outputs whose in-place change before
    backward (every floating output feeding the loss) raises the in-place error."""
    found = {}
    for name, (fn, shape) in _MULTI_OUTPUT_PROBES.items():
        saved = []
        count = len(fn(torch.rand(*shape, dtype=torch.float64)))
        for index in range(count):
            torch.manual_seed(0)
            leaf = (torch.rand(*shape, dtype=torch.float64) + 0.5).requires_grad_()
            outs = fn(leaf * 1)
            if not (outs[index].is_floating_point() and outs[index].requires_grad):
                continue  # indices, signs: never saved as something with a gradient
            try:
                outs[index].add_(0)
                sum(o.sum() for o in outs if o.requires_grad).backward()
            except RuntimeError as exc:
                if _INPLACE_ERROR in str(exc):
                    saved.append(index)
                    continue
                raise
        found[name] = tuple(saved)
    return dict(sorted(found.items()))


# Conversions and functions that hand their input back as it is when there is nothing to do
# (the same dtype, device, layout; dropout when not training): the result may *be* the input.
_SELF_RETURN_METHODS = {
    "to": lambda a: a.to(a.dtype), "type": lambda a: a.type(a.type()), "type_as": lambda a: a.type_as(a),
    "float": lambda a: a.float(), "double": lambda a: a.double(), "half": lambda a: a.half(),
    "bfloat16": lambda a: a.bfloat16(), "int": lambda a: a.int(), "long": lambda a: a.long(),
    "short": lambda a: a.short(), "bool": lambda a: a.bool(), "byte": lambda a: a.byte(), "char": lambda a: a.char(),
    "cpu": lambda a: a.cpu(), "contiguous": lambda a: a.contiguous(), "clone": lambda a: a.clone(),
    "coalesce": None, "as_subclass": lambda a: a.as_subclass(torch.Tensor), "numpy": None,
    "requires_grad_": lambda a: a.requires_grad_(False), "align_as": None, "pin_memory": None,
    "to_dense": lambda a: a.to_dense(), "resolve_conj": lambda a: a.resolve_conj(),
    "resolve_neg": lambda a: a.resolve_neg(), "float_power": lambda a: a.float_power(1),
}
_SELF_RETURN_DTYPES = {"float": torch.float32, "half": torch.float16, "bfloat16": torch.bfloat16,
                       "int": torch.int32, "long": torch.int64, "short": torch.int16, "bool": torch.bool,
                       "byte": torch.uint8, "char": torch.int8}
# Documented to hand back the tensor itself where nothing changes, in a case this CPU-only probe
# cannot build: ``cuda``/``xpu`` of a tensor already on that device ("no copy is performed and the
# original object is returned"), ``pin_memory`` of a pinned one, ``coalesce`` of a coalesced one,
# ``chalf`` of a complex32 one.
_SELF_RETURN_DOCUMENTED = ("chalf", "coalesce", "cuda", "pin_memory", "xpu")
_SELF_RETURN_FUNCTIONS = {
    "torch.nn.functional.dropout": lambda a: F.dropout(a, 0.5, training=False),
    "torch.nn.functional.dropout1d": lambda a: F.dropout1d(a[0], 0.5, training=False),
    "torch.nn.functional.dropout2d": lambda a: F.dropout2d(a, 0.5, training=False),
    "torch.nn.functional.dropout3d": lambda a: F.dropout3d(a[None], 0.5, training=False),
    "torch.nn.functional.alpha_dropout": lambda a: F.alpha_dropout(a, 0.5, training=False),
    "torch.nn.functional.feature_alpha_dropout": lambda a: F.feature_alpha_dropout(a, 0.5, training=False),
    "torch.dropout": lambda a: torch.dropout(a, 0.5, False),
    "torch.nn.functional.relu": lambda a: F.relu(a), "torch.nn.functional.pad": lambda a: F.pad(a, (0, 0)),
    "torch.nn.functional.normalize": lambda a: F.normalize(a),
    "torch.nn.functional.interpolate": lambda a: F.interpolate(a, scale_factor=1.0),
    "torch.Tensor.to": None, "torch.flatten": lambda a: torch.flatten(a), "torch.reshape": lambda a: torch.reshape(a, a.shape),
    "torch.squeeze": lambda a: torch.squeeze(a), "torch.atleast_1d": lambda a: torch.atleast_1d(a),
    "torch.atleast_2d": lambda a: torch.atleast_2d(a), "torch.atleast_3d": lambda a: torch.atleast_3d(a),
    "torch.broadcast_to": lambda a: torch.broadcast_to(a, a.shape), "torch.as_tensor": lambda a: torch.as_tensor(a),
    "torch.asarray": lambda a: torch.asarray(a), "torch.tensor_split": None,
}


def _shares_storage(out, inp) -> bool:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    ptr = inp.untyped_storage().data_ptr()
    return any(isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() == ptr for o in outs)


def _returns_input() -> dict:
    """Methods, functions and nn modules whose result shares its input's storage for some
    arguments or mode (``x.float()`` of a float tensor is ``x``; ``nn.Dropout`` in eval mode
    returns its input): a name bound to the result sees a later in-place write into the input."""
    methods = [name for name in _SELF_RETURN_DOCUMENTED if hasattr(torch.Tensor, name)]
    for name, fn in _SELF_RETURN_METHODS.items():
        if fn is None or not hasattr(torch.Tensor, name):
            continue
        a = torch.rand(2, 3, 4, 4, dtype=torch.float64).to(_SELF_RETURN_DTYPES.get(name, torch.float64))
        if _shares_storage(fn(a), a):
            methods.append(name)
    functions = []
    for name, fn in _SELF_RETURN_FUNCTIONS.items():
        if fn is None:
            continue
        a = torch.rand(2, 3, 4, 4, dtype=torch.float64)
        if _shares_storage(fn(a), a):
            functions.append(name)
    modules = []
    for name, spec in _module_table().items():
        if spec is None:
            continue
        make, shape = spec
        for train in (True, False):
            module = make().double().train(train)
            a = torch.rand(*shape, dtype=torch.float64)
            if _shares_storage(module(a), a):
                modules.append(f"torch.nn.{name}")
                break
    return {"RETURNS_INPUT_METHODS": sorted(set(methods)), "RETURNS_INPUT_FUNCTIONS": sorted(functions),
            "RETURNS_INPUT_MODULES": sorted(modules)}


# Functions documented to hand back their argument itself, unchanged (TorchScript's type helpers):
# which argument, and a call that builds it. Kept where ``fn(...) is a`` holds for a tensor ``a``.
_IDENTITY_CANDIDATES = {
    "torch.jit._unwrap_optional": (0, lambda a: torch.jit._unwrap_optional(a)),
    "torch.jit.annotate": (1, lambda a: torch.jit.annotate(torch.Tensor, a)),
}


def _identity_functions() -> dict:
    """Functions whose result *is* one of their arguments (``torch.jit._unwrap_optional(h)`` is
    ``h``): the result is that tensor, with its kind, its grad and its view origin. Measured:
    kept only where the call returns the very object given."""
    found = {}
    for name, (index, fn) in _IDENTITY_CANDIDATES.items():
        a = torch.rand(2, 3, requires_grad=True)
        if fn(a) is a:
            found[name] = index
    return {"IDENTITY_FUNCTIONS": found}


def generate() -> str:
    writes = _schema_writes_self()
    torch_dir = pathlib.Path(torch.__file__).parent
    methods_returning = _pyi_tensor_returning(torch_dir / "_C" / "__init__.pyi", "TensorBase")
    functions_returning = {
        f"torch.{n}" for n in _pyi_tensor_returning(torch_dir / "_C" / "_VariableFunctions.pyi")
    } | {
        f"torch.nn.functional.{n}"
        for n in _pyi_tensor_returning(torch_dir / "nn" / "functional.pyi")
    }
    for name in dir(F):  # functional.py is annotated too; the .pyi misses some
        fn = getattr(F, name)
        if not name.startswith("_") and inspect.isfunction(fn):
            ret = inspect.signature(fn).return_annotation
            if ret in (torch.Tensor, "Tensor"):
                functions_returning.add(f"torch.nn.functional.{name}")
    functions_returning |= _documented_tensor_returning()
    python_functions, python_methods = _python_defined_returning(functions_returning)
    functions_returning |= python_functions

    inplace_methods: dict[str, str | None] = {}
    for name in sorted(dir(torch.Tensor)):
        if not name.endswith("_") or name.startswith("_") or name in NOT_VALUE_MUTATING:
            continue
        if name not in writes:
            continue
        twin = name[:-1]
        inplace_methods[name] = twin if hasattr(torch.Tensor, twin) else None

    inplace_functions: dict[str, str | None] = {}
    for prefix, namespace in (("torch", torch), ("torch.nn.functional", F)):
        for name in sorted(dir(namespace)):
            if not name.endswith("_") or name.startswith("_") or name in NOT_VALUE_MUTATING:
                continue
            if prefix == "torch" and name not in writes:
                continue
            twin = name[:-1]
            inplace_functions[f"{prefix}.{name}"] = (
                f"{prefix}.{twin}" if hasattr(namespace, twin) else None
            )

    data = {
        "TORCH_VERSION": torch.__version__.split("+")[0],
        "AUG_OPERATORS": AUG_OPERATORS,
        "TENSOR_INPLACE_DUNDERS": {
            op: hasattr(torch.Tensor, f"__i{name}__") for op, name in AUG_OPERATORS.items()
        },
        "INPLACE_METHODS": inplace_methods,
        "INPLACE_FUNCTIONS": inplace_functions,
        "NOT_VALUE_MUTATING": sorted(NOT_VALUE_MUTATING),
        "SAME_DTYPE_TWINS": sorted(SAME_DTYPE_TWINS),
        "INPLACE_PARAM_CALLABLES": _inplace_param_callables(),
        "TENSOR_METHODS": sorted(methods_returning | python_methods),
        "TENSOR_FUNCTIONS": sorted(functions_returning),
        "TENSOR_MODULES": _modules_returning_tensor(),
        "OP_SAVES": _probe_saves(),
        **_probe_views(),
        "OP_SAVES_MEASURED": _measured_saves(),
        "SAVED_FOR": _saved_for(),
        "OUTPUTS_SAVED": _outputs_saved(),
        **_identity_functions(),
        **_returns_input(),  # aliasing: results that may be their input (fix safety)  # issue 14: which outputs of a tuple-returning op are saved  # issue 14: by version counters; takes precedence
    }
    lines = [
        '"""Facts about torch\'s API used by the static passes (generated; do not edit).',
        "",
        "Regenerate with ``python scripts/gen_torch_api.py``; ``tests/test_torch_api.py`` checks",
        "this file against the installed torch.",
        '"""',
        "",
        "# fmt: off",
    ]
    for key, value in data.items():
        if isinstance(value, list):
            value = frozenset(value)
        lines.append(f"{key} = {pprint.pformat(value, width=100, sort_dicts=True)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    text = generate()
    if "--check" in sys.argv:
        sys.exit(0 if OUT.read_text() == text else 1)
    OUT.write_text(text)
    print(f"wrote {OUT}")
