"""The judgement every pass shares: tensor or not, grad mode, aliases, scope, dtype.

One :class:`Judge` is built per module from one ``MetadataWrapper``; the passes ask it
questions about nodes of that module. All answers are conservative: what cannot be shown is
``UNKNOWN``, and the passes turn that into an unsafe fix or no fix, never a silent guess.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Iterable, Optional, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (
    FunctionScope,
    MetadataWrapper,
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from . import torch_api
from .findings import Status


class Kind(enum.Enum):
    TENSOR = "tensor"
    PARAMETER = "parameter"  # an nn.Parameter: a tensor that cannot be rebound to a plain one
    MODULE = "module"  # a torch.nn module instance known to return a tensor
    SCALAR = "scalar"  # a Python number or bool
    OTHER = "other"  # known not to be a tensor: str, containers, numpy, classes, None...
    UNKNOWN = "unknown"
    PENDING = "pending"  # internal: a recursive question still being answered


TENSORISH = (Kind.TENSOR, Kind.PARAMETER)

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
_SCALAR_BUILTINS = {"len", "int", "float", "bool", "round", "hash", "id", "ord"}
_OTHER_BUILTINS = {
    "range", "list", "dict", "set", "tuple", "str", "enumerate", "zip", "sorted", "reversed",
    "map", "filter", "frozenset", "bytes", "repr", "format", "type", "object", "print",
    "isinstance", "open", "iter", "vars", "dir", "getattr", "hasattr", "super",
}
# Method names shared with builtin containers and strings: a call of one does not show that
# its receiver is a tensor.
_CONTAINER_METHODS = {
    "add", "append", "extend", "insert", "remove", "pop", "clear", "copy", "count", "index",
    "sort", "reverse", "update", "get", "items", "keys", "values", "setdefault", "split",
    "join", "strip", "replace", "format", "startswith", "endswith", "lower", "upper", "find",
}
_NON_TENSOR_PREFIXES = ("numpy.", "pandas.", "math.", "random.", "collections.", "itertools.")
_GRAD_OFF_CONTEXTS = {
    "torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
    "torch.inference_mode", "torch.autograd.grad_mode.inference_mode",
}
_GRAD_SET = {"torch.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
_GRAD_ON_CONTEXTS = {"torch.enable_grad", "torch.autograd.grad_mode.enable_grad"}

Pos = tuple  # (line, column)
_BLOCKS = (cst.IndentedBlock, cst.Module, cst.SimpleStatementSuite)


def target_key(node: cst.CSTNode) -> Optional[str]:
    """``x`` -> "x", ``self.h.w`` -> "self.h.w"; anything else -> None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = target_key(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def subscript_base(node: cst.BaseExpression) -> cst.BaseExpression:
    """``d[0][1:]`` -> ``d``."""
    while isinstance(node, cst.Subscript):
        node = node.value
    return node


def has_call(node: cst.CSTNode) -> bool:
    """Whether evaluating ``node`` may call something (so it must not be evaluated twice)."""
    return bool(m.findall(node, m.Call() | m.Await() | m.Yield() | m.NamedExpr()))


def join(kinds: Iterable[Kind]) -> Kind:
    seen = {k for k in kinds if k is not Kind.PENDING}
    if not seen:
        return Kind.PENDING
    if len(seen) == 1:
        return seen.pop()
    if seen <= {Kind.TENSOR, Kind.PARAMETER}:
        return Kind.TENSOR
    return Kind.UNKNOWN


@dataclasses.dataclass
class Binding:
    """One assignment of a key inside a function (or the module's top level)."""

    key: str
    start: Pos
    end: Pos
    stmt: cst.CSTNode
    value: Optional[cst.BaseExpression]  # the assigned expression, when it is one whole value
    form: str  # "assign", "aug", "ann", "for", "param", "def", "other"
    sources: Sequence[str] = ()  # other keys bound by the same statement (a = b = value)


@dataclasses.dataclass
class Flow:
    """What one function body does with names, gathered in one walk of it."""

    owner: cst.CSTNode  # FunctionDef or Module
    bindings: dict = dataclasses.field(default_factory=dict)  # key -> [Binding]
    loads: dict = dataclasses.field(default_factory=dict)  # key -> [(Pos, node)]
    loops: list = dataclasses.field(default_factory=list)  # [(start, end)]
    declared: set = dataclasses.field(default_factory=set)  # global / nonlocal names
    params: set = dataclasses.field(default_factory=set)
    returns_value: bool = False


class _FlowCollector(cst.CSTVisitor):
    """Walks one function body. Nested functions and classes are other scopes: their bindings
    are not this body's, but their loads count as uses (closures read names late)."""

    def __init__(self, judge: "Judge", flow: Flow) -> None:
        self.judge = judge
        self.flow = flow
        self.stores: set = set()  # ids of Name/Attribute nodes that are assignment targets
        self.depth = 0  # how many nested scopes deep the walk is

    def _bind(self, target: cst.CSTNode, stmt: cst.CSTNode, value, form: str, group=()) -> None:
        key = target_key(target)
        if key is None:
            if isinstance(target, (cst.Tuple, cst.List)):
                for el in target.elements:
                    self._bind(el.value, stmt, None, "other")
            elif isinstance(target, cst.StarredElement):
                self._bind(target.value, stmt, None, "other")
            return
        self.stores.add(id(target))
        if self.depth:
            return
        rng = self.judge.range(stmt)
        binding = Binding(key, rng[0], rng[1], stmt, value, form, tuple(k for k in group if k != key))
        self.flow.bindings.setdefault(key, []).append(binding)

    def visit_Param(self, node: cst.Param) -> None:
        if not self.depth:
            self.flow.params.add(node.name.value)
        self._bind(node.name, node, None, "param")

    def visit_Assign(self, node: cst.Assign) -> None:
        keys = [target_key(t.target) for t in node.targets]
        for t in node.targets:
            pairs = _unpacked(t.target, node.value)
            if pairs:
                for target, value in pairs:
                    self._bind(target, node, value, "assign")
            else:
                self._bind(t.target, node, node.value, "assign", [k for k in keys if k])

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target, node, node, "ann")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target, node, node.value, "aug")

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target, node, node.iter, "for")
        if not self.depth:
            self.flow.loops.append(self.judge.range(node))

    def visit_While(self, node: cst.While) -> None:
        if not self.depth:
            self.flow.loops.append(self.judge.range(node))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind(node.asname.name, node, None, "other")

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node, node.value, "assign")

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind(node.target, node, None, "other")

    def visit_FunctionDef(self, node: cst.FunctionDef) -> Optional[bool]:
        if node is self.flow.owner:
            return True
        self._bind(node.name, node, None, "def")
        self.depth += 1
        return True  # closures: loads inside count as uses

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if node is not self.flow.owner:
            self.depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name, node, None, "def")
        self.depth += 1

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.depth -= 1

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.depth += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.depth -= 1

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = alias.asname.name if alias.asname else alias.name
            while isinstance(name, cst.Attribute):
                name = name.value
            self._bind(name, node, None, "def")

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, Sequence):
            for alias in node.names:
                self._bind(alias.asname.name if alias.asname else alias.name, node, None, "def")

    def visit_Global(self, node: cst.Global) -> None:
        if not self.depth:
            self.flow.declared.update(n.name.value for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        if not self.depth:
            self.flow.declared.update(n.name.value for n in node.names)

    def visit_Return(self, node: cst.Return) -> None:
        if not self.depth and node.value is not None and not m.matches(node.value, m.Name("None")):
            self.flow.returns_value = True

    def visit_Yield(self, node: cst.Yield) -> None:
        if not self.depth:
            self.flow.returns_value = True

    def _load(self, node: cst.CSTNode) -> None:
        key = target_key(node)
        if key is not None and id(node) not in self.stores:
            self.flow.loads.setdefault(key, []).append((self.judge.range(node)[0], node))

    def visit_Name(self, node: cst.Name) -> None:
        self._load(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._load(node)


def _unpacked(target: cst.CSTNode, value: cst.BaseExpression) -> list:
    """``a, b = 1.0, x`` -> [(a, 1.0), (b, x)]; [] unless both sides are plain, equal tuples."""
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return []
    if len(target.elements) != len(value.elements):
        return []
    if any(isinstance(e, (cst.StarredElement)) for e in (*target.elements, *value.elements)):
        return []
    return [(t.value, v.value) for t, v in zip(target.elements, value.elements)]


@dataclasses.dataclass
class Verdict:
    """What a pass may do with one in-place candidate."""

    status: Optional[Status]  # None: not a candidate (known not to be a tensor)
    reason: Optional[str] = None
    also_rebind: tuple = ()  # identity aliases that a rebinding fix must bind too


@dataclasses.dataclass
class AliasReport:
    reason: Optional[str]  # None, "alias", "view-alias", "param-mutation", "mutation-as-output"
    also_rebind: tuple = ()  # identity aliases a fix must rebind too


class Judge:
    """Answers the passes' questions about one module."""

    def __init__(self, wrapper: MetadataWrapper, assume_same_dtype: bool = False) -> None:
        self.wrapper = wrapper
        self.module = wrapper.module
        self.assume_same_dtype = assume_same_dtype
        self._parents = wrapper.resolve(ParentNodeProvider)
        self._positions = wrapper.resolve(PositionProvider)
        self._scopes = wrapper.resolve(ScopeProvider)
        self._qnames = wrapper.resolve(QualifiedNameProvider)
        self._flows: dict = {}
        self._class_attrs: dict = {}
        self._kind_cache: dict = {}
        self._pending: set = set()
        self._names: Optional[set] = None
        self._hazards = None

    @property
    def hazards(self):
        """The hazard analysis of this module (see ``codemod.hazard``)."""
        if self._hazards is None:
            from .hazard import Hazards

            self._hazards = Hazards(self)
        return self._hazards

    # ----------------------------------------------------------------- basics
    def parent(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        node = self._parents.get(node)
        while node is not None:
            yield node
            node = self._parents.get(node)

    def range(self, node: cst.CSTNode) -> tuple:
        r = self._positions[node]
        return (r.start.line, r.start.column), (r.end.line, r.end.column)

    def position(self, node: cst.CSTNode):
        return self._positions[node]

    def qualified_names(self, node: cst.CSTNode) -> set:
        value = self._qnames.get(node)
        if value is None:
            return set()
        if callable(value) and not isinstance(value, (set, frozenset)):
            value = value()  # libcst resolves some metadata lazily
        return {q.name for q in value}

    def torch_name(self, node: cst.CSTNode) -> Optional[str]:
        """The qualified name of a name or attribute ``node`` when it resolves into torch."""
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None  # libcst names a call `nn.ReLU(...)` after its callee: not the same thing
        for name in self.qualified_names(node):
            if name == "torch" or name.startswith("torch."):
                return name
        return None

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The small statement (or compound header) that contains ``node``."""
        cur = node
        while cur is not None and not isinstance(
            cur, (cst.BaseSmallStatement, cst.BaseCompoundStatement)
        ):
            cur = self._parents.get(cur)
        return cur or node

    def owner(self, node: cst.CSTNode) -> cst.CSTNode:
        """The function whose body holds ``node``, or the module."""
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.FunctionDef, cst.Module)):
                return anc
        return self.module

    def enclosing_class(self, node: cst.CSTNode) -> Optional[cst.ClassDef]:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.ClassDef):
                return anc
        return None

    def flow(self, owner: cst.CSTNode) -> Flow:
        flow = self._flows.get(id(owner))
        if flow is None:
            flow = Flow(owner)
            owner.visit(_FlowCollector(self, flow))
            self._flows[id(owner)] = flow
        return flow

    # ------------------------------------------------------------ tensor or not
    def kind(self, expr: cst.BaseExpression) -> Kind:
        cached = self._kind_cache.get(id(expr))
        if cached is not None:
            return cached
        if id(expr) in self._pending:
            return Kind.PENDING
        self._pending.add(id(expr))
        try:
            result = self._kind(expr)
        finally:
            self._pending.discard(id(expr))
        if not self._pending:  # a whole answer, not one that assumed a pending question
            if result is Kind.PENDING:
                result = Kind.UNKNOWN
            self._kind_cache[id(expr)] = result
        return result

    def is_tensor(self, expr: cst.BaseExpression) -> bool:
        return self.kind(expr) in TENSORISH

    def _kind(self, expr: cst.BaseExpression) -> Kind:
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return Kind.SCALAR
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return Kind.OTHER
        if isinstance(expr, (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp,
                             cst.DictComp, cst.GeneratorExp, cst.Lambda)):
            return Kind.OTHER
        if isinstance(expr, cst.Name):
            if expr.value in ("True", "False"):
                return Kind.SCALAR
            if expr.value == "None":
                return Kind.OTHER
            return self._name_kind(expr)
        if isinstance(expr, cst.Attribute):
            return self._attribute_kind(expr)
        if isinstance(expr, cst.Call):
            return self._call_kind(expr)
        if isinstance(expr, cst.Subscript):
            if m.matches(expr.value, m.Attribute(attr=m.Name("shape"))):
                return Kind.OTHER  # x.shape[0], x.shape[1:]: sizes
            base = self.kind(expr.value)
            return Kind.TENSOR if base in TENSORISH else (Kind.PENDING if base is Kind.PENDING else Kind.UNKNOWN)
        if isinstance(expr, cst.BinaryOperation):
            return self._arith_kind([self.kind(expr.left), self.kind(expr.right)])
        if isinstance(expr, cst.UnaryOperation):
            inner = self.kind(expr.expression)
            if isinstance(expr.operator, cst.Not):
                return Kind.TENSOR if inner in TENSORISH else Kind.SCALAR
            return Kind.TENSOR if inner is Kind.PARAMETER else inner
        if isinstance(expr, cst.Comparison):
            kinds = [self.kind(expr.left)] + [self.kind(c.comparator) for c in expr.comparisons]
            if any(k in TENSORISH for k in kinds):
                return Kind.TENSOR
            return Kind.SCALAR if all(k in (Kind.SCALAR, Kind.OTHER) for k in kinds) else Kind.UNKNOWN
        if isinstance(expr, cst.IfExp):
            return join([self.kind(expr.body), self.kind(expr.orelse)])
        return Kind.UNKNOWN

    @staticmethod
    def _arith_kind(kinds: list) -> Kind:
        if any(k in TENSORISH for k in kinds):
            return Kind.TENSOR
        if Kind.UNKNOWN in kinds or Kind.MODULE in kinds:
            return Kind.UNKNOWN
        if Kind.PENDING in kinds:
            return Kind.PENDING
        if all(k is Kind.SCALAR for k in kinds):
            return Kind.SCALAR
        return Kind.OTHER

    def _call_kind(self, call: cst.Call) -> Kind:
        func = call.func
        name = self.torch_name(func)
        if name is not None:
            if name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
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
        for qname in self.qualified_names(func):
            if qname.startswith("builtins."):
                short = qname[len("builtins."):]
                if short in _SCALAR_BUILTINS:
                    return Kind.SCALAR
                if short in _OTHER_BUILTINS:
                    return Kind.OTHER
            if qname.startswith(_NON_TENSOR_PREFIXES):
                return Kind.OTHER
        if isinstance(func, cst.Attribute):
            receiver = self.kind(func.value)
            method = func.attr.value
            if receiver in TENSORISH:
                if method in torch_api.TENSOR_METHODS or method in torch_api.INPLACE_METHODS:
                    return Kind.TENSOR
                if method in ("item", "dim", "numel", "ndimension", "nelement", "element_size",
                              "is_contiguous", "is_floating_point", "requires_grad"):
                    return Kind.SCALAR
                if method in ("size", "tolist", "numpy", "stride", "storage", "type"):
                    return Kind.OTHER
                return Kind.UNKNOWN
            if receiver is Kind.PENDING:
                return Kind.PENDING
        callee = self.kind(func)
        if callee is Kind.MODULE:
            return Kind.TENSOR
        if callee is Kind.PENDING:
            return Kind.PENDING
        return Kind.UNKNOWN

    def _attribute_kind(self, attr: cst.Attribute) -> Kind:
        name = attr.attr.value
        if name in ("shape", "dtype", "device", "layout"):
            return Kind.OTHER  # whatever the object, these are never tensors
        if self.torch_name(attr) is not None:
            return Kind.UNKNOWN  # torch.float32, torch.pi, torch.nn...: not a tensor we track
        if isinstance(attr.value, cst.Name) and attr.value.value == "self":
            cls = self.enclosing_class(attr)
            if cls is not None:
                values = self.class_attrs(cls).get(name)
                if values:
                    return join(v if isinstance(v, Kind) else self.kind(v) for v in values)
            return Kind.UNKNOWN
        base = self.kind(attr.value)
        if base in TENSORISH:
            if name in _TENSOR_ATTRS:
                return Kind.TENSOR
            if name in _SCALAR_ATTRS:
                return Kind.SCALAR
            if name in ("shape", "dtype", "device", "layout"):
                return Kind.OTHER
        return Kind.PENDING if base is Kind.PENDING else Kind.UNKNOWN

    def class_attrs(self, cls: cst.ClassDef) -> dict:
        """``self.<attr>`` -> values assigned to it anywhere in the class (Kinds for registrations)."""
        found = self._class_attrs.get(id(cls))
        if found is not None:
            return found
        found = {}
        for node in m.findall(cls, m.Assign() | m.AnnAssign()):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            for t in targets:
                if m.matches(t, m.Attribute(value=m.Name("self"))) and node.value is not None:
                    found.setdefault(t.attr.value, []).append(node.value)
        for call in m.findall(cls, m.Call(func=m.Attribute(value=m.Name("self")))):
            method = call.func.attr.value
            if method in ("register_buffer", "register_parameter") and len(call.args) >= 2:
                first = call.args[0].value
                if isinstance(first, cst.SimpleString):
                    kind = Kind.PARAMETER if method == "register_parameter" else Kind.TENSOR
                    found.setdefault(first.evaluated_value, []).append(kind)
        self._class_attrs[id(cls)] = found
        return found

    def _name_kind(self, name: cst.Name) -> Kind:
        owner = self.owner(name)
        flow = self.flow(owner)
        key = name.value
        bindings = flow.bindings.get(key)
        if (not bindings or key in flow.declared) and not isinstance(owner, cst.Module):
            flow = self.flow(self.module)
            bindings = flow.bindings.get(key)
            at = None  # a global seen from a function: any of its bindings may reach
        else:
            at = self.statement_of(name)
        if not bindings:
            return Kind.UNKNOWN
        reaching = self.reaching(flow, key, at) if at is not None else bindings
        return join(self._binding_kind(b) for b in reaching) if reaching else Kind.UNKNOWN

    def reaching(self, flow: Flow, key: str, stmt: cst.CSTNode) -> list:
        """Bindings of ``key`` that may reach ``stmt``.

        The last plain binding before it whose block holds ``stmt`` hides every binding
        before it; the ones after that (in branches, or in-place updates) all count, and so
        does any later binding inside a loop around ``stmt``. Branch conditions, early
        returns and exceptions are not modelled, which only ever adds bindings.
        """
        start, end = self.range(stmt)
        bindings = flow.bindings.get(key, [])
        before = [b for b in bindings if b.end <= start]
        inside = [b for b in bindings if b.start >= start and b.end <= end]
        loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le]
        later = [b for b in bindings if b.start >= end and any(b.end <= le for _, le in loops)]
        if loops:
            later += inside  # the statement's own binding reaches its next iteration
        use_blocks = {id(a) for a in self.ancestors(stmt) if isinstance(a, _BLOCKS)}
        for i in range(len(before) - 1, -1, -1):
            b = before[i]
            if b.form != "aug" and id(self._block_of(b.stmt)) in use_blocks:
                before = before[i:]
                break
        return before + later

    def _block_of(self, node: cst.CSTNode):
        for anc in self.ancestors(node):
            if isinstance(anc, _BLOCKS):
                return anc
        return None

    def _binding_kind(self, b: Binding) -> Kind:
        if b.form == "param":
            return self._param_kind(b.stmt)
        if b.form == "def":
            return Kind.OTHER
        if b.form == "ann":
            annotated = self.annotation_kind(b.stmt.annotation.annotation)
            if annotated is not Kind.UNKNOWN:
                return annotated
            return self.kind(b.stmt.value) if b.stmt.value is not None else Kind.PENDING
        if b.form == "for":
            if m.matches(b.value, m.Call(func=m.Name("range"))):
                return Kind.SCALAR
            return Kind.TENSOR if self.kind(b.value) in TENSORISH else Kind.UNKNOWN
        if b.form == "aug":
            value = self.kind(b.value)
            return Kind.TENSOR if value in TENSORISH else Kind.PENDING
        if b.form == "assign" and b.value is not None:
            return self.kind(b.value)
        return Kind.UNKNOWN

    def annotation_kind(self, ann: cst.BaseExpression) -> Kind:
        if isinstance(ann, cst.Subscript) and target_key(ann.value) in ("Optional", "typing.Optional"):
            ann = ann.slice[0].slice.value
        if isinstance(ann, cst.BinaryOperation) and m.matches(ann.right, m.Name("None")):
            ann = ann.left  # Tensor | None
        names = self.qualified_names(ann)
        if names & {"torch.Tensor", "torch._tensor.Tensor"}:
            return Kind.TENSOR
        if names & {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}:
            return Kind.PARAMETER
        if names & {"builtins.int", "builtins.float", "builtins.bool"}:
            return Kind.SCALAR
        if names & {"builtins.str", "builtins.list", "builtins.dict", "builtins.tuple",
                    "builtins.set", "typing.List", "typing.Dict", "typing.Tuple", "numpy.ndarray"}:
            return Kind.OTHER
        if isinstance(ann, cst.Subscript) and target_key(ann.value) in ("list", "dict", "tuple", "set"):
            return Kind.OTHER
        return Kind.UNKNOWN

    def _param_kind(self, param: cst.Param) -> Kind:
        if param.annotation is not None:
            annotated = self.annotation_kind(param.annotation.annotation)
            if annotated is not Kind.UNKNOWN:
                return annotated
        if param.default is not None and not m.matches(param.default, m.Name("None")):
            return self.kind(param.default)
        func = self.owner(param)
        if isinstance(func, cst.FunctionDef) and func.name.value == "forward" and self._used_as_tensor(func, param.name.value):
            return Kind.TENSOR
        return Kind.UNKNOWN

    def _used_as_tensor(self, func: cst.FunctionDef, name: str) -> bool:
        """A forward() argument passed to torch or to a module, or used via a tensor method."""
        for call in m.findall(func.body, m.Call()):
            if any(m.matches(a.value, m.Name(name)) for a in call.args):
                if self.torch_name(call.func) is not None or self.kind(call.func) is Kind.MODULE:
                    return True
            if m.matches(call.func, m.Attribute(value=m.Name(name))):
                method = call.func.attr.value
                if method in torch_api.TENSOR_METHODS and method not in _CONTAINER_METHODS:
                    return True
        return False

    def fresh_name(self, wanted: str) -> str:
        """``wanted``, or ``wanted2``, ``wanted3``...: a name used nowhere in the module."""
        if self._names is None:
            self._names = {n.value for n in m.findall(self.module, m.Name())}
        name, n = wanted, 1
        while name in self._names:
            n += 1
            name = f"{wanted}{n}"
        self._names.add(name)
        return name

    # --------------------------------------------------------------- verdict
    def assess(
        self,
        node: cst.CSTNode,
        target: cst.BaseExpression,
        *,
        operands: Sequence[cst.BaseExpression] = (),
        creates_binding: bool = True,
        dtype_neutral: bool = False,
        require_known: bool = False,
        known_tensor: bool = False,
    ) -> Verdict:
        """The one decision procedure for "rewrite the in-place op at ``node`` on ``target``".

        ``operands``: the other inputs of the op (for dtype promotion); ``creates_binding``: the
        fix writes ``target = ...`` where the original did not bind it; ``require_known``: an
        unknown type gets no fix at all (for fixes that would crash on a non-tensor);
        ``known_tensor``: the op itself shows the target is a tensor (a torch function's input).
        """
        kind = self.kind(target)
        if known_tensor and kind is Kind.UNKNOWN:
            kind = Kind.TENSOR
        if kind in (Kind.SCALAR, Kind.OTHER, Kind.MODULE):
            return Verdict(None)
        intended = self.intended_reason(node, target)
        if intended:
            return Verdict(Status.SKIPPED, intended)
        if kind is Kind.PARAMETER:
            return Verdict(Status.MANUAL, "parameter")
        key = target_key(target)
        if key is None:
            return Verdict(Status.MANUAL, "side-effect-target" if has_call(target) else "unsupported-target")
        if creates_binding:
            problem = self.rebinding_problem(target)
            if problem:
                return Verdict(Status.MANUAL, problem)
        if self.shared_name(target):
            return Verdict(Status.UNSAFE, "shared-name")
        alias = self.alias_report(target, self.statement_of(node))
        if alias.reason == "view-alias" and kind is Kind.UNKNOWN:
            return Verdict(Status.MANUAL, "unknown-type")  # `a = b[0]` may not be a view at all
        if alias.reason in ("view-alias", "mutation-as-output"):
            return Verdict(Status.MANUAL, alias.reason)
        if kind is Kind.UNKNOWN and require_known:
            return Verdict(Status.MANUAL, "unknown-type")
        if alias.reason:
            return Verdict(Status.UNSAFE, alias.reason, alias.also_rebind)
        if kind is Kind.UNKNOWN:
            return Verdict(Status.UNSAFE, "unknown-type")
        if not dtype_neutral and self.may_promote(key, operands):
            return Verdict(Status.UNSAFE, "dtype-promotion")
        return Verdict(Status.SAFE)

    # ------------------------------------------------------------- grad mode
    def intended_reason(self, node: cst.CSTNode, target: Optional[cst.CSTNode]) -> Optional[str]:
        """Why an in-place op at ``node`` on ``target`` is meant to be in place, if it is."""
        if target is not None and self._through_data_or_grad(target):
            return "data-or-grad"
        return self._grad_context_reason(node) or (
            "buffer" if target is not None and self._is_buffer(target) else None
        )

    def _is_buffer(self, target: cst.CSTNode) -> bool:
        """``self.running_mean`` where the class registers it with ``register_buffer``."""
        while isinstance(target, cst.Subscript):
            target = target.value
        if not m.matches(target, m.Attribute(value=m.Name("self"))):
            return False
        cls = self.enclosing_class(target)
        return cls is not None and target.attr.value in self.class_buffers(cls)

    def class_buffers(self, cls: cst.ClassDef) -> set:
        key = ("buffers", id(cls))
        if key not in self._class_attrs:
            self._class_attrs[key] = {
                call.args[0].value.evaluated_value
                for call in m.findall(cls, m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name("register_buffer"))))
                if call.args and isinstance(call.args[0].value, cst.SimpleString)
            }
        return self._class_attrs[key]

    def calls_in(self, scope: cst.CSTNode) -> dict:
        """Callee key -> the calls in ``scope`` (a class, function or module), found once."""
        key = ("calls", id(scope))
        if key not in self._class_attrs:
            found: dict = {}
            for call in m.findall(scope, m.Call()):
                callee = target_key(call.func)
                if callee is not None:
                    found.setdefault(callee, []).append(call)
            self._class_attrs[key] = found
        return self._class_attrs[key]

    def _grad_context_reason(self, node: cst.CSTNode) -> Optional[str]:
        for anc in self.ancestors(node):
            if isinstance(anc, cst.With):
                state = self._with_grad_state(anc)
                if state is not None:
                    return None if state else "no-grad"
            elif isinstance(anc, cst.FunctionDef):
                for dec in anc.decorators:
                    expr = dec.decorator
                    callee = expr.func if isinstance(expr, cst.Call) else expr
                    name = self.torch_name(callee)
                    if name in _GRAD_OFF_CONTEXTS or (
                        name in _GRAD_SET and isinstance(expr, cst.Call) and self._false_arg(expr)
                    ):
                        return "no-grad"
                cls = self.enclosing_class(anc)
                if cls is not None and self._is_optimizer(cls):
                    return "optimizer"
                return None
        return None

    def _through_data_or_grad(self, target: cst.CSTNode) -> bool:
        node = target
        while isinstance(node, (cst.Attribute, cst.Subscript, cst.Call)):
            if isinstance(node, cst.Attribute) and node.attr.value in ("data", "grad"):
                return True
            node = node.func if isinstance(node, cst.Call) else node.value
        return False

    @staticmethod
    def _false_arg(call: cst.Call) -> bool:
        return bool(call.args) and m.matches(call.args[0].value, m.Name("False"))

    def _with_grad_state(self, node: cst.With) -> Optional[bool]:
        """False if the with-statement turns grad off, True if it turns it on, else None."""
        for item in node.items:
            expr = item.item
            callee = expr.func if isinstance(expr, cst.Call) else expr
            name = self.torch_name(callee)
            if name in _GRAD_OFF_CONTEXTS:
                if name.endswith("inference_mode") and isinstance(expr, cst.Call) and self._false_arg(expr):
                    return True
                return False
            if name in _GRAD_SET and isinstance(expr, cst.Call) and expr.args:
                if self._false_arg(expr):
                    return False
                if m.matches(expr.args[0].value, m.Name("True")):
                    return True
            if name in _GRAD_ON_CONTEXTS:
                return True
        return None

    def _is_optimizer(self, cls: cst.ClassDef) -> bool:
        for base in cls.bases:
            name = self.torch_name(base.value) or ""
            if name.startswith("torch.optim."):
                return True
        return False

    # ----------------------------------------------------------------- scope
    def shared_name(self, target: cst.CSTNode) -> bool:
        """A name declared ``global``/``nonlocal`` here: others may hold its tensor."""
        if not isinstance(target, cst.Name):
            return False
        owner = self.owner(target)
        return not isinstance(owner, cst.Module) and target.value in self.flow(owner).declared

    def rebinding_problem(self, target: cst.CSTNode) -> Optional[str]:
        """Whether writing ``key = ...`` here would bind a name that is not already local."""
        if not isinstance(target, cst.Name) or self.shared_name(target):
            return None  # attributes are stored through their object; declared names stay shared
        if isinstance(self.owner(target), cst.Module):
            return None
        scope = self._scopes.get(target)
        if isinstance(scope, FunctionScope):
            if not any(a.scope is scope for a in scope.assignments[target.value]):
                return "non-local-name"
        return None

    # --------------------------------------------------------------- aliases
    def alias_report(self, target: cst.CSTNode, stmt: cst.CSTNode) -> AliasReport:
        """Would rebinding ``target`` at ``stmt`` hide the mutation from another name?"""
        key = target_key(target)
        owner = self.owner(stmt)
        flow = self.flow(owner)
        start, end = self.range(stmt)

        if "." not in key and key in flow.params and isinstance(owner, cst.FunctionDef):
            rebound = [b for b in flow.bindings.get(key, []) if b.form != "param" and b.end <= start]
            if not rebound:
                return AliasReport("param-mutation" if flow.returns_value else "mutation-as-output")

        identity, views = self.aliases(flow, key, start)
        used_later = lambda k: self.used_after(flow, k, (start, end))  # noqa: E731
        if any(used_later(v) for v in views):
            return AliasReport("view-alias")
        later_identity = tuple(sorted(k for k in identity if used_later(k)))
        if later_identity:
            return AliasReport("alias", later_identity)
        return AliasReport(None)

    def aliases(self, flow: Flow, key: str, at: Pos) -> tuple:
        """Keys bound to the same tensor as ``key`` at ``at`` (identity), and views of it."""
        identity, views = set(), set()

        def last_binding(k: str, before: Pos) -> Optional[Binding]:
            earlier = [b for b in flow.bindings.get(k, []) if b.end <= before]
            return earlier[-1] if earlier else None

        # What ``key`` itself was bound from.
        b = last_binding(key, at)
        if b is not None and b.form == "assign":
            identity.update(b.sources)
            source, how = self.alias_source(b.value)
            if source is not None:
                (identity if how == "identity" else views).add(source)
        # Other keys bound from ``key`` (and not rebound since).
        for other, bindings in flow.bindings.items():
            if other == key:
                continue
            ob = last_binding(other, at)
            if ob is None or ob.form != "assign":
                continue
            source, how = self.alias_source(ob.value)
            if source == key:
                since = [x for x in flow.bindings.get(key, []) if ob.end <= x.start and x.end <= at]
                if not since:
                    (identity if how == "identity" else views).add(other)
        identity.discard(key)
        views.discard(key)
        return identity, views

    def alias_source(self, value: Optional[cst.BaseExpression]) -> tuple:
        """(key, "identity" | "view") when ``value`` is ``key`` itself or shares its storage."""
        if value is None:
            return None, None
        key = target_key(value)
        if key is not None:
            return key, "identity"
        if isinstance(value, cst.Subscript):
            base = target_key(subscript_base(value))
            return (base, "view") if base else (None, None)
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Attribute):
                recv = target_key(func.value)
                method = func.attr.value
                if recv is not None and method in torch_api.INPLACE_METHODS:
                    return recv, "identity"
                if recv is not None and method in VIEW_METHODS:
                    return recv, "view"
            name = self.torch_name(func)
            if name in torch_api.INPLACE_FUNCTIONS and value.args:
                first = target_key(value.args[0].value)
                if first is not None:
                    return first, "identity"
        return None, None

    def used_after(self, flow: Flow, key: str, at: tuple) -> bool:
        start, end = at
        loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le]
        for pos, _ in flow.loads.get(key, []):
            if pos >= end or any(ls <= pos <= le for ls, le in loops):
                return True
        # Attribute chains: a load of "b.sum" is a use of "b".
        prefix = key + "."
        return any(k.startswith(prefix) and self.used_after(flow, k, at) for k in flow.loads)

    # ----------------------------------------------------------------- dtype
    def may_promote(self, target_key_: Optional[str], operands: Iterable[cst.BaseExpression]) -> bool:
        """Whether ``x = x op y`` could take another dtype than ``x op= y`` keeps."""
        if self.assume_same_dtype:
            return False
        for operand in operands:
            if target_key_ is not None and target_key(operand) == target_key_:
                continue
            if self.kind(operand) is not Kind.SCALAR:
                return True
        return False

