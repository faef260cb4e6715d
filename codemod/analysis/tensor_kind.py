"""Tensor kind: "is this expression a tensor?" — the one place that answers it.

The answer comes from torch's own API lists (``torch_api``), imports, annotations, the
bindings that reach a use (the binder and dataflow), ``self.<attr>`` assignments in the class,
and how a ``forward`` argument is used. :func:`is_tensor` is the public predicate; the richer
:class:`Kind` tells parameters, modules, scalars and known non-tensors apart.
"""

from __future__ import annotations

import ast
import builtins  # noqa: F401 - kept for readers: builtins are resolved by ``names``
import weakref
from typing import Callable, Dict, FrozenSet, List, Optional, Protocol, Sequence, cast

from codemod import torch_api
from codemod.analysis.binder import Binder, Binding
from codemod.analysis.branches import never_falls_off
from codemod.analysis.calls import Calls, instance_calls_count, passes_tensor
from codemod.analysis.classes import Classes
from codemod.analysis.dataflow import Dataflow
from codemod.analysis.facts import Facts
from codemod.analysis.handed_in import constructed_values
from codemod.analysis.kinds import PARAMETER_CLASSES, TENSORISH, Kind, join
from codemod.analysis.names import Names
from codemod.analysis.string_keys import indexed_by_string
from codemod.analysis.syntax import FUNCTIONS, Function, Located, call_args, is_const, passed_for, spreads, target_key
from codemod.analysis.tree import Tree

# torch functions joining a list or tuple of tensors into one: its dtype is the pieces' promoted
# one, and it requires grad where one of them does.
JOINING = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack"})

# Array methods numpy (and Python containers) share with tensors: on a receiver of unknown
# kind, a method named like a tensor op outside this set is a tensor op.
_SHARED_METHODS = frozenset({
    "sum", "mean", "max", "min", "prod", "std", "var", "clip", "round", "cumsum", "cumprod", "flatten",
    "reshape", "transpose", "repeat", "squeeze", "dot", "all", "any", "argmax", "argmin", "copy", "view",
    "sort", "argsort", "nonzero", "diagonal", "trace", "conj", "take", "put", "fill", "t", "T",
})



# Methods that make a fresh tensor like their receiver (``x.new_zeros(n)``): a tensor's own, numpy
# and containers lack them (they save nothing, so they have no op data).
_FRESH_LIKE_METHODS = frozenset({"new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"})


def tensor_only(method: str) -> bool:
    """A method name only tensors have among the values code usually holds (``exp``, ``softmax``):
    one with op data (what it saves, measured from torch) that numpy and containers lack, or one
    that makes a fresh tensor like its receiver (``new_zeros``)."""
    if method in _SHARED_METHODS:
        return False
    if method in _FRESH_LIKE_METHODS:
        return True
    measured = torch_api.OP_SAVES_MEASURED.get(method)
    return measured is not None or method in torch_api.OP_SAVES


# Attributes of a tensor that are tensors again (views or companions).
_TENSOR_ATTRS = {"data", "grad", "T", "mT", "H", "mH", "real", "imag"}
_SCALAR_ATTRS = {"ndim", "is_leaf", "requires_grad", "is_cuda"}
# Methods that make a view of (or return) their receiver: the result shares storage.
VIEW_METHODS = {
    "view", "view_as", "reshape", "reshape_as", "t", "transpose", "permute", "expand",
    "expand_as", "narrow", "select", "squeeze", "unsqueeze", "flatten", "unflatten", "diagonal",
    "unfold", "as_strided", "detach", "movedim", "moveaxis", "swapaxes", "swapdims",
    "unbind", "split", "chunk", "tensor_split", "contiguous", "view_as_real",
}
# Ops that split a tensor into a tuple of views of it (``q, k, v = qkv.chunk(3, -1)``).
_SPLITTING = {"chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "split_with_sizes"}
_SCALAR_BUILTINS = {"len", "int", "float", "bool", "round", "hash", "id", "ord"}
_OTHER_BUILTINS = {
    "range", "list", "dict", "set", "tuple", "str", "enumerate", "zip", "sorted", "reversed",
    "map", "filter", "frozenset", "bytes", "repr", "format", "type", "object", "print",
    "isinstance", "open", "iter", "vars", "dir", "hasattr", "super",
}  # not getattr: it returns whatever the attribute holds
# Builtin types whose class methods make values of their own kind (``dict.fromkeys``).
_BUILTIN_TYPES = {"dict", "list", "set", "frozenset", "tuple", "str", "bytes", "int", "float", "bool"}
_BUILTIN_NAMES = frozenset(dir(builtins))
# Method names shared with builtin containers and strings: a call of one does not show that
# its receiver is a tensor.
_CONTAINER_METHODS = {
    "add", "append", "extend", "insert", "remove", "pop", "clear", "copy", "count", "index",
    "sort", "reverse", "update", "get", "items", "keys", "values", "setdefault", "split",
    "join", "strip", "replace", "format", "startswith", "endswith", "lower", "upper", "find",
}
# torch functions that take a sequence of tensors, or any object, where a tensor may go:
# handing a value to one does not show it is a tensor (`torch.cat(feats)`, `torch.save(state)`).
TAKES_ANY = frozenset({
    "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack",
    "save", "load", "tensor", "as_tensor", "asarray", "is_tensor", "is_storage", "numel", "block_diag",
    "broadcast_tensors", "meshgrid", "cartesian_prod", "atleast_1d", "atleast_2d", "atleast_3d",
})
NON_TENSOR_PREFIXES = ("numpy.", "pandas.", "math.", "random.", "collections.", "itertools.")
# torch functions whose result is a fresh tensor: nothing saved it, no other name holds it.
# torch factories whose positional arguments are sizes (integers), and layers whose first two are
_SIZED_FACTORIES = frozenset({"empty", "zeros", "ones", "rand", "randn", "randperm", "arange", "eye"})
_SIZED_LAYERS = frozenset({"Embedding", "Linear", "Conv1d", "Conv2d", "Conv3d", "Bilinear"})
FACTORIES = {
    "empty", "zeros", "ones", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "tensor", "empty_like", "zeros_like", "ones_like",
    "full_like", "rand_like", "randn_like", "randint_like", "empty_strided",
}
# Legacy constructors: fresh when built from sizes (``torch.Tensor(n)``), but given a tensor
# they return that very tensor.
LEGACY_CONSTRUCTORS = {
    "Tensor", "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
    "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor",
}


class KindFacts(Facts, Protocol):
    """The structural facts and this part's own answer, as the parts above ask them of the model."""

    def kind(self, expr: ast.expr) -> Kind: ...


_MODULE_DICTS = ("torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict")


def module_dict_entry(values: Sequence[object], entry: str, torch_name: Callable[[ast.AST], Optional[str]],
                      dict_rebound: bool) -> Optional[List[object]]:
    """``[X]`` for ``self.transformer.h`` where ``self.transformer`` is set once (``values``:
    what it is set to), to ``nn.ModuleDict(dict(h=X, ...))`` or ``nn.ModuleDict({"h": X, ...})``,
    every key spelt out; None for anything else (set twice, built from a variable, ``**``
    entries, ``dict`` rebound by the module: ``dict_rebound``)."""
    made = values[0] if len(values) == 1 else None
    if not (isinstance(made, ast.Call) and torch_name(made.func) in _MODULE_DICTS
            and len(made.args) == 1 and not made.keywords):
        return None
    arg = made.args[0]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "dict" and not arg.args \
            and not dict_rebound and all(k.arg is not None for k in arg.keywords):
        found: List[object] = [k.value for k in arg.keywords if k.arg == entry]
    elif isinstance(arg, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in arg.keys):
        found = [v for k, v in zip(arg.keys, arg.values) if isinstance(k, ast.Constant) and k.value == entry]
    else:
        return None
    return found if len(found) == 1 else None


def is_tensor(expr: ast.expr, model: KindFacts) -> bool:
    """Whether ``expr`` is known to hold a tensor (an ``nn.Parameter`` included)."""
    return model.kind(expr) in TENSORISH


def tensor_test(test: ast.expr, torch_name: Callable[[ast.AST], Optional[str]]) -> Optional[str]:
    """``torch.is_tensor(x)`` or ``isinstance(x, torch.Tensor)``: the name it shows a tensor where it holds."""
    if not isinstance(test, ast.Call) or test.keywords or not test.args or not isinstance(test.args[0], ast.Name):
        return None
    name = torch_name(test.func)
    if name == "torch.is_tensor" and len(test.args) == 1:
        return test.args[0].id
    if isinstance(test.func, ast.Name) and test.func.id == "isinstance" and name is None and len(test.args) == 2 \
            and torch_name(test.args[1]) == "torch.Tensor":
        return test.args[0].id
    return None


class TensorKinds:
    """The kind of every expression asked about, remembered once the answer is whole."""

    def __init__(self, tree: Tree, binder: Binder, names: Names, classes: Classes, dataflow: Dataflow,
                 calls: Optional[Calls] = None) -> None:
        self.tree = tree
        self.callers = calls  # the module's call graph and, through it, the project index
        self.binder = binder
        self.names = names
        self.classes = classes
        self.dataflow = dataflow
        self.module = tree.module
        self._kind_cache: Dict[ast.expr, Kind] = {}
        self._pending: Dict[ast.expr, int] = {}  # open questions and their depth (see ``kind``)
        self._lows: List[int] = [1 << 30]  # per open question: the lowest depth its answer met
        self._provisional: Dict[ast.expr, Kind] = {}  # answers leaning on an open question
        self.params = ParameterKinds(self)
        self.calls = CallKinds(self)
        self.held = HeldInstances(self)

    def kind(self, expr: ast.expr) -> Kind:
        """The kind of ``expr``, remembered once the answer is whole: it leans on no question
        still open further out (a cycle through bindings back to an outer question). As in
        Tarjan's algorithm, each open question has a depth and each answer the lowest depth it
        met; an answer whose cycles all close within it is remembered at once. (Remembering
        only the outermost answers re-derived long chains of bindings that refer to each other
        over and over: a diffusers module took minutes. Within one outermost question, answers that
        lean on an open one are reused too, so a cycle of bindings is walked once.)"""
        cached = self._kind_cache.get(expr)
        if cached is not None:
            return cached
        provisional = self._provisional.get(expr)
        if provisional is not None:
            return provisional
        pending = self._pending
        depth = pending.get(expr)
        if depth is not None:  # a cycle: answered later, by the question that is open
            if depth < self._lows[-1]:
                self._lows[-1] = depth
            return Kind.PENDING
        depth = pending[expr] = len(pending)
        self._lows.append(depth + 1)
        try:
            result = self._kind(expr)
        finally:
            low = self._lows.pop()
            del pending[expr]
        if low >= depth:
            if result is Kind.PENDING:
                result = Kind.UNKNOWN
            self._kind_cache[expr] = result
        else:  # leans on an open question: reused until the outermost question is answered
            self._provisional[expr] = result
            if low < self._lows[-1]:
                self._lows[-1] = low
        if not pending:
            self._provisional.clear()
        return result

    def _kind(self, expr: ast.expr) -> Kind:
        if isinstance(expr, ast.Constant):
            value = expr.value
            if isinstance(value, (bool, int, float, complex)):
                return Kind.SCALAR
            if value is Ellipsis:
                return Kind.UNKNOWN
            return Kind.OTHER  # strings, bytes, None
        if isinstance(expr, (ast.JoinedStr, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp,
                             ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)):
            return Kind.OTHER
        if isinstance(expr, ast.Name):
            return self._name_kind(expr)
        if isinstance(expr, ast.Attribute):
            return self._attribute_kind(expr)
        if isinstance(expr, ast.Call):
            return self.calls._call_kind(expr)
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape":
                # x.shape[0]: a size (an int); x.shape[1:]: sizes (a torch.Size)
                return Kind.OTHER if isinstance(expr.slice, ast.Slice) else Kind.SCALAR
            base = self.kind(expr.value)
            if base is Kind.UNKNOWN and isinstance(expr.value, ast.Call):
                return piece_kind(self.calls, expr.value, expr.slice)  # `self.net(x)[0]` of `return (y, h)`
            return Kind.TENSOR if base in TENSORISH else (Kind.PENDING if base is Kind.PENDING else Kind.UNKNOWN)
        if isinstance(expr, ast.BinOp):
            return self._arith_kind([self.kind(expr.left), self.kind(expr.right)])
        if isinstance(expr, ast.UnaryOp):
            inner = self.kind(expr.operand)
            if isinstance(expr.op, ast.Not):
                return Kind.TENSOR if inner in TENSORISH else Kind.SCALAR
            return Kind.TENSOR if inner is Kind.PARAMETER else inner
        if isinstance(expr, ast.Compare):
            kinds = [self.kind(expr.left)] + [self.kind(c) for c in expr.comparators]
            if any(k in TENSORISH for k in kinds):
                return Kind.TENSOR
            return Kind.SCALAR if all(k in (Kind.SCALAR, Kind.OTHER) for k in kinds) else Kind.UNKNOWN
        if isinstance(expr, ast.IfExp):
            body = self.kind(expr.body)
            if body not in TENSORISH and isinstance(expr.body, ast.Name) \
                    and tensor_test(expr.test, self.names.torch_name) == expr.body.id:
                body = Kind.TENSOR  # `x if torch.is_tensor(x) else torch.tensor(x)`: a tensor on that arm
            return join([body, self.kind(expr.orelse)])
        return Kind.UNKNOWN

    @staticmethod
    def _arith_kind(kinds: List[Kind]) -> Kind:
        if any(k in TENSORISH for k in kinds):
            return Kind.TENSOR
        if Kind.UNKNOWN in kinds or Kind.MODULE in kinds:
            return Kind.UNKNOWN
        if Kind.PENDING in kinds:
            return Kind.PENDING
        if all(k is Kind.SCALAR for k in kinds):
            return Kind.SCALAR
        return Kind.OTHER

    def _attribute_kind(self, attr: ast.Attribute) -> Kind:
        name = attr.attr
        if name in ("shape", "dtype", "device", "layout"):
            return Kind.OTHER  # whatever the object, these are never tensors
        if self.names.torch_name(attr) is not None:
            return Kind.UNKNOWN  # torch.float32, torch.pi, torch.nn...: not a tensor we track
        if isinstance(attr.value, ast.Name) and attr.value.id == "self":
            cls = self.tree.enclosing_class(attr)
            if cls is not None:
                values = self.classes.class_attrs(cls).get(name)
                if values:
                    return join(v if isinstance(v, Kind) else self.kind(v) for v in values)
            return Kind.UNKNOWN
        entry = self.module_dict_entry(attr)
        if entry:  # `self.transformer.drop` of `self.transformer = nn.ModuleDict(dict(drop=nn.Dropout(p)))`
            return join(v if isinstance(v, Kind) else self.kind(cast(ast.expr, v)) for v in entry)
        member = self.calls.member_values(attr)
        if member:  # `self.head.fc` of `self.head = Head(d)`, Head setting `self.fc = nn.Linear(d, d)`
            return join(v if isinstance(v, Kind) else self.kind(cast(ast.expr, v)) for v in member)
        base = self.kind(attr.value)
        if base in TENSORISH:
            if name in _TENSOR_ATTRS:
                return Kind.TENSOR
            if name in _SCALAR_ATTRS:
                return Kind.SCALAR
        return Kind.PENDING if base is Kind.PENDING else Kind.UNKNOWN

    def held_number(self, attr: ast.Attribute) -> bool:
        """``self.<attr>`` set only in its class, only to numbers: literals and arithmetic of
        them, ``len(...)``, a parameter with an int default or annotation, or one read as a size
        (:meth:`ParameterKinds.sized_only`). A number cannot require grad."""
        if not (isinstance(attr.value, ast.Name) and attr.value.id == "self"):
            return False
        cls = self.tree.enclosing_class(attr)
        if cls is None:
            return False
        values = self.classes.class_attrs(cls).get(attr.attr)
        if not values or not all(isinstance(v, ast.expr) and self._number(v) for v in values):
            return False
        return all(self._own_write(w, cls) for w in self.classes.attribute_writes(attr.attr))

    def _own_write(self, write: ast.expr, cls: ast.ClassDef) -> bool:
        """A write of the attribute that is no write into ``cls``'s instances from outside: one in
        ``cls`` itself, or one on ``self`` in a class that does not derive from it here."""
        if not (isinstance(write, ast.Attribute) and isinstance(write.value, ast.Name) and write.value.id == "self"):
            return False
        other = self.tree.enclosing_class(write)
        return other is cls or (other is not None and not any(
            cls.name in (getattr(n, "id", None), getattr(n, "attr", None)) for b in other.bases for n in ast.walk(b)))

    def _number(self, value: ast.expr) -> bool:
        func = self.tree.owner(value)
        if isinstance(value, ast.Name) and isinstance(func, FUNCTIONS):
            params = [a for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs) if a.arg == value.id]
            if params:  # a default or an annotation is no type: the constructions in view must agree
                return self.params.sized_only(params[0]) or (
                    self.kind(value) is Kind.SCALAR and self.params.constructed_with_numbers(params[0]))
        return self.kind(value) is Kind.SCALAR

    def module_dict_entry(self, attr: ast.expr) -> Optional[List[object]]:
        """What ``self.<dict>.<entry>`` was built from, where ``self.<dict>`` is an
        ``nn.ModuleDict`` of spelt-out keys set once in the class (:func:`module_dict_entry`)."""
        if not (isinstance(attr, ast.Attribute) and isinstance(attr.value, ast.Attribute)
                and isinstance(attr.value.value, ast.Name) and attr.value.value.id == "self"):
            return None
        cls = self.tree.enclosing_class(attr)
        if cls is None:
            return None
        values = self.classes.class_attrs(cls).get(attr.value.attr)
        return module_dict_entry(values or [], attr.attr, self.names.torch_name,
                                 "dict" in self.binder.flow(self.module, nested=False).bindings)

    def _name_kind(self, name: ast.Name) -> Kind:
        owner = self.tree.owner(name)
        flow = self.binder.flow(owner)
        key = name.id
        bindings = flow.bindings.get(key)
        at: Optional[Located]
        if (not bindings or key in flow.declared) and not isinstance(owner, ast.Module):
            flow = self.binder.flow(self.module, nested=False)
            bindings = flow.bindings.get(key)
            at = None  # a global seen from a function: any of its bindings may reach
        else:
            at = self.tree.statement_of(name)
        if not bindings:
            return Kind.UNKNOWN
        reaching = self.dataflow.reaching(flow, key, at) if at is not None else bindings
        return join(self._binding_kind(b) for b in reaching) if reaching else Kind.UNKNOWN

    def _binding_kind(self, b: Binding) -> Kind:
        form, value = b.form, b.value
        if form == "param":
            return self.params._param_kind(cast(ast.arg, b.stmt))  # the binder binds a parameter at its arg
        if form == "def":
            return Kind.OTHER
        if form == "ann":
            annotated = self.annotation_kind(cast(ast.AnnAssign, b.stmt).annotation)  # at its ``x: T``
            if annotated is not Kind.UNKNOWN:
                return annotated
            return self.kind(value) if value is not None else Kind.PENDING
        if value is None:  # "for" and "aug" bindings always have a value; "other" ones never
            return self._unpacked_kind(b)
        if form == "for":
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "range":
                return Kind.SCALAR
            return Kind.TENSOR if self.kind(value) in TENSORISH else Kind.UNKNOWN
        if form == "aug":
            return Kind.TENSOR if self.kind(value) in TENSORISH else Kind.PENDING
        if form == "assign":
            return self.kind(value)
        return Kind.UNKNOWN

    def _unpacked_kind(self, b: Binding) -> Kind:
        """``q, k, v = t.chunk(3)`` (or ``split``, ``unbind``, ``tensor_split``, as methods or
        torch functions): each name is a tensor, a view of ``t``."""
        stmt = b.stmt
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)):
            return Kind.UNKNOWN
        if not any(isinstance(t, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == b.key for e in t.elts)
                   for t in stmt.targets):
            return Kind.UNKNOWN  # starred, nested or elsewhere: not one of the pieces
        call = stmt.value
        name = self.names.torch_name(call.func)
        if name is not None:
            return Kind.TENSOR if name.rsplit(".", 1)[-1] in _SPLITTING else Kind.UNKNOWN
        pieces = self.calls.returned_pieces(stmt, b.key)
        if pieces is not None:
            kinds = [self.kind(p) for p in pieces]
            if kinds and all(k in TENSORISH for k in kinds):
                return Kind.TENSOR
            return Kind.PENDING if kinds and all(k in TENSORISH or k is Kind.PENDING for k in kinds) else Kind.UNKNOWN
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in _SPLITTING and self.kind(func.value) in TENSORISH:
            return Kind.TENSOR
        return Kind.UNKNOWN

    def annotation_kind(self, ann: ast.expr) -> Kind:
        if isinstance(ann, ast.Subscript) and target_key(ann.value) in ("Optional", "typing.Optional"):
            ann = ann.slice
        if isinstance(ann, ast.BinOp) and is_const(ann.right, None):
            ann = ann.left  # Tensor | None
        names = self.names.qualified_names(ann)
        if names & {"torch.Tensor", "torch._tensor.Tensor"}:
            return Kind.TENSOR
        if names & PARAMETER_CLASSES:
            return Kind.PARAMETER
        if names & {"builtins.int", "builtins.float", "builtins.bool"}:
            return Kind.SCALAR
        if names & {"builtins.str", "builtins.list", "builtins.dict", "builtins.tuple",
                    "builtins.set", "typing.List", "typing.Dict", "typing.Tuple", "numpy.ndarray"}:
            return Kind.OTHER
        if isinstance(ann, ast.Subscript) and target_key(ann.value) in ("list", "dict", "tuple", "set"):
            return Kind.OTHER
        return Kind.UNKNOWN


class _KindsPart:
    """A fact class wired by :class:`TensorKinds`: it reads the facts TensorKinds holds."""

    def __init__(self, kinds: "TensorKinds") -> None:
        # Weakly: the TensorKinds owning this part holds it, and a cycle between them would leave
        # the module's whole tree to the cyclic garbage collector when the analysis ends.
        self.kinds = weakref.proxy(kinds)
        self.binder = kinds.binder
        self.classes = kinds.classes
        self.dataflow = kinds.dataflow
        self.module = kinds.module
        self.names = kinds.names
        self.tree = kinds.tree
        self._methods: Optional[FrozenSet[str]] = None
        self._classes: Optional[Dict[str, ast.ClassDef]] = None  # the module's top-level classes


class CallKinds(_KindsPart):
    """The kind of a call's result: a torch factory or op, a builtin, a class, a non-tensor library, a module of this file."""

    def _call_kind(self, call: ast.Call) -> Kind:
        func = call.func
        name = self.names.torch_name(func)
        same = self.names.identity_argument(call)
        if same is not None:
            return self.kinds.kind(same)  # `torch.jit._unwrap_optional(h)` is `h`
        if name is not None:
            if name in PARAMETER_CLASSES:
                return Kind.PARAMETER
            if name in torch_api.TENSOR_FUNCTIONS or name in torch_api.INPLACE_FUNCTIONS:
                return Kind.TENSOR
            if name in torch_api.TENSOR_MODULES or name in (
                "torch.nn.Sequential", "torch.nn.modules.container.Sequential"
            ):
                return Kind.MODULE
            if name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper():
                return Kind.OTHER  # another module or class instance
            return Kind.UNKNOWN
        if self._non_tensor_library(func):
            return Kind.OTHER  # np.asarray(x).reshape(...), pd.read_csv(p).values...
        callee = func.value if isinstance(func, ast.Subscript) else func  # OrderedDict[str, int]()
        for qname in self.names.qualified_names(callee):
            if qname.startswith("builtins."):
                short = qname[len("builtins."):]
                if short in _SCALAR_BUILTINS:
                    return Kind.SCALAR
                if short in ("min", "max") and call.args and not call.keywords \
                        and not any(isinstance(a, ast.Starred) for a in call.args):
                    return join(self.kinds.kind(a) for a in call.args)  # one of its arguments
                if short == "abs" and len(call.args) == 1 and not call.keywords \
                        and not isinstance(call.args[0], ast.Starred):
                    inner = self.kinds.kind(call.args[0])  # `abs(t)` is `t.__abs__()`: torch.abs for a tensor
                    return Kind.TENSOR if inner in TENSORISH else inner
                if short in _OTHER_BUILTINS or short.split(".")[0] in _BUILTIN_TYPES:
                    return Kind.OTHER
            if qname.startswith(NON_TENSOR_PREFIXES):
                return Kind.OTHER
        if isinstance(func, ast.Attribute):
            receiver = self.kinds.kind(func.value)
            method = func.attr
            if receiver in TENSORISH:
                if method in torch_api.TENSOR_METHODS or method in torch_api.INPLACE_METHODS:
                    return Kind.TENSOR
                if method == "nonzero" and not any(k.arg == "as_tuple" for k in call.keywords):
                    return Kind.TENSOR  # a tensor's `nonzero()` (a tuple only with `as_tuple=True`)
                if method in ("item", "dim", "numel", "ndimension", "nelement", "element_size",
                              "is_contiguous", "is_floating_point", "requires_grad"):
                    return Kind.SCALAR
                if method in ("size", "tolist", "numpy", "stride", "storage", "type"):
                    return Kind.OTHER
                return Kind.UNKNOWN
            if receiver is Kind.PENDING:
                return Kind.PENDING
            if receiver is Kind.UNKNOWN and tensor_only(method) and not self.names.qualified_names(func) \
                    and method not in self._own_methods() and not self._instance_attribute(func):
                return Kind.TENSOR  # `feats[i].sigmoid()`: no other value has the method (it would raise)
        own = self.own_callee(func)
        if own is not None:
            return self._returns_kind([own])
        if self._imported_builder(func):
            return Kind.MODULE
        callee_kind = self.kinds.kind(func)
        if callee_kind is Kind.MODULE:
            return Kind.TENSOR
        if callee_kind is Kind.PENDING:
            return Kind.PENDING
        return self._instance_kind(func)

    def _imported_builder(self, func: ast.expr) -> bool:
        """``build_mlp`` imported from another file of the run where it builds a module that
        surely owns parameters (``SummaryFact.parametric`` of a function, ``analysis.builders``):
        calling it gives a module."""
        calls = self.kinds.callers
        project = calls.project if calls is not None else None
        if calls is None or project is None or not isinstance(func, ast.Name) \
                or any(func.id in self.binder.flow(f).bindings for f in self.tree.ancestors(func) if isinstance(f, FUNCTIONS)):
            return False
        qual = project.imported(calls.module_name, func.id)
        fact = project.summary(qual) if qual is not None else None
        return fact is not None and fact.of == "function" and fact.parametric

    def own_callee(self, func: ast.expr) -> Optional[ast.FunctionDef]:
        """The function of this file a call of ``func`` runs, where only one can be: ``helper``,
        a top-level ``def`` bound once in the module and not in the calling function;
        ``self.helper``, a method of the calling method's top-level class that no class of the
        file derives from (no override in view) and no ``self.helper = ...`` rebinds. Neither may
        be decorated (a wrapper returns what it likes). None otherwise."""
        if isinstance(func, ast.Name):
            if any(func.id in self.binder.flow(f).bindings for f in self.tree.ancestors(func) if isinstance(f, FUNCTIONS)):
                return None  # a local or an enclosing function's name
            bound = self.binder.flow(self.module, nested=False).bindings.get(func.id, [])
            found = [s for s in self.module.body if isinstance(s, ast.FunctionDef) and s.name == func.id]
            if len(bound) != 1 or len(found) != 1 or found[0].decorator_list:
                return None
            return found[0]
        static = self.classes.static_function(func) or self.kinds.held.method_of(func)
        if static is not None:
            return static  # `C.f(x)` / `self.f(x)` of a class body's `f = staticmethod(f)`; `self.fn.run(x)`
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
            return None
        cls = self.tree.enclosing_class(func)
        if cls is None or self.tree.parent(cls) is not self.module or func.attr in self.classes.class_attrs(cls):
            return None
        methods = [f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == func.attr]
        if len(methods) != 1 or not isinstance(methods[0], ast.FunctionDef) or methods[0].decorator_list \
                or any(any(target_key(b) == cls.name or isinstance(b, ast.Attribute)
                           and b.attr == cls.name for b in cast(ast.ClassDef, c).bases)
                       for c in self.tree.nodes(ast.ClassDef)):
            return None
        return methods[0]

    def returned_pieces(self, stmt: ast.AST, key: str) -> Optional[List[ast.expr]]:
        """What each ``return`` of the callee gives at ``key``'s place of the unpacking ``a, key =
        f(x)``: ``f`` the module-level ``helper``, ``self.helper`` (the calling method's class's
        own, not overridden: ``CallKinds.own_callee``) or ``self.block`` (each ``forward`` the
        module may run). None where a callee is unknown or a ``return`` is not a tuple of the
        same length (no starred piece)."""
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)):
            return None
        target = next((t for t in stmt.targets if isinstance(t, (ast.Tuple, ast.List))), None)
        if target is None or any(isinstance(e, ast.Starred) for e in target.elts):
            return None
        place = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == key), None)
        return None if place is None else _pieces(self, stmt.value, place, len(target.elts))

    def member_values(self, attr: ast.Attribute) -> Optional[List[object]]:
        """What ``self.<a>.<b>`` was set to, where every value ``self.<a>`` is set to in its class
        builds one class of this file deriving straight from ``nn.Module`` (no base class of the
        file may set ``<b>`` too), which sets ``self.<b>`` itself, and no statement of the file
        writes ``<b>`` into such an instance from outside (``net.head.fc = ...``). None otherwise."""
        outer = attr.value
        if not (isinstance(outer, ast.Attribute) and isinstance(outer.value, ast.Name) and outer.value.id == "self"):
            return None
        here = self.tree.enclosing_class(attr)
        values = self.classes.class_attrs(here).get(outer.attr) if here is not None else None
        if not values:
            return None
        found: List[object] = []
        for value in values:
            if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
                return None
            cls = next((c for c in self.module.body if isinstance(c, ast.ClassDef) and c.name == value.func.id), None)
            if cls is None or len(cls.bases) != 1 or cls.keywords or self.names.torch_name(cls.bases[0]) not in (
                    "torch.nn.Module", "torch.nn.modules.module.Module"):
                return None
            members = self.classes.class_attrs(cls).get(attr.attr)
            if not members or not all(self.kinds._own_write(w, cls) for w in self.classes.attribute_writes(attr.attr)):
                return None
            found.extend(members)
        return found

    def instance_values(self, func: ast.expr) -> Optional[List[object]]:
        """What the module called as ``func`` was built from: ``self.<attr>``'s values in its
        class, or the bindings of a local name that reach the call (None: neither)."""
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = self.tree.enclosing_class(func)
            return _held_values(self, cls, func.attr) if cls is not None else []
        if isinstance(func, ast.Name):
            owner = self.tree.owner(func)
            flow = self.binder.flow(owner)
            reaching = self.dataflow.reaching(flow, func.id, self.tree.statement_of(func)) \
                if func.id in flow.bindings and func.id not in flow.declared else []
            return [b.value if b.form == "assign" else None for b in reaching]
        return None

    def forwards_of(self, values: Optional[List[object]]) -> Optional[List[ast.FunctionDef]]:
        """The ``forward`` each of ``values`` (instances of classes of this file) runs; None
        where one is not such an instance."""
        forwards = [self._forward_of(v) for v in values or []]
        if not forwards or any(f is None for f in forwards):
            return None
        return [f for f in forwards if f is not None]

    def _instance_kind(self, func: ast.expr) -> Kind:
        """A call of an instance of an ``nn.Module`` subclass of this file (``self.block1(x)``
        with ``self.block1 = Block(...)``, ``m(x)`` with ``m = Block(...)``): the kind every
        ``return`` of the ``forward`` it runs gives (a tensor where each returns one)."""
        forwards = self.forwards_of(self.instance_values(func))
        if forwards is None:
            return Kind.UNKNOWN
        return self._returns_kind(forwards)

    def _returns_kind(self, forwards: List[ast.FunctionDef]) -> Kind:
        """The kind every ``return`` of each of ``forwards`` gives (a tensor where each returns
        one; unknown for a generator, a path that returns None, or no ``return`` at all: an
        abstract ``raise NotImplementedError`` that an override elsewhere replaces)."""
        kinds: List[Kind] = []
        for forward in forwards:
            returns = [n for n in self.tree.walk(forward) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
                       and self.tree.owner(n) is forward]
            if not never_falls_off(forward.body) \
                    or any(not isinstance(r, ast.Return) or r.value is None for r in returns):
                return Kind.UNKNOWN  # a generator, or a path that returns None
            kinds.extend(self.kinds.kind(cast(ast.expr, r.value)) for r in returns)
        if not kinds:
            return Kind.UNKNOWN
        if all(k in TENSORISH for k in kinds):
            return Kind.TENSOR
        if all(k is Kind.MODULE for k in kinds):
            return Kind.MODULE  # a builder: `return nn.Sequential(*layers)`
        return Kind.PENDING if all(k in TENSORISH or k is Kind.PENDING for k in kinds) else Kind.UNKNOWN

    def _forward_of(self, value: object) -> Optional[ast.FunctionDef]:
        """The ``forward`` an instance built as ``value`` (``Block(d)``, a class of this file
        deriving from ``nn.Module`` through classes of this file, none defining ``__call__``) runs."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        if self._classes is None:
            self._classes = {c.name: c for c in self.module.body if isinstance(c, ast.ClassDef)}
        top = self._classes
        cls = top.get(value.func.id)
        forward: Optional[ast.FunctionDef] = None
        for _ in range(5):
            if cls is None:
                return None
            methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
            if "__call__" in methods or any(isinstance(f, ast.AsyncFunctionDef) for f in cls.body):
                return None
            forward = forward or methods.get("forward")
            if len(cls.bases) != 1 or cls.keywords:
                return None
            base = cls.bases[0]
            if self.names.torch_name(base) in ("torch.nn.Module", "torch.nn.modules.module.Module"):
                return forward
            cls = top.get(base.id) if isinstance(base, ast.Name) else None
        return None

    def _instance_attribute(self, func: ast.Attribute) -> bool:
        """``self.conv3d`` where the calling method's class only ever assigns ``self.conv3d`` a module
        of this file (``self.conv3d = Conv3dWrapper(...)`` in ``__init__``; ``_forward_of``): the call
        runs its ``forward``, whatever its name shares with a tensor method."""
        if not (isinstance(func.value, ast.Name) and func.value.id == "self"):
            return False
        cls = self.tree.enclosing_class(func)
        values = self.classes.class_attrs(cls).get(func.attr) if cls is not None else None
        if not values:
            return False
        return all(self._forward_of(v) is not None for v in values)

    def _own_methods(self) -> FrozenSet[str]:
        """The names of the methods the module's classes define (a user class may have ``norm``)."""
        if self._methods is None:
            self._methods = frozenset(
                f.name for c in self.tree.nodes(ast.ClassDef)
                for f in cast(ast.ClassDef, c).body if isinstance(f, FUNCTIONS))
        return self._methods

    def _non_tensor_library(self, func: ast.expr) -> bool:
        """A method of what a call into a non-tensor library returned (``np.asarray(x).reshape``):
        numpy, pandas, math... values stay theirs along the chain."""
        expr = func.value if isinstance(func, ast.Attribute) else None
        while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(expr, ast.Call):
                if any(q.startswith(NON_TENSOR_PREFIXES) for q in self.names.qualified_names(expr.func)):
                    return True
                expr = expr.func
            else:
                expr = expr.value
        return False

    def is_factory(self, call: ast.Call) -> bool:
        """A torch call that makes a fresh tensor (``torch.zeros(n)``, ``torch.Tensor(n)``)."""
        name = self.names.torch_name(call.func) or ""
        short = name.rsplit(".", 1)[-1]
        if not name.startswith("torch."):
            return False
        if short in LEGACY_CONSTRUCTORS:
            return not any(self.kinds.kind(a) in TENSORISH for a in call_args(call))
        return short in FACTORIES


class ParameterKinds(_KindsPart):
    """A parameter's kind: from its annotation, its default, what this module passes for it, and how the body uses it."""

    def __init__(self, kinds: "TensorKinds") -> None:
        super().__init__(kinds)
        self._uses: Optional[Dict[str, int]] = None  # name -> reads in the module

    def _param_kind(self, param: ast.arg) -> Kind:
        if param.annotation is not None:
            annotated = self.kinds.annotation_kind(param.annotation)
            if annotated is not Kind.UNKNOWN:
                return annotated
        default = self._default_of(param)
        if default is not None and not is_const(default, None):
            return self.kinds.kind(default)
        func = self.tree.owner(param)
        if isinstance(func, FUNCTIONS) and isinstance(self.tree.parent(func), ast.ClassDef) \
                and [*func.args.posonlyargs, *func.args.args][:1] == [param] and param.arg in ("self", "cls"):
            return Kind.UNKNOWN  # the instance: `self.relu(x)` does not make it a tensor
        if isinstance(func, FUNCTIONS) and func.name == "forward" and self._used_as_tensor(func, param.arg):
            return Kind.TENSOR
        if isinstance(func, FUNCTIONS):
            return self._passed_kind(func, param.arg)
        return Kind.UNKNOWN

    def sized_only(self, param: ast.arg) -> bool:
        """Whether ``param`` is never rebound in its function and read as a size there by a
        statement of the function's own body, unconditionally (``nn.Embedding(n * k, d)``,
        ``torch.randn(n, d)``, ``range(n)``, through arithmetic): torch refuses anything but an
        integer there, so past it ``param`` is an integer and cannot require grad (a constructor
        argument a layer keeps as ``self.n``)."""
        func = self.tree.owner(param)
        if not isinstance(func, FUNCTIONS) or len(self.binder.flow(func).bindings.get(param.arg, [])) != 1:
            return False
        return any(self._read_as_size(n, stmt) for stmt in func.body for n in self.tree.walk(stmt)
                   if isinstance(n, ast.Name) and n.id == param.arg and isinstance(n.ctx, ast.Load))

    def constructed_with_numbers(self, param: ast.arg) -> bool:
        """``param`` of a class's ``__init__``, never rebound there, that every construction of
        the class in the file passes a number or leaves to its default (each use of the class's
        name a call spreading nothing): ``Layer(4, torch.tensor(2.0, requires_grad=True))``
        makes an int default no number. (Constructions in files out of view are not seen.)"""
        func = self.tree.owner(param)
        cls = self.tree.parent(func)
        if not (isinstance(func, FUNCTIONS) and func.name == "__init__" and isinstance(cls, ast.ClassDef)) \
                or len(self.binder.flow(func).bindings.get(param.arg, [])) != 1:
            return False
        sites = self.classes.calls_in(self.module).get(cls.name, [])
        if self._name_uses().get(cls.name, 0) != len(sites):
            return False  # a base of another class, a factory handed on: constructed unseen
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)][1:]
        position = plain.index(param.arg) if param.arg in plain else None
        for site in sites:
            passed = None if spreads(site) else passed_for(site, param.arg, position)
            if spreads(site) or passed is not None and self.kinds.kind(passed) is not Kind.SCALAR:
                return False
        return True

    def _read_as_size(self, name: ast.Name, stmt: ast.stmt) -> bool:
        node: ast.AST = name
        parent = self.tree.parent(node)
        while isinstance(parent, ast.BinOp):
            node, parent = parent, self.tree.parent(parent)
        if not (isinstance(parent, ast.Call) and node in parent.args):
            return False
        short = (self.names.torch_name(parent.func) or "").rsplit(".", 1)[-1]
        if not (short in _SIZED_FACTORIES or (short in _SIZED_LAYERS and parent.args.index(node) < 2)
                or isinstance(parent.func, ast.Name) and parent.func.id == "range"
                and "range" not in self.binder.flow(self.module, nested=False).bindings):
            return False
        up = self.tree.parent(parent)  # run whenever ``stmt`` runs: nothing conditional on the way
        while up is not stmt and isinstance(up, (ast.Call, ast.BinOp, ast.keyword, ast.Attribute, ast.Tuple)):
            up = self.tree.parent(up)
        return up is stmt and isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return))

    def _name_uses(self) -> Dict[str, int]:
        """How often each name is read in the module (one walk, on first use)."""
        if self._uses is None:
            self._uses = {}
            for n in self.tree.nodes(ast.Name):
                if isinstance(cast(ast.Name, n).ctx, ast.Load):
                    self._uses[cast(ast.Name, n).id] = self._uses.get(cast(ast.Name, n).id, 0) + 1
        return self._uses

    def _passed_kind(self, func: ast.AST, param: str) -> Kind:
        """A module-level function's parameter is a tensor when every call of the function in
        the file passes one (``boltzmann(x)`` with ``x = torch.randn(...)``); so is a helper
        method's, called only as ``self.<name>(...)`` from its class (:meth:`_self_calls`). A use
        that is no call (``f = boltzmann``), ``*args`` or a missing argument leaves it unknown."""
        if not isinstance(func, FUNCTIONS):
            return Kind.UNKNOWN
        args = func.args
        plain = [a.arg for a in (*args.posonlyargs, *args.args)]
        owner = self.tree.parent(func)
        if owner is self.module:
            sites = self.classes.calls_in(self.module).get(func.name, [])
            if self._name_uses().get(func.name, 0) != len(sites):
                return Kind.UNKNOWN
        elif isinstance(owner, ast.ClassDef):
            own = self._self_calls(owner, func)
            sites = (self.kinds.held.calls(owner, func) if own is None else own) or []  # `self.fn(x)` of a held one
            plain = plain[1:]  # `self.helper(x)` passes `x` for the parameter after `self`
        else:
            return Kind.UNKNOWN
        position = plain.index(param) if param in plain else None
        kinds: List[Kind] = self._passed_elsewhere(func, param, position)
        if not sites and not kinds:
            return Kind.UNKNOWN
        for site in sites:
            if spreads(site):
                return Kind.UNKNOWN
            passed = passed_for(site, param, position)
            if passed is None:
                return Kind.UNKNOWN
            kinds.append(self.kinds.kind(passed))
        if all(k in TENSORISH for k in kinds):
            return Kind.TENSOR
        return Kind.PENDING if Kind.PENDING in kinds and all(k in TENSORISH or k is Kind.PENDING for k in kinds) else Kind.UNKNOWN

    def _passed_elsewhere(self, func: Function, param: str, position: Optional[int]) -> List[Kind]:
        """What the calls of ``func`` in the run's other files pass for ``param``, as their own
        analysis saw it (the project index): a tensor, or unknown (a reference, whose calls cannot
        be followed, is unknown too). Empty without an index or without such calls."""
        calls = self.kinds.callers
        project = calls.project if calls is not None else None
        qualname = calls.qualname(func) if calls is not None else None
        if project is None or qualname is None:
            return []
        method = isinstance(self.tree.parent(func), ast.ClassDef)
        module = qualname.rsplit(".", 2 if method else 1)[0]
        bound = instance_calls_count(calls, func)
        return [Kind.TENSOR if passes_tensor(call, param, position, method) else Kind.UNKNOWN
                for call in project.calls_from_elsewhere(qualname, module) if bound or not call.bound]

    def _self_calls(self, cls: ast.ClassDef, func: ast.AST) -> Optional[List[ast.Call]]:
        """The calls ``self.<name>(...)`` of a helper method of a top-level class from the class's
        own methods, where the file reaches the method no other way: no other read of an
        attribute of that name (``net.helper(v)``, ``f = self.helper``), no string of it
        (``getattr``), no class of the file derived from ``cls``; None otherwise (a dunder or a
        decorated method: called from elsewhere)."""
        name = getattr(func, "name", "")
        if self.tree.parent(cls) is not self.module or name.startswith("__") or getattr(func, "decorator_list", None):
            return None
        if any(any(target_key(b) == cls.name or isinstance(b, ast.Attribute)
                   and b.attr == cls.name for b in cast(ast.ClassDef, c).bases)
               for c in self.tree.nodes(ast.ClassDef)):
            return None
        sites = [c for c in self.classes.calls_in(cls).get(f"self.{name}", [])]
        # (counted only: the attributes and the constants apart, not in one walk's order)
        reads = [n for n in self.tree.nodes(ast.Attribute) if cast(ast.Attribute, n).attr == name] \
            + [n for n in self.tree.nodes(ast.Constant) if cast(ast.Constant, n).value == name]
        if len(reads) != len(sites) or any(self._enclosing_class(c) is not cls for c in sites):
            return None
        return sites

    def _enclosing_class(self, node: ast.AST) -> Optional[ast.ClassDef]:
        for anc in self.tree.ancestors(node):
            if isinstance(anc, ast.ClassDef):
                return anc
        return None

    def _default_of(self, param: ast.arg) -> Optional[ast.expr]:
        args = self.tree.parent(param)
        if not isinstance(args, ast.arguments):
            return None
        plain = [*args.posonlyargs, *args.args]
        for i, a in enumerate(plain):
            if a is param:
                j = i - (len(plain) - len(args.defaults))
                return args.defaults[j] if j >= 0 else None
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            if a is param:
                return d
        return None

    def _module_uses_as_tensor(self, call: ast.Call, name: str, depth: int) -> bool:
        """``self.ln_1(x)``: ``x`` (or a slice of it, :meth:`_array_slice_of`) passed, by
        position, to a module of this file whose every ``forward`` it may run uses that
        parameter as a tensor (followed a few levels)."""
        if any(k.arg is None for k in call.keywords) or any(isinstance(a, ast.Starred) for a in call.args):
            return False  # (keywords name other parameters: the positions stand)
        at = [i for i, a in enumerate(call.args)
              if isinstance(a, ast.Name) and a.id == name or self._array_slice_of(a, name, call)]
        forwards = self.kinds.calls.forwards_of(self.kinds.calls.instance_values(call.func))
        if len(at) != 1 or not forwards:
            return False
        for forward in forwards:
            plain = [a.arg for a in (*forward.args.posonlyargs, *forward.args.args)][1:]
            if at[0] >= len(plain) or not self._used_as_tensor(forward, plain[at[0]], depth + 1):
                return False
        return True

    def _used_as_tensor(self, func: ast.AST, name: str, depth: int = 0) -> bool:
        """A forward() argument passed to torch or to a module (one of this file's included,
        where its forward uses it so), or used via a tensor method."""
        for calls in self.classes.calls_in(func).values():
            for call in calls:
                if any(isinstance(a, ast.Name) and a.id == name or self._array_slice_of(a, name, call)
                       for a in call_args(call)):
                    torch_name = self.names.torch_name(call.func)
                    if torch_name is not None and torch_name.rsplit(".", 1)[-1] in TAKES_ANY:
                        continue  # `torch.cat(feats)`: a list of tensors; `torch.save(state)`: any object
                    if torch_name is not None or self.kinds.kind(call.func) is Kind.MODULE:
                        return True
                    if depth < 3 and self._module_uses_as_tensor(call, name, depth):
                        return True
                f = call.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == name:
                    if f.attr in torch_api.TENSOR_METHODS and f.attr not in _CONTAINER_METHODS:
                        return True
        return False

    def _array_slice_of(self, arg: ast.expr, name: str, call: ast.Call) -> bool:
        """``arg`` is the parameter ``name`` (not rebound) indexed by a tuple holding a slice or
        ``...`` (``z[..., i:i + 1]``), or a name every binding of which reaching ``call`` is one
        (``single = z[:, :2]``): lists, tuples and dicts of tensors refuse such an index, so
        where torch or a layer takes the result, ``name`` is a tensor (torch refuses numpy's
        slice; the conversions, ``TAKES_ANY``, are skipped by the caller)."""
        at = self.tree.statement_of(call)
        if isinstance(arg, ast.Name) and arg.id != name:
            reaching = self._reaching(arg.id, at)
            return bool(reaching) and all(
                b.form == "assign" and b.value is not None and not b.sources
                and self._param_sliced(b.value, name, b.stmt) for b in reaching)
        return self._param_sliced(arg, name, at)

    def _param_sliced(self, expr: ast.expr, name: str, at: Located) -> bool:
        if not (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and expr.value.id == name
                and isinstance(expr.slice, ast.Tuple)
                and any(isinstance(e, ast.Slice) or isinstance(e, ast.Constant) and e.value is Ellipsis
                        for e in expr.slice.elts)):
            return False
        reaching = self._reaching(name, at)
        return len(reaching) == 1 and reaching[0].form == "param"

    def _reaching(self, key: str, at: Located) -> List[Binding]:
        return list(self.dataflow.reaching(self.binder.flow(self.tree.owner(at)), key, at))


def _pieces(calls: CallKinds, call: ast.Call, place: int, width: Optional[int]) -> Optional[List[ast.expr]]:
    """What each ``return`` of the callee of ``call`` gives at ``place`` of the tuple it returns:
    ``f`` the module-level ``helper``, ``self.helper`` (the calling method's class's own, not
    overridden: ``CallKinds.own_callee``) or ``self.block`` (each ``forward`` the module may run).
    None where a callee is unknown or a ``return`` is not a tuple display (of ``width`` pieces
    where given, else of more than ``place``; no starred piece)."""
    func = call.func
    funcs: Optional[List[ast.FunctionDef]] = None
    if isinstance(func, ast.Name):
        found = next((s for s in calls.module.body if isinstance(s, FUNCTIONS) and s.name == func.id), None)
        funcs = [found] if isinstance(found, ast.FunctionDef) else None
    elif calls.names.torch_name(func) is None:
        own = calls.own_callee(func)
        funcs = [own] if own is not None else calls.forwards_of(calls.instance_values(func))
    if not funcs:
        return None
    pieces: List[ast.expr] = []
    for f in funcs:
        for node in calls.tree.walk(f):
            if not (isinstance(node, ast.Return) and calls.tree.owner(node) is f):
                continue
            value = node.value
            if not (isinstance(value, ast.Tuple) and (len(value.elts) == width if width is not None
                                                       else len(value.elts) > place)
                    and not any(isinstance(e, ast.Starred) for e in value.elts)):
                return None
            pieces.append(value.elts[place])
    return pieces or None


def piece_kind(calls: CallKinds, call: ast.Call, index: ast.expr) -> Kind:
    """``f(x)[i]`` (``i`` an int literal, not negative) where every ``return`` of the callee
    gives a tuple display with a piece at ``i`` (:func:`_pieces`): a tensor where each such piece
    is one (pending where one is still being asked); unknown otherwise."""
    if not (isinstance(index, ast.Constant) and type(index.value) is int and index.value >= 0) \
            or isinstance(call.func, ast.Name) and calls.own_callee(call.func) is None:
        return Kind.UNKNOWN  # (a name: the module's one undecorated `def` of it, not a local)
    pieces = _pieces(calls, call, index.value, None)
    kinds = [calls.kinds.kind(p) for p in pieces or ()]
    if kinds and all(k in TENSORISH for k in kinds):
        return Kind.TENSOR
    return Kind.PENDING if kinds and all(k in TENSORISH or k is Kind.PENDING for k in kinds) else Kind.UNKNOWN


def _held_values(calls: CallKinds, cls: ast.ClassDef, attr: str) -> List[object]:
    """``self.<attr>``'s values in ``cls``; for one that an ``__init__`` parameter holds (``self.net
    = net``), what every construction of the class passes, where that set is closed
    (``handed_in.constructed_values``)."""
    handed = constructed_values(calls.tree, calls.binder, calls.dataflow, calls.classes, calls.kinds.callers, cls, attr)
    return list(handed) if handed is not None else list(calls.classes.class_attrs(cls).get(attr, []))


class HeldInstances(_KindsPart):
    """Instances of a class of this file that another class holds as ``self.<a>`` (``self.fn =
    Marg(n)`` in its ``__init__``), and the calls of their methods through it: ``self.fn.run(x)``
    runs ``Marg.run``, ``self.fn(x)`` runs ``Marg.__call__`` (torch_two_sample's
    ``self.marginals_fn(...)``: the write into its argument needs what the caller hands)."""

    def held_class(self, holder: ast.expr) -> Optional[ast.ClassDef]:
        """``self.<a>`` where every value its (top-level) class gives ``<a>`` is a construction
        ``K(...)`` of one top-level class ``K`` of this file (its name bound once in the module and
        by no function around a construction), no write of ``<x>.<a>`` in the file is another
        (``net.fn = other``, a subclass's ``self.fn = ...``), and no string names ``<a>``
        (``setattr``): ``K``. ``K`` may define no ``__getattr__`` / ``__getattribute__``, nor be
        decorated. None otherwise."""
        if not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name) and holder.value.id == "self"):
            return None
        owner = self.tree.enclosing_class(holder)
        if owner is None or self.tree.parent(owner) is not self.module:
            return None
        values = self.classes.class_attrs(owner).get(holder.attr, [])
        names = {v.func.id for v in values if isinstance(v, ast.Call) and isinstance(v.func, ast.Name)}
        if not values or len(names) != 1 or not all(isinstance(v, ast.Call) and isinstance(v.func, ast.Name) for v in values):
            return None
        name = names.pop()
        built = [s for s in self.module.body if isinstance(s, ast.ClassDef) and s.name == name]
        if len(built) != 1 or len(self.binder.flow(self.module, nested=False).bindings.get(name, [])) != 1 \
                or built[0].decorator_list or any(isinstance(f, FUNCTIONS) and f.name in ("__getattr__", "__getattribute__")
                                                  for f in built[0].body):
            return None
        for value in cast(List[ast.Call], values):
            func = self.tree.owner(value)
            if isinstance(func, FUNCTIONS) and name in self.binder.flow(func, nested=False).bindings:
                return None  # a local of the class's name
        writes = self.classes.attribute_writes(holder.attr)
        if any(not (isinstance(w, ast.Attribute) and isinstance(w.value, ast.Name) and w.value.id == "self"
                    and self.tree.enclosing_class(w) is owner and isinstance(self.tree.parent(w), ast.Assign))
               for w in writes) or self._named_by_string(holder.attr):
            return None
        return built[0]

    def method_of(self, func: ast.expr) -> Optional[ast.FunctionDef]:
        """``self.<a>.<m>``, ``self.<a>`` a held instance of ``K`` (:meth:`held_class`): ``K``'s own
        undecorated method ``<m>`` (not a dunder), where nothing in the file sets ``<x>.<m>`` (an
        instance attribute would shadow it). None otherwise."""
        if not isinstance(func, ast.Attribute) or func.attr.startswith("__"):
            return None
        cls = self.held_class(func.value)
        if cls is None or self.classes.attribute_writes(func.attr):
            return None
        found = [f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == func.attr]
        if len(found) != 1 or not isinstance(found[0], ast.FunctionDef) or found[0].decorator_list \
                or any(isinstance(s, (ast.Assign, ast.AnnAssign)) and func.attr in map(target_key, (
                    s.targets if isinstance(s, ast.Assign) else [s.target])) for s in cls.body):
            return None
        return found[0]

    def calls(self, cls: ast.ClassDef, func: ast.AST) -> Optional[List[ast.Call]]:
        """Every call of ``cls.__call__`` (``func``; ``cls`` a top-level class no class of the file
        derives from) the file makes, where it reaches ``cls``'s instances only as held ones:
        ``cls`` built only as ``self.<a> = cls(...)`` (:meth:`held_class`), each such ``self.<a>``
        read only in its holder's class and there only called (``self.<a>(x)``: ``__call__``) or
        read for an attribute (``self.<a>.m(x)``: method ``m``), and ``func``'s name read only as
        ``self.<name>(...)`` in ``cls`` itself or ``self.<a>.<name>(...)`` (no string of it).
        None where another way in is seen (a read handing the instance on, a construction kept
        elsewhere, a subclass), or ``func`` is decorated or another method than ``__call__``."""
        name = getattr(func, "name", "")
        if self.tree.parent(cls) is not self.module or cls.decorator_list or getattr(func, "decorator_list", None) \
                or name != "__call__" or self._named_by_string(name):
            return None  # (another method, `self.proc.process_data(batch)`: a data step as often as a function of
            # activations, audiocraft's `x /= x.std(...)`; a held callable is called as a function is)
        if any(any(target_key(b) == cls.name or isinstance(b, ast.Attribute) and b.attr == cls.name
                   for b in cast(ast.ClassDef, c).bases) for c in self.tree.nodes(ast.ClassDef)):
            return None
        holders: Dict[str, ast.ClassDef] = {}
        for mention in self.classes.mentions(cls.name):
            if not isinstance(mention, ast.Name):
                continue  # (`x.<cls name>`: another object's attribute)
            call = self.tree.parent(mention)
            stmt = self.tree.parent(call) if isinstance(call, ast.Call) and call.func is mention else None
            if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.value is call
                    and isinstance(stmt.targets[0], ast.Attribute) and self.held_class(stmt.targets[0]) is cls):
                return None  # built and kept otherwise (a local, a list, handed on): not followed
            holders[stmt.targets[0].attr] = cast(ast.ClassDef, self.tree.enclosing_class(stmt))
        if not holders:
            return None
        sites: List[ast.Call] = []
        for attr, owner in holders.items():
            for mention in self.classes.mentions(attr):
                if not isinstance(mention, ast.Attribute) or not isinstance(mention.ctx, ast.Load):
                    continue  # (its writes: `held_class` checked them)
                if not (isinstance(mention.value, ast.Name) and mention.value.id == "self"
                        and self.tree.enclosing_class(mention) is owner):
                    return None  # read on another receiver or in another class: its calls unseen
                up = self.tree.parent(mention)
                if isinstance(up, ast.Call) and up.func is mention:
                    if name == "__call__":
                        sites.append(up)
                    continue
                if not (isinstance(up, ast.Attribute) and up.value is mention and isinstance(up.ctx, ast.Load)):
                    return None  # the instance handed on, returned, compared...: other calls unseen
        for named in self.classes.mentions(name):
            if not isinstance(named, ast.Attribute):
                continue  # (a local or a function of that name: no attribute of an instance)
            mention = named
            call = self.tree.parent(mention)
            if not (isinstance(call, ast.Call) and call.func is mention and isinstance(mention.ctx, ast.Load)):
                return None
            receiver = mention.value
            if isinstance(receiver, ast.Name) and receiver.id == "self" and self.tree.enclosing_class(mention) is cls:
                sites.append(call)
            elif self.held_class(receiver) is cls:
                sites.append(call)
            else:
                return None  # another receiver's `.<name>`: may be an instance of `cls` too
        return sites

    def _named_by_string(self, word: str) -> bool:
        return any(cast(ast.Constant, n).value == word for n in self.tree.nodes(ast.Constant))


# Methods of lists and dicts that tensors do not have.
_CONTAINER_ONLY = frozenset({"items", "keys", "append", "extend", "insert", "setdefault", "update", "get",
                             "popitem", "pop"})


def used_as_container(model: Facts, target: ast.AST, node: ast.AST) -> bool:
    """``target`` (a name) is read with a method only lists and dicts have (``outs.append(y)``,
    ``store.items()``, ``header.pop(k)``) in the function around ``node``, or indexed with a
    string (``data[key]``, ``key: str``: ``string_keys``): a container, never a tensor autograd
    saved, never cloned or rebound as one. Or ``node`` runs where ``isinstance(target,
    torch.Tensor)`` was false (:func:`tensor_test_failed`): a list of tensors there, no tensor."""
    if not isinstance(target, ast.Name):
        return False
    if indexed_by_string(model, target, cast(Located, node)) \
            or tensor_test_failed(model.parent, model.torch_name, target, node):
        return True
    flow = model.flow(model.owner(model.statement_of(cast(Located, node))))
    for _, load in flow.loads.get(target.id, []):
        parent = model.parent(load)
        if isinstance(parent, ast.Attribute) and parent.value is load and parent.attr in _CONTAINER_ONLY:
            call = model.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                return True
    return False


def _tensor_test(test: ast.expr, key: str, torch_name: Callable[[ast.AST], Optional[str]]) -> bool:
    """``isinstance(x, torch.Tensor)`` (``torch.Tensor`` alone or in a tuple of classes) or
    ``torch.is_tensor(x)``, of ``x`` whose key is ``key``: false only where ``x`` is no tensor."""
    if not (isinstance(test, ast.Call) and not test.keywords and test.args and target_key(test.args[0]) == key):
        return False
    if len(test.args) == 1:
        return torch_name(test.func) == "torch.is_tensor"
    if not (isinstance(test.func, ast.Name) and test.func.id == "isinstance" and len(test.args) == 2):
        return False
    classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    return any(torch_name(c) == "torch.Tensor" for c in classes)


def _rebinds(block: Sequence[ast.stmt], key: str) -> bool:
    """Something in ``block`` (nested statements included) binds the name ``key`` anew."""
    for stmt in block:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Name) and node.id == key and not isinstance(node.ctx, ast.Load):
                return True  # `buf = ...`, `for buf in ...`, `with ... as buf`, `(buf := ...)`
            if isinstance(node, (ast.Global, ast.Nonlocal)) and key in node.names:
                return True
            if isinstance(node, (ast.ExceptHandler, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                    and node.name == key or isinstance(node, ast.alias) and (node.asname or node.name) == key:
                return True
    return False


def tensor_test_failed(parent: Callable[[ast.AST], Optional[ast.AST]], torch_name: Callable[[ast.AST], Optional[str]],
                       base: ast.expr, node: ast.AST) -> bool:
    """``node`` runs only where ``isinstance(base, torch.Tensor)`` (or ``torch.is_tensor(base)``)
    was false: in the ``else`` arm (an ``elif`` of it too) of ``if isinstance(buf, torch.Tensor):``,
    or in the body of ``if not isinstance(buf, torch.Tensor):``, with nothing in that arm binding
    the name anew. There ``base`` is no tensor (a list of them, a tuple): writing into its items
    writes into no tensor. Names only (a call could rebind an attribute)."""
    if not isinstance(base, ast.Name):
        return False
    key = base.id
    here: ast.AST = node
    up = parent(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
                                                   ast.Module)):
        if isinstance(up, ast.If):
            arm = up.orelse if any(s is here for s in up.orelse) else up.body if any(s is here for s in up.body) else None
            test, failed = up.test, arm is up.orelse
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                test, failed = test.operand, not failed
            if arm is not None and failed and _tensor_test(test, key, torch_name) and not _rebinds(arm, key):
                return True
        here, up = up, parent(up)
    return False
