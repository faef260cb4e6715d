"""The binder: what one function body (or the module's top level) does with names.

One walk of a body gathers its bindings (in order, with the statement and value of each), its
loads, loops, ``global``/``nonlocal`` declarations, parameters and imports (:class:`Flow`).
:class:`Binder` remembers one flow per body.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    List,
    Literal,
    Optional,
    Sequence,
    Set,
    Tuple,
    Type,
    Union,
)

from codemod.analysis.source import Source
from codemod.analysis.syntax import (
    Function,
    Located,
    Owner,
    Pos,
    Span,
    is_const,
    span,
    target_key,
)

BindingForm = Literal["assign", "aug", "ann", "for", "param", "def", "other"]
Use = Tuple[Pos, Union[ast.Name, ast.Attribute]]  # where a key is loaded, and the loading node


@dataclasses.dataclass
class Binding:
    """One assignment of a key inside a function (or the module's top level)."""

    key: str
    start: Pos
    end: Pos
    stmt: Located  # the statement; the ``arg`` of a parameter; the target of a with or a comprehension
    value: Optional[ast.expr]  # the assigned expression, when it is one whole value
    form: BindingForm
    sources: Sequence[str] = ()  # other keys bound by the same statement (a = b = value)


@dataclasses.dataclass
class Flow:
    """What one function body does with names, gathered in one walk of it."""

    owner: Owner
    bindings: Dict[str, List[Binding]] = dataclasses.field(default_factory=dict)  # key -> [Binding]
    loads: Dict[str, List[Use]] = dataclasses.field(default_factory=dict)  # key -> [(Pos, node)]
    loops: List[Span] = dataclasses.field(default_factory=list)  # [(start, end)]
    declared: Set[str] = dataclasses.field(default_factory=set)  # global / nonlocal names
    params: Set[str] = dataclasses.field(default_factory=set)
    imports: Dict[str, Set[str]] = dataclasses.field(default_factory=dict)  # name -> {qualified name}
    returns_value: bool = False
    hands_on: Optional[bool] = None  # the body hands its namespace on (`locals()`: consumed.name_escapes, when asked)


class _FlowCollector:
    """Walks one function body. Nested functions and classes are other scopes: their bindings
    are not this body's, but their loads count as uses (closures read names late)."""

    def __init__(self, flow: Flow, kids: Dict[ast.AST, List[ast.AST]], nested: bool = True) -> None:
        self.flow = flow
        self.kids = kids
        self.depth = 0  # how many nested scopes deep the walk is
        self.nested = nested  # False: bindings only, nested scopes are not entered
        self.skipped = False  # a nested scope was left unentered (``nested`` False)

    def _bind_key(self, key: str, stmt: Located, value: Optional[ast.expr], form: BindingForm,
                  group: Sequence[str] = (), at: Optional[Located] = None) -> None:
        if self.depth:
            return
        start, end = span(at or stmt)
        binding = Binding(key, start, end, stmt, value, form, tuple(k for k in group if k != key))
        self.flow.bindings.setdefault(key, []).append(binding)

    def _bind(self, target: ast.expr, stmt: Located, value: Optional[ast.expr], form: BindingForm,
              group: Sequence[str] = (), at: Optional[Located] = None) -> None:
        key = target_key(target)
        if key is None:
            if isinstance(target, (ast.Tuple, ast.List)):
                for el in target.elts:
                    self._bind(el, stmt, None, "other", at=at)
            elif isinstance(target, ast.Starred):
                self._bind(target.value, stmt, None, "other", at=at)
            return
        self._bind_key(key, stmt, value, form, group, at)

    def run(self, owner: Owner) -> None:
        if isinstance(owner, ast.Module):
            self.body(owner.body)
            return
        self.arguments(owner.args)
        self.body(owner.body)

    def body(self, stmts: Iterable[ast.stmt]) -> None:
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
        try:
            method = _VISITS[cls]
        except KeyError:
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
        self._bind(node.target, node, node.value, "ann")
        return True

    def visit_AugAssign(self, node: ast.AugAssign) -> bool:
        self._bind(node.target, node, node.value, "aug")
        return True

    def visit_For(self, node: Union[ast.For, ast.AsyncFor]) -> bool:
        self._bind(node.target, node, node.iter, "for")
        if not self.depth:
            self.flow.loops.append(span(node))
        return True

    visit_AsyncFor = visit_For

    def visit_While(self, node: ast.While) -> bool:
        if not self.depth:
            self.flow.loops.append(span(node))
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

    def visit_MatchAs(self, node: ast.MatchAs) -> bool:
        if node.name:  # `case y:`, `case [y]:`, `case Point(x=y)`, `case ... as y`
            self._bind_key(node.name, node, None, "other")
        return True

    def visit_MatchStar(self, node: ast.MatchStar) -> bool:
        if node.name:  # `case [first, *rest]:`
            self._bind_key(node.name, node, None, "other")
        return True

    def visit_MatchMapping(self, node: ast.MatchMapping) -> bool:
        if node.rest:  # `case {"k": v, **rest}:`
            self._bind_key(node.rest, node, None, "other")
        return True

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> bool:
        if node.name:
            self._bind_key(node.name, node, None, "other")
        return True

    def visit_FunctionDef(self, node: Function) -> bool:
        self._bind_key(node.name, node, None, "def")
        if not self.nested:
            self.skipped = True
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
            self.skipped = True
            return False
        self.depth += 1
        for child in self.kids[node]:
            self.visit(child)
        self.depth -= 1
        return False

    def visit_Lambda(self, node: ast.Lambda) -> bool:
        if not self.nested:
            self.skipped = True
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

    def visit_Global(self, node: Union[ast.Global, ast.Nonlocal]) -> bool:
        if not self.depth:
            self.flow.declared.update(node.names)
        return False

    visit_Nonlocal = visit_Global

    def visit_Return(self, node: ast.Return) -> bool:
        if not self.depth and node.value is not None and not is_const(node.value, None):
            self.flow.returns_value = True
        return True

    def visit_Yield(self, node: Union[ast.Yield, ast.YieldFrom]) -> bool:
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


# Node type -> its ``visit_`` method (None: none; visit the children). The methods take their
# own node type: Callable cannot say "the type of the key", hence Any.
_VISITS: Dict[Type[ast.AST], Optional[Callable[[_FlowCollector, Any], bool]]] = {}


def _unpacked(target: ast.expr, value: ast.expr) -> List[Tuple[ast.expr, ast.expr]]:
    """``a, b = 1.0, x`` -> [(a, 1.0), (b, x)]; [] unless both sides are plain, equal tuples."""
    if not (isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List))):
        return []
    if len(target.elts) != len(value.elts):
        return []
    if any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return []
    return list(zip(target.elts, value.elts))


class Binder:
    """One :class:`Flow` per body of a module, gathered on first use."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self._flows: Dict[Tuple[Owner, bool], Flow] = {}

    def flow(self, owner: Owner, nested: bool = True) -> Flow:
        """What ``owner``'s body does with names; with ``nested=False`` only its own bindings
        (loads inside nested functions are not gathered: much cheaper for a whole module)."""
        flow = self._flows.get((owner, nested))
        if flow is None and not nested:
            flow = self._flows.get((owner, True))
        if flow is None:
            flow = Flow(owner)
            collector = _FlowCollector(flow, self.source.children, nested)
            collector.run(owner)
            for bindings in flow.bindings.values():
                bindings.sort(key=lambda b: b.start)
            self._flows[(owner, nested)] = flow
            if not collector.skipped:  # no nested scope in the body: the two walks are one
                self._flows[(owner, True)] = flow
        return flow
