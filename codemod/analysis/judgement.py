"""The judgement every pass shares: tensor or not, grad mode, aliases, scope, dtype.

One :class:`Judge` is built per module from CPython's ``ast`` tree (about 10x cheaper to get
than libcst's, which is only parsed for files that get a fix); the passes ask it questions
about nodes of that tree. All answers are conservative: what cannot be shown is ``UNKNOWN``,
and the passes turn that into an unsafe fix or no fix, never a silent guess.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import enum
from typing import Iterable, Optional, Sequence

from codemod import torch_api
from codemod.findings import Status
from codemod.analysis.source import Source, source_order


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
_NON_TENSOR_PREFIXES = ("numpy.", "pandas.", "math.", "random.", "collections.", "itertools.")
# torch functions whose result is a fresh tensor: nothing saved it, no other name holds it.
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
_GRAD_OFF_CONTEXTS = {
    "torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
    "torch.inference_mode", "torch.autograd.grad_mode.inference_mode",
}
_GRAD_SET = {"torch.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
_GRAD_ON_CONTEXTS = {"torch.enable_grad", "torch.autograd.grad_mode.enable_grad"}

Pos = tuple  # (line, column)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)
_BODIES = ("body", "orelse", "finalbody")  # the statement lists (blocks) of a node


def target_key(node: ast.AST) -> Optional[str]:
    """``x`` -> "x", ``self.h.w`` -> "self.h.w"; anything else -> None."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = target_key(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def subscript_base(node: ast.AST) -> ast.AST:
    """``d[0][1:]`` -> ``d``."""
    while isinstance(node, ast.Subscript):
        node = node.value
    return node


def has_call(node: ast.AST) -> bool:
    """Whether evaluating ``node`` may call something (so it must not be evaluated twice)."""
    return any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(node))


def is_const(node: Optional[ast.AST], value) -> bool:
    """``node`` is the literal ``True``/``False``/``None``."""
    return isinstance(node, ast.Constant) and node.value is value


def call_args(call: ast.Call) -> list:
    """Every argument expression, positional then keyword (``*a``/``**k`` included)."""
    return [*call.args, *(k.value for k in call.keywords)]


def first_arg(call: ast.Call) -> Optional[ast.AST]:
    """The first argument as written, positional or keyword; None without arguments."""
    if call.args:
        return call.args[0]
    return call.keywords[0].value if call.keywords else None


def positional(call: ast.Call) -> list:
    """The plain positional arguments, up to the first ``*args``."""
    out = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            break
        out.append(a)
    return out


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
    stmt: ast.AST
    value: Optional[ast.AST]  # the assigned expression, when it is one whole value
    form: str  # "assign", "aug", "ann", "for", "param", "def", "other"
    sources: Sequence[str] = ()  # other keys bound by the same statement (a = b = value)


@dataclasses.dataclass
class Flow:
    """What one function body does with names, gathered in one walk of it."""

    owner: ast.AST  # FunctionDef or Module
    bindings: dict = dataclasses.field(default_factory=dict)  # key -> [Binding]
    loads: dict = dataclasses.field(default_factory=dict)  # key -> [(Pos, node)]
    loops: list = dataclasses.field(default_factory=list)  # [(start, end)]
    declared: set = dataclasses.field(default_factory=set)  # global / nonlocal names
    params: set = dataclasses.field(default_factory=set)
    imports: dict = dataclasses.field(default_factory=dict)  # name -> {qualified name}
    returns_value: bool = False


def _span(node: ast.AST) -> tuple:
    return (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)


class _FlowCollector:
    """Walks one function body. Nested functions and classes are other scopes: their bindings
    are not this body's, but their loads count as uses (closures read names late)."""

    def __init__(self, flow: Flow, kids: dict, nested: bool = True) -> None:
        self.flow = flow
        self.kids = kids
        self.depth = 0  # how many nested scopes deep the walk is
        self.nested = nested  # False: bindings only, nested scopes are not entered

    def _bind_key(self, key: str, stmt: ast.AST, value, form: str, group=(), at: ast.AST = None) -> None:
        if self.depth:
            return
        start, end = _span(at or stmt)
        binding = Binding(key, start, end, stmt, value, form, tuple(k for k in group if k != key))
        self.flow.bindings.setdefault(key, []).append(binding)

    def _bind(self, target: ast.AST, stmt: ast.AST, value, form: str, group=(), at: ast.AST = None) -> None:
        key = target_key(target)
        if key is None:
            if isinstance(target, (ast.Tuple, ast.List)):
                for el in target.elts:
                    self._bind(el, stmt, None, "other", at=at)
            elif isinstance(target, ast.Starred):
                self._bind(target.value, stmt, None, "other", at=at)
            return
        self._bind_key(key, stmt, value, form, group, at)

    def run(self, owner: ast.AST) -> None:
        if isinstance(owner, ast.Module):
            self.body(owner.body)
            return
        self.arguments(owner.args)
        self.body(owner.body)

    def body(self, stmts) -> None:
        for s in stmts:
            self.visit(s)

    def arguments(self, args: ast.arguments) -> None:
        for d in (*args.defaults, *(d for d in args.kw_defaults if d is not None)):
            self.visit(d)
        for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
            if a is None:
                continue
            if a.annotation is not None:
                self.visit(a.annotation)
            if not self.depth:
                self.flow.params.add(a.arg)
            self._bind_key(a.arg, a, None, "param")

    def visit(self, node: ast.AST) -> None:
        cls = node.__class__
        method = _VISITS.get(cls, _MISSING)
        if method is _MISSING:
            method = _VISITS[cls] = getattr(_FlowCollector, "visit_" + cls.__name__, None)
        if method is None or method(self, node):
            for child in self.kids[node]:
                self.visit(child)

    # Statements that bind.
    def visit_Assign(self, node: ast.Assign) -> bool:
        keys = [k for k in (target_key(t) for t in node.targets) if k]
        for t in node.targets:
            pairs = _unpacked(t, node.value)
            if pairs:
                for target, value in pairs:
                    self._bind(target, node, value, "assign")
            else:
                self._bind(t, node, node.value, "assign", keys)
        return True

    def visit_AnnAssign(self, node: ast.AnnAssign) -> bool:
        self._bind(node.target, node, node, "ann")
        return True

    def visit_AugAssign(self, node: ast.AugAssign) -> bool:
        self._bind(node.target, node, node.value, "aug")
        return True

    def visit_For(self, node) -> bool:
        self._bind(node.target, node, node.iter, "for")
        if not self.depth:
            self.flow.loops.append(_span(node))
        return True

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> bool:
        if not self.depth:
            self.flow.loops.append(_span(node))
        return True

    def visit_withitem(self, node: ast.withitem) -> bool:
        if node.optional_vars is not None:
            self._bind(node.optional_vars, node.optional_vars, None, "other")
        return True

    def visit_NamedExpr(self, node: ast.NamedExpr) -> bool:
        self._bind(node.target, node, node.value, "assign")
        return True

    def visit_comprehension(self, node: ast.comprehension) -> bool:
        self._bind(node.target, node.target, None, "other")
        return True

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> bool:
        if node.name:
            self._bind_key(node.name, node, None, "other")
        return True

    def visit_FunctionDef(self, node) -> bool:
        self._bind_key(node.name, node, None, "def")
        if not self.nested:
            return False
        self.depth += 1
        for dec in node.decorator_list:
            self.visit(dec)
        self.arguments(node.args)
        self.body(node.body)  # closures: loads inside count as uses
        self.depth -= 1
        return False

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> bool:
        self._bind_key(node.name, node, None, "def")
        if not self.nested:
            return False
        self.depth += 1
        for child in self.kids[node]:
            self.visit(child)
        self.depth -= 1
        return False

    def visit_Lambda(self, node: ast.Lambda) -> bool:
        if not self.nested:
            return False
        self.depth += 1
        self.arguments(node.args)
        self.visit(node.body)
        self.depth -= 1
        return False

    def visit_Import(self, node: ast.Import) -> bool:
        for alias in node.names:
            key = alias.asname or alias.name.split(".")[0]
            self._bind_key(key, node, None, "def")
            if not self.depth:
                self.flow.imports.setdefault(key, set()).add(alias.name if alias.asname else key)
        return False

    def visit_ImportFrom(self, node: ast.ImportFrom) -> bool:
        for alias in node.names:
            if alias.name == "*":
                continue
            key = alias.asname or alias.name
            self._bind_key(key, node, None, "def")
            if not self.depth and not node.level and node.module:
                self.flow.imports.setdefault(key, set()).add(f"{node.module}.{alias.name}")
        return False

    def visit_Global(self, node: ast.Global) -> bool:
        if not self.depth:
            self.flow.declared.update(node.names)
        return False

    visit_Nonlocal = visit_Global

    def visit_Return(self, node: ast.Return) -> bool:
        if not self.depth and node.value is not None and not is_const(node.value, None):
            self.flow.returns_value = True
        return True

    def visit_Yield(self, node) -> bool:
        if not self.depth:
            self.flow.returns_value = True
        return True

    visit_YieldFrom = visit_Yield

    # Loads.
    def visit_Name(self, node: ast.Name) -> bool:
        if isinstance(node.ctx, ast.Load):
            self.flow.loads.setdefault(node.id, []).append(((node.lineno, node.col_offset), node))
        return False

    def visit_Attribute(self, node: ast.Attribute) -> bool:
        if isinstance(node.ctx, ast.Load):
            key = target_key(node)
            if key is not None:
                self.flow.loads.setdefault(key, []).append(((node.lineno, node.col_offset), node))
        return True


_VISITS: dict = {}
_MISSING = object()
def _unpacked(target: ast.AST, value: ast.AST) -> list:
    """``a, b = 1.0, x`` -> [(a, 1.0), (b, x)]; [] unless both sides are plain, equal tuples."""
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))):
        return []
    if len(target.elts) != len(value.elts):
        return []
    if any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return []
    return list(zip(target.elts, value.elts))


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

    def __init__(self, source: Source, assume_same_dtype: bool = False) -> None:
        self.source = source
        self.module = source.tree
        self.assume_same_dtype = assume_same_dtype
        self._parents = source.parents
        self._flows: dict = {}
        self._class_attrs: dict = {}
        self._kind_cache: dict = {}
        self._pending: set = set()
        self._names: Optional[set] = None
        self._module_imports: Optional[dict] = None
        self._resolved: dict = {}
        self._owners: dict = {}  # node -> the owner of what it holds (see owner())
        self._blocks: dict = {}
        self._torch_names: dict = {}
        self._hazards = None

    @property
    def hazards(self):
        """The hazard analysis of this module (see ``codemod.hazard``)."""
        if self._hazards is None:
            from codemod.analysis.hazard import Hazards

            self._hazards = Hazards(self)
        return self._hazards

    @property
    def picked_fresh_names(self) -> bool:
        """Whether a fix asked for a name unused in the whole file (see fresh_name)."""
        return self._names is not None

    def close(self) -> None:
        """Drop the hazard analysis (it points back here): the module's trees can then go as
        soon as the findings are made, without waiting for the cycle collector."""
        self._hazards = None

    # ----------------------------------------------------------------- basics
    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self._parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterable[ast.AST]:
        node = self._parents.get(node)
        while node is not None:
            yield node
            node = self._parents.get(node)

    @staticmethod
    def range(node: ast.AST) -> tuple:
        """((line, column), (end line, end column)); columns in UTF-8 bytes, as ast counts."""
        return _span(node)

    def code(self, node: ast.AST) -> str:
        """Source text of a node, on one line, for messages."""
        return self.source.snippet(node)

    def qualified_names(self, node: ast.AST) -> set:
        """What a name or attribute chain refers to through imports (``nn.ReLU`` ->
        {"torch.nn.ReLU"}), ``builtins.len`` for an unshadowed builtin; else empty."""
        key = target_key(node)
        if key is None:
            return set()
        head, _, rest = key.partition(".")
        found = self._resolve(head, node)
        return {f"{q}.{rest}" if rest else q for q in found}

    def _resolve(self, name: str, node: ast.AST) -> set:
        owner = self.owner(node)
        key = (name, owner)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self._resolve_in(name, owner)
        return found

    def _resolve_in(self, name: str, owner: ast.AST) -> set:
        if isinstance(owner, FUNCTIONS):
            flow = self.flow(owner)
            if name in flow.bindings and name not in flow.declared:
                return flow.imports.get(name, set())
            return self._resolve(name, owner)  # the enclosing function's, or the module's
        imports, bound = self.module_names()
        if name in imports:
            return imports[name]
        if name not in bound and name in _BUILTIN_NAMES:
            return {f"builtins.{name}"}
        return set()

    def module_names(self) -> tuple:
        """(name -> qualified names of module-level imports, other names bound at module level)."""
        if self._module_imports is None:
            imports: dict = {}
            bound: set = set()
            todo = list(self.module.body)
            while todo:
                stmt = todo.pop()
                if isinstance(stmt, ast.Import):
                    for a in stmt.names:
                        key = a.asname or a.name.split(".")[0]
                        imports.setdefault(key, set()).add(a.name if a.asname else key)
                elif isinstance(stmt, ast.ImportFrom):
                    for a in stmt.names:
                        if a.name != "*" and not stmt.level and stmt.module:
                            imports.setdefault(a.asname or a.name, set()).add(f"{stmt.module}.{a.name}")
                elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    bound.add(stmt.name)
                elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                    for t in getattr(stmt, "targets", None) or [stmt.target]:
                        bound.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
                else:
                    for field in (*_BODIES, "handlers"):
                        todo.extend(getattr(stmt, field, ()))
            self._module_imports = (imports, bound)
        return self._module_imports

    def torch_name(self, node: ast.AST) -> Optional[str]:
        """The qualified name of a name or attribute ``node`` when it resolves into torch
        (remembered: every pass asks it of every call)."""
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return None
        known = self._torch_names.get(node, _MISSING)
        if known is _MISSING:
            known = self._torch_names[node] = next(
                (n for n in self.qualified_names(node) if n == "torch" or n.startswith("torch.")), None
            )
        return known

    def walk(self, node: ast.AST):
        """``node`` and everything below it (``ast.walk``, quicker on the indexed tree)."""
        kids = self.source.children
        todo = [node]
        while todo:
            node = todo.pop()
            yield node
            todo.extend(kids[node])

    def statement_of(self, node: ast.AST) -> ast.AST:
        """The statement (or compound statement) that contains ``node``."""
        cur = node
        while cur is not None and not isinstance(cur, ast.stmt):
            cur = self._parents.get(cur)
        return cur or node

    def owner(self, node: ast.AST) -> ast.AST:
        """The function whose body holds ``node``, or the module (remembered along the way up:
        every name lookup asks)."""
        owners, parents = self._owners, self._parents
        path = []
        cur = parents.get(node)
        found = self.module
        while cur is not None:
            if isinstance(cur, OWNERS):
                found = cur
                break
            known = owners.get(cur)
            if known is not None:
                found = known
                break
            path.append(cur)
            cur = parents.get(cur)
        for p in path:
            owners[p] = found
        return found

    def enclosing_class(self, node: ast.AST) -> Optional[ast.ClassDef]:
        for anc in self.ancestors(node):
            if isinstance(anc, ast.ClassDef):
                return anc
        return None

    def flow(self, owner: ast.AST, nested: bool = True) -> Flow:
        """What ``owner``'s body does with names; with ``nested=False`` only its own bindings
        (loads inside nested functions are not gathered: much cheaper for a whole module)."""
        flow = self._flows.get((owner, nested))
        if flow is None and not nested:
            flow = self._flows.get((owner, True))
        if flow is None:
            flow = Flow(owner)
            _FlowCollector(flow, self.source.children, nested).run(owner)
            for bindings in flow.bindings.values():
                bindings.sort(key=lambda b: b.start)
            self._flows[(owner, nested)] = flow
        return flow

    def blocks_around(self, node: ast.AST) -> set:
        """The statement lists (blocks) that hold ``node`` at any depth."""
        out = self._blocks.get(node)
        if out is None:
            out, child = set(), node
            for anc in self.ancestors(node):
                block = _block_field(anc, child)
                if block is not None:
                    out.add(block)
                child = anc
            self._blocks[node] = out
        return out

    def block_of(self, node: ast.AST):
        key = ("of", node)
        if key not in self._blocks:
            child, found = node, None
            for anc in self.ancestors(node):
                found = _block_field(anc, child)
                if found is not None:
                    break
                child = anc
            self._blocks[key] = found
        return self._blocks[key]

    # ------------------------------------------------------------ tensor or not
    def kind(self, expr: ast.AST) -> Kind:
        cached = self._kind_cache.get(expr)
        if cached is not None:
            return cached
        if expr in self._pending:
            return Kind.PENDING
        self._pending.add(expr)
        try:
            result = self._kind(expr)
        finally:
            self._pending.discard(expr)
        if not self._pending:  # a whole answer, not one that assumed a pending question
            if result is Kind.PENDING:
                result = Kind.UNKNOWN
            self._kind_cache[expr] = result
        return result

    def _kind(self, expr: ast.AST) -> Kind:
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
            return self._call_kind(expr)
        if isinstance(expr, ast.Subscript):
            if isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape":
                return Kind.OTHER  # x.shape[0], x.shape[1:]: sizes
            base = self.kind(expr.value)
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

    def _call_kind(self, call: ast.Call) -> Kind:
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
        if self._non_tensor_library(func):
            return Kind.OTHER  # np.asarray(x).reshape(...), pd.read_csv(p).values...
        callee = func.value if isinstance(func, ast.Subscript) else func  # OrderedDict[str, int]()
        for qname in self.qualified_names(callee):
            if qname.startswith("builtins."):
                short = qname[len("builtins."):]
                if short in _SCALAR_BUILTINS:
                    return Kind.SCALAR
                if short in _OTHER_BUILTINS or short.split(".")[0] in _BUILTIN_TYPES:
                    return Kind.OTHER
            if qname.startswith(_NON_TENSOR_PREFIXES):
                return Kind.OTHER
        if isinstance(func, ast.Attribute):
            receiver = self.kind(func.value)
            method = func.attr
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

    def _non_tensor_library(self, func: ast.AST) -> bool:
        """A method of what a call into a non-tensor library returned (``np.asarray(x).reshape``):
        numpy, pandas, math... values stay theirs along the chain."""
        expr = func.value if isinstance(func, ast.Attribute) else None
        while isinstance(expr, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(expr, ast.Call):
                if any(q.startswith(_NON_TENSOR_PREFIXES) for q in self.qualified_names(expr.func)):
                    return True
                expr = expr.func
            else:
                expr = expr.value
        return False

    def is_factory(self, call: ast.Call) -> bool:
        """A torch call that makes a fresh tensor (``torch.zeros(n)``, ``torch.Tensor(n)``)."""
        name = self.torch_name(call.func) or ""
        short = name.rsplit(".", 1)[-1]
        if not name.startswith("torch."):
            return False
        if short in LEGACY_CONSTRUCTORS:
            return not any(self.kind(a) in TENSORISH for a in call_args(call))
        return short in FACTORIES

    def _attribute_kind(self, attr: ast.Attribute) -> Kind:
        name = attr.attr
        if name in ("shape", "dtype", "device", "layout"):
            return Kind.OTHER  # whatever the object, these are never tensors
        if self.torch_name(attr) is not None:
            return Kind.UNKNOWN  # torch.float32, torch.pi, torch.nn...: not a tensor we track
        if isinstance(attr.value, ast.Name) and attr.value.id == "self":
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
        return Kind.PENDING if base is Kind.PENDING else Kind.UNKNOWN

    def _class_index(self, cls: ast.ClassDef) -> dict:
        """One walk of a class: ``self.<attr>`` values, buffers, and calls by callee key."""
        found = self._class_attrs.get(cls)
        if found is not None:
            return found
        attrs: dict = {}
        buffers: set = set()
        calls: dict = {}
        for node in self.walk(cls):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                            and node.value is not None:
                        attrs.setdefault(t.attr, []).append(node.value)
            elif isinstance(node, ast.Call):
                callee = target_key(node.func)
                calls.setdefault(callee, []).append(node)
                if callee in ("self.register_buffer", "self.register_parameter"):
                    first = first_arg(node)
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        if callee == "self.register_buffer":
                            buffers.add(first.value)
                        if len(call_args(node)) >= 2:
                            kind = Kind.PARAMETER if callee == "self.register_parameter" else Kind.TENSOR
                            attrs.setdefault(first.value, []).append(kind)
        for found_calls in calls.values():
            found_calls.sort(key=source_order)
        found = {"attrs": attrs, "buffers": buffers, "calls": calls}
        self._class_attrs[cls] = found
        return found

    def class_attrs(self, cls: ast.ClassDef) -> dict:
        """``self.<attr>`` -> values assigned to it anywhere in the class (Kinds for registrations)."""
        return self._class_index(cls)["attrs"]

    def class_buffers(self, cls: ast.ClassDef) -> set:
        return self._class_index(cls)["buffers"]

    def calls_in(self, scope: ast.AST) -> dict:
        """Callee key -> the calls in ``scope`` (a class, function or module), found once;
        calls of something without a key (``f()(x)``) under None."""
        if isinstance(scope, ast.ClassDef):
            return self._class_index(scope)["calls"]
        key = ("calls", scope)
        if key not in self._class_attrs:
            found: dict = {}
            for call in self.walk(scope):
                if isinstance(call, ast.Call):
                    found.setdefault(target_key(call.func), []).append(call)  # None: no key
            for calls in found.values():
                calls.sort(key=source_order)
            self._class_attrs[key] = found
        return self._class_attrs[key]

    def _name_kind(self, name: ast.Name) -> Kind:
        owner = self.owner(name)
        flow = self.flow(owner)
        key = name.id
        bindings = flow.bindings.get(key)
        if (not bindings or key in flow.declared) and not isinstance(owner, ast.Module):
            flow = self.flow(self.module, nested=False)
            bindings = flow.bindings.get(key)
            at = None  # a global seen from a function: any of its bindings may reach
        else:
            at = self.statement_of(name)
        if not bindings:
            return Kind.UNKNOWN
        reaching = self.reaching(flow, key, at) if at is not None else bindings
        return join(self._binding_kind(b) for b in reaching) if reaching else Kind.UNKNOWN

    def reaching(self, flow: Flow, key: str, stmt: ast.AST) -> list:
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
        if before:
            use_blocks = self.blocks_around(stmt)
            for i in range(len(before) - 1, -1, -1):
                b = before[i]
                if b.form != "aug" and self.block_of(b.stmt) in use_blocks:
                    before = before[i:]
                    break
        return before + later

    def _binding_kind(self, b: Binding) -> Kind:
        if b.form == "param":
            return self._param_kind(b.stmt)
        if b.form == "def":
            return Kind.OTHER
        if b.form == "ann":
            annotated = self.annotation_kind(b.stmt.annotation)
            if annotated is not Kind.UNKNOWN:
                return annotated
            return self.kind(b.stmt.value) if b.stmt.value is not None else Kind.PENDING
        if b.form == "for":
            value = b.value
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "range":
                return Kind.SCALAR
            return Kind.TENSOR if self.kind(value) in TENSORISH else Kind.UNKNOWN
        if b.form == "aug":
            value = self.kind(b.value)
            return Kind.TENSOR if value in TENSORISH else Kind.PENDING
        if b.form == "assign" and b.value is not None:
            return self.kind(b.value)
        return Kind.UNKNOWN

    def annotation_kind(self, ann: ast.AST) -> Kind:
        if isinstance(ann, ast.Subscript) and target_key(ann.value) in ("Optional", "typing.Optional"):
            ann = ann.slice
        if isinstance(ann, ast.BinOp) and is_const(ann.right, None):
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
        if isinstance(ann, ast.Subscript) and target_key(ann.value) in ("list", "dict", "tuple", "set"):
            return Kind.OTHER
        return Kind.UNKNOWN

    def _param_kind(self, param: ast.arg) -> Kind:
        if param.annotation is not None:
            annotated = self.annotation_kind(param.annotation)
            if annotated is not Kind.UNKNOWN:
                return annotated
        default = self._default_of(param)
        if default is not None and not is_const(default, None):
            return self.kind(default)
        func = self.owner(param)
        if isinstance(func, FUNCTIONS) and func.name == "forward" and self._used_as_tensor(func, param.arg):
            return Kind.TENSOR
        return Kind.UNKNOWN

    def _default_of(self, param: ast.arg) -> Optional[ast.AST]:
        args = self.parent(param)
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

    def _used_as_tensor(self, func: ast.AST, name: str) -> bool:
        """A forward() argument passed to torch or to a module, or used via a tensor method."""
        for calls in self.calls_in(func).values():
            for call in calls:
                if any(isinstance(a, ast.Name) and a.id == name for a in call_args(call)):
                    if self.torch_name(call.func) is not None or self.kind(call.func) is Kind.MODULE:
                        return True
                f = call.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == name:
                    if f.attr in torch_api.TENSOR_METHODS and f.attr not in _CONTAINER_METHODS:
                        return True
        return False

    def fresh_name(self, wanted: str) -> str:
        """``wanted``, or ``wanted2``, ``wanted3``...: a name used nowhere in the module."""
        if self._names is None:
            names = set()
            for n in self.walk(self.module):
                if isinstance(n, ast.Name):
                    names.add(n.id)
                elif isinstance(n, ast.Attribute):
                    names.add(n.attr)
                elif isinstance(n, ast.arg):
                    names.add(n.arg)
                elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(n.name)
                elif isinstance(n, ast.keyword) and n.arg:
                    names.add(n.arg)
                elif isinstance(n, ast.alias):
                    names.update((n.asname or n.name).split("."))
            self._names = names
        name, n = wanted, 1
        while name in self._names:
            n += 1
            name = f"{wanted}{n}"
        self._names.add(name)
        return name

    # --------------------------------------------------------------- verdict
    def assess(
        self,
        node: ast.AST,
        target: ast.AST,
        *,
        operands: Sequence[ast.AST] = (),
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
    def intended_reason(self, node: ast.AST, target: Optional[ast.AST]) -> Optional[str]:
        """Why an in-place op at ``node`` on ``target`` is meant to be in place, if it is."""
        if target is not None and self._through_data_or_grad(target):
            return "data-or-grad"
        return self._grad_context_reason(node) or (
            "buffer" if target is not None and self._is_buffer(target) else None
        )

    def _is_buffer(self, target: ast.AST) -> bool:
        """``self.running_mean`` where the class registers it with ``register_buffer``."""
        target = subscript_base(target)
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            return False
        cls = self.enclosing_class(target)
        return cls is not None and target.attr in self.class_buffers(cls)

    def _grad_context_reason(self, node: ast.AST) -> Optional[str]:
        for anc in self.ancestors(node):
            if isinstance(anc, (ast.With, ast.AsyncWith)):
                state = self._with_grad_state(anc)
                if state is not None:
                    return None if state else "no-grad"
            elif isinstance(anc, FUNCTIONS):
                for expr in anc.decorator_list:
                    callee = expr.func if isinstance(expr, ast.Call) else expr
                    name = self.torch_name(callee)
                    if name in _GRAD_OFF_CONTEXTS or (
                        name in _GRAD_SET and isinstance(expr, ast.Call) and self._false_arg(expr)
                    ):
                        return "no-grad"
                cls = self.enclosing_class(anc)
                if cls is not None and self._is_optimizer(cls):
                    return "optimizer"
                return None
        return None

    @staticmethod
    def _through_data_or_grad(target: ast.AST) -> bool:
        node = target
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(node, ast.Attribute) and node.attr in ("data", "grad"):
                return True
            node = node.func if isinstance(node, ast.Call) else node.value
        return False

    @staticmethod
    def _false_arg(call: ast.Call) -> bool:
        return is_const(first_arg(call), False)

    def _with_grad_state(self, node) -> Optional[bool]:
        """False if the with-statement turns grad off, True if it turns it on, else None."""
        for item in node.items:
            expr = item.context_expr
            callee = expr.func if isinstance(expr, ast.Call) else expr
            name = self.torch_name(callee)
            if name in _GRAD_OFF_CONTEXTS:
                if name.endswith("inference_mode") and isinstance(expr, ast.Call) and self._false_arg(expr):
                    return True
                return False
            if name in _GRAD_SET and isinstance(expr, ast.Call) and first_arg(expr) is not None:
                if self._false_arg(expr):
                    return False
                if is_const(first_arg(expr), True):
                    return True
            if name in _GRAD_ON_CONTEXTS:
                return True
        return None

    def _is_optimizer(self, cls: ast.ClassDef) -> bool:
        return any((self.torch_name(base) or "").startswith("torch.optim.") for base in cls.bases)

    # ----------------------------------------------------------------- scope
    def shared_name(self, target: ast.AST) -> bool:
        """A name declared ``global``/``nonlocal`` here: others may hold its tensor."""
        if not isinstance(target, ast.Name):
            return False
        owner = self.owner(target)
        return not isinstance(owner, ast.Module) and target.id in self.flow(owner).declared

    def rebinding_problem(self, target: ast.AST) -> Optional[str]:
        """Whether writing ``key = ...`` here would bind a name that is not already local."""
        if not isinstance(target, ast.Name) or self.shared_name(target):
            return None  # attributes are stored through their object; declared names stay shared
        for anc in self.ancestors(target):
            if isinstance(anc, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.ClassDef)):
                return None  # another scope than the function's
            if isinstance(anc, OWNERS):
                break
        owner = self.owner(target)
        if isinstance(owner, ast.Module):
            return None
        if target.id not in self.flow(owner).bindings:
            return "non-local-name"
        return None

    # --------------------------------------------------------------- aliases
    def alias_report(self, target: ast.AST, stmt: ast.AST) -> AliasReport:
        """Would rebinding ``target`` at ``stmt`` hide the mutation from another name?"""
        key = target_key(target)
        owner = self.owner(stmt)
        flow = self.flow(owner)
        start, end = self.range(stmt)

        if "." not in key and key in flow.params and isinstance(owner, FUNCTIONS):
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
        for other in flow.bindings:
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

    def alias_source(self, value: Optional[ast.AST]) -> tuple:
        """(key, "identity" | "view") when ``value`` is ``key`` itself or shares its storage."""
        if value is None:
            return None, None
        key = target_key(value)
        if key is not None:
            return key, "identity"
        if isinstance(value, ast.Subscript):
            base = target_key(subscript_base(value))
            return (base, "view") if base else (None, None)
        if isinstance(value, ast.Call):
            func = value.func
            if isinstance(func, ast.Attribute):
                recv = target_key(func.value)
                method = func.attr
                if recv is not None and method in torch_api.INPLACE_METHODS:
                    return recv, "identity"
                if recv is not None and method in VIEW_METHODS:
                    return recv, "view"
            name = self.torch_name(func)
            first = first_arg(value)
            if name in torch_api.INPLACE_FUNCTIONS and first is not None:
                first = target_key(first)
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
    def may_promote(self, target_key_: Optional[str], operands: Iterable[ast.AST]) -> bool:
        """Whether ``x = x op y`` could take another dtype than ``x op= y`` keeps."""
        if self.assume_same_dtype:
            return False
        for operand in operands:
            if target_key_ is not None and target_key(operand) == target_key_:
                continue
            if self.kind(operand) is not Kind.SCALAR:
                return True
        return False


def _block_field(parent: ast.AST, child: ast.AST):
    """(parent, field) when ``child`` is a statement directly in one of ``parent``'s blocks."""
    if not isinstance(child, (ast.stmt, ast.ExceptHandler)):
        return None
    for field in _BODIES:
        stmts = getattr(parent, field, None)
        if isinstance(stmts, list):
            for s in stmts:
                if s is child:
                    return (id(parent), field)
    return None
