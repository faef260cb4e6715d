"""Tensors autograd saves as an index, a target or a mask (measured with torch 2.x).

An op that differentiates one operand along an index keeps the index for backward and checks
its version there: ``cross_entropy``/``nll_loss`` (and ``nn.CrossEntropyLoss``/``nn.NLLLoss``)
keep the target, ``gather``/``index_select``/``scatter`` the index, ``embedding`` the ids,
``masked_fill``/``where``/``masked_select`` the mask. Writing into that tensor in place after the
op (``labels[labels == pad] = 0``, ``positions.clamp_(0, n)``, ``actions += 1``) makes backward
raise "modified by an inplace operation" whatever the tensor's dtype (a LongTensor, a mask), as
soon as the operand the op differentiates requires grad; when none does, the op records no
backward and saves nothing. ``tests/test_index_saves.py`` runs each entry with torch (raises
with grad, runs without), including 0-dim indices, ``int32`` ids and probability targets.

Left out on purpose: ``take_along_dim`` (it saves a broadcast copy, not the tensor),
``repeat_interleave``; ``scatter_add``/``index_add`` keep the index only for the source's
gradient (not for the input's), so only the source counts there; ``Tensor.where`` orders its
operands unlike ``torch.where`` (only the function counts); ``x[i]`` with a 0-dim index tensor
selects (saves nothing), so tensor subscripts are not entries here.

This module reads syntax only; which op a call runs and whether an operand requires grad come
from the caller (:class:`~codemod.analysis.hazard.Hazards`), so it imports no other fact module.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, Iterable, NamedTuple, Optional, Protocol, Sequence, Set, Tuple, Union

from codemod.analysis.dataflow import VIEW_METHODS
from codemod.analysis.syntax import FUNCTIONS, Function, Located
from codemod.analysis.tensor_kind import KindFacts, is_tensor


class IndexSave(NamedTuple):
    """Where an op takes the tensor it saves as an index (``index``) and the operands whose
    gradient needs it (``data``), by the parameter names of its function form."""

    params: Tuple[str, ...]
    indexed: str
    data: Tuple[str, ...]


_TARGET = IndexSave(("input", "target"), "target", ("input",))
_GATHER = IndexSave(("input", "dim", "index"), "index", ("input",))
_MASKED_FILL = IndexSave(("input", "mask", "value"), "mask", ("input", "value"))
_MASKED_SELECT = IndexSave(("input", "mask"), "mask", ("input",))
_SCATTER = IndexSave(("input", "dim", "index", "src"), "index", ("input", "src", "value"))

# By op: the measured entries (keys are the short names the test measures).
INDEX_SAVES: Dict[str, IndexSave] = {
    "cross_entropy": _TARGET,
    "nll_loss": _TARGET,
    "CrossEntropyLoss": _TARGET,
    "NLLLoss": _TARGET,
    "gather": _GATHER,
    "index_select": _GATHER,
    "embedding": IndexSave(("input", "weight"), "input", ("weight",)),
    "masked_fill": _MASKED_FILL,
    "where": IndexSave(("condition", "input", "other"), "condition", ("input", "other")),
    "scatter": _SCATTER,
    "scatter_add": IndexSave(("input", "dim", "index", "src"), "index", ("src",)),
    "index_add": IndexSave(("input", "dim", "index", "source"), "index", ("source",)),
    "masked_select": _MASKED_SELECT,
}

# The qualified names of the function and module forms (``torch.embedding`` takes its operands
# the other way round: not an entry).
_FUNCTIONS = {
    "torch.nn.functional.cross_entropy": "cross_entropy",
    "torch.nn.functional.nll_loss": "nll_loss",
    "torch.nn.CrossEntropyLoss": "CrossEntropyLoss",
    "torch.nn.modules.loss.CrossEntropyLoss": "CrossEntropyLoss",
    "torch.nn.NLLLoss": "NLLLoss",
    "torch.nn.modules.loss.NLLLoss": "NLLLoss",
    "torch.gather": "gather",
    "torch.index_select": "index_select",
    "torch.nn.functional.embedding": "embedding",
    "torch.masked_fill": "masked_fill",
    "torch.where": "where",
    "torch.scatter": "scatter",
    "torch.scatter_add": "scatter_add",
    "torch.index_add": "index_add",
    "torch.masked_select": "masked_select",
}
# Tensor methods: the receiver is the function form's first operand.
_METHODS = frozenset({"gather", "index_select", "masked_fill", "scatter", "scatter_add", "index_add",
                      "masked_select"})


class IndexUse(NamedTuple):
    """A tensor passed where an op saves it as an index: the op (for messages) and the
    operands whose gradient needs it."""

    op: str
    data: Tuple[ast.expr, ...]


def _operand(call: ast.Call, params: Sequence[str], name: str, method: bool) -> Optional[ast.expr]:
    """The expression ``call`` passes for parameter ``name`` (the receiver of a method is the
    first parameter), or None."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if name not in params:  # passed by keyword only (``scatter(..., value=0.5)``)
        return None
    at = params.index(name)
    if method:
        if at == 0:
            func = call.func
            return func.value if isinstance(func, ast.Attribute) else None
        at -= 1
    args = call.args
    if any(isinstance(a, ast.Starred) for a in args[:at + 1]):
        return None
    return args[at] if at < len(args) else None


def index_use(call: ast.Call, passed: ast.expr, op_name: Optional[str]) -> Optional[IndexUse]:
    """Whether ``call`` takes ``passed`` as the index (target, ids, mask) of an op in
    :data:`INDEX_SAVES`. ``op_name``: the op the call runs as the analysis names it (a qualified
    torch name, a module's class, or a tensor method's bare name)."""
    if op_name is None:
        return None
    method = "." not in op_name
    if method:
        func = call.func
        if op_name not in _METHODS or not (isinstance(func, ast.Attribute) and func.attr == op_name):
            return None
        short = op_name
    else:
        found = _FUNCTIONS.get(op_name)
        if found is None:
            return None
        short = found
    entry = INDEX_SAVES[short]
    if _operand(call, entry.params, entry.indexed, method) is not passed:
        return None
    data = tuple(e for e in (_operand(call, entry.params, p, method) for p in entry.data) if e is not None)
    return IndexUse(op_name, data) if data else None


def index_saved(call: ast.Call, passed: ast.expr, op_name: Optional[str],
                requires_grad: Callable[[Sequence[ast.expr]], bool]) -> Optional[str]:
    """The op that saves ``passed`` as an index for backward at ``call``, when one of the
    operands it differentiates is shown to require grad (``requires_grad``); else None."""
    use = index_use(call, passed, op_name)
    if use is None or not requires_grad(use.data):
        return None
    return use.op


# Tensor subscripts: ``x[idx]`` / ``x[rows, cols]`` / ``x[:, idx]`` keep every index tensor of one
# dimension or more (IndexBackward); a 0-dim index tensor selects instead and keeps nothing, so
# the index must be shown to have a dimension: what follows is a lower bound of its rank.
_RANK_KEEPING = frozenset({"t", "long", "int", "contiguous", "clone", "to", "cpu", "cuda"})
_MAX_DEPTH = 8


class RankFacts(NamedTuple):
    """What :func:`rank` asks the analysis: the one value a name is bound to where it is read,
    a call's qualified torch name, and whether an expression is known to be a tensor."""

    bound: Callable[[ast.Name], Optional[ast.expr]]
    torch_name: Callable[[ast.expr], Optional[str]]
    tensor: Callable[[ast.expr], bool]


def subscript_indexed(node: ast.expr, parent: Callable[[ast.AST], Optional[ast.AST]]) -> Optional[ast.Subscript]:
    """The subscript read (``x[node]``, ``x[node, j]``, ``x[:, node]``) that indexes with ``node``."""
    up = parent(node)
    if isinstance(up, ast.Tuple):
        node, up = up, parent(up)
    if isinstance(up, ast.Subscript) and up.slice is node and isinstance(up.ctx, ast.Load):
        return up
    return None


def rank(expr: ast.expr, facts: RankFacts, depth: int = 0) -> Optional[int]:
    """A lower bound of the number of dimensions of the tensor ``expr`` computes, or None when
    it is not shown to be a tensor: ``x.nonzero()`` (2), ``torch.arange(n)`` (1),
    ``torch.tensor([[...]])`` (the nesting of the list literal), ``x.t()``/``x.T``/``x.long()``
    (as ``x``), ``x[0]`` (one less), a name bound once to one of these."""
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, ast.Name):
        value = facts.bound(expr)
        return None if value is None else rank(value, facts, depth + 1)
    if isinstance(expr, ast.Attribute) and expr.attr == "T":
        return rank(expr.value, facts, depth + 1)
    if isinstance(expr, ast.Subscript) and isinstance(expr.ctx, ast.Load):
        parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
        if not all(isinstance(p, ast.Constant) and type(p.value) is int for p in parts):
            return None
        inner = rank(expr.value, facts, depth + 1)
        return inner - len(parts) if inner is not None and inner - len(parts) >= 0 else None
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    name = facts.torch_name(func)
    if name in ("torch.nonzero", "torch.argwhere"):
        return None if any(k.arg == "as_tuple" for k in expr.keywords) else 2
    if name == "torch.arange":
        return 1
    if name in ("torch.tensor", "torch.as_tensor", "torch.LongTensor") and expr.args:
        depth_of = 0
        value = expr.args[0]
        while isinstance(value, (ast.List, ast.Tuple)) and value.elts:
            depth_of += 1
            value = value.elts[0]
        return depth_of or None
    if name is None and isinstance(func, ast.Attribute):
        if func.attr in ("nonzero", "argwhere") and not expr.keywords and not expr.args:
            return 2 if facts.tensor(func.value) else None  # (numpy's `nonzero` returns a tuple)
        if func.attr in _RANK_KEEPING:
            return rank(func.value, facts, depth + 1)
    return None


class _Op(Protocol):
    @property
    def name(self) -> str: ...


class _Ops(Protocol):
    def _op_of(self, expr: ast.expr) -> Optional[_Op]: ...


class _Targets(Protocol):
    def callee(self, call: ast.Call) -> Optional[Union[Tuple[Function, str], str, ast.Call]]: ...


class _Summaries(Protocol):
    @property
    def targets(self) -> _Targets: ...


class _Requirement(Protocol):
    def requires_grad(self, expr: ast.expr, at: Located) -> str: ...

    def activation(self, at: Located) -> bool: ...


class _Views(Protocol):
    @property
    def requirement(self) -> _Requirement: ...


class _Model(Protocol):
    @property
    def summaries(self) -> _Summaries: ...

    @property
    def views(self) -> _Views: ...

    def is_factory(self, call: ast.Call) -> bool: ...


class _Integral(Protocol):
    def integral(self, expr: ast.expr) -> bool: ...


class HazardAsks(Protocol):
    """What :class:`IndexSaves` asks the hazard analysis: whether operands require grad at a
    statement, which op a call runs (its name), and which function of the file a call runs."""

    def grad_shown(self, inputs: Iterable[ast.expr], at: Located) -> bool: ...

    @property
    def ops(self) -> _Ops: ...

    @property
    def model(self) -> _Model: ...

    @property
    def integral(self) -> _Integral: ...


class IndexSaves:
    """Whether the op that reads a tensor keeps it as its index, target or mask for backward."""

    def __init__(self, model: KindFacts, hazards: HazardAsks) -> None:
        self.model = model
        self.hazards = hazards
        self._open: Set[Function] = set()  # functions being followed (recursion)

    def saved(self, node: ast.expr, key: str) -> Optional[str]:
        """Why the op reading ``node`` (the written tensor ``key``, or a view of it) saved it as an
        index: ``F.cross_entropy(logits, labels)``, ``q.gather(1, index=actions)``,
        ``adj[edge_index[0], edge_index[1]]``; None when it does not, or when no operand it
        differentiates is shown to require grad."""
        found = self._saving(node)
        if found is None:
            return None
        op, line, indexing = found
        if indexing:
            return (f"`{key}` was saved for backward by the indexing `{op}` at line {line} (an index tensor "
                    "of one dimension or more, for the gradient of an indexed tensor that requires grad)")
        return (f"`{key}` was saved for backward by `{op}` at line {line} (as its index, target or mask, "
                "for the gradient of an operand that requires grad)")

    def _saving(self, node: ast.expr) -> Optional[Tuple[str, int, bool]]:
        """The op that keeps ``node`` as an index (its name), the line, and whether it is a subscript."""
        model = self.model
        sub = subscript_indexed(node, model.parent)
        if sub is not None:
            if isinstance(model.parent(sub), ast.Compare):
                return None  # `x[idx] > 0`: only compared, so backward never reaches what indexing saved
            facts = RankFacts(self._bound_once, model.torch_name, lambda e: is_tensor(e, model))
            if (rank(node, facts) or 0) >= 1 and self._requires_grad([sub.value], model.statement_of(sub)):
                return model.code(sub).strip(), node.lineno, True
            return None
        parent = model.parent(node)
        call = model.parent(parent) if isinstance(parent, ast.keyword) else parent
        if not isinstance(call, ast.Call) or call.func is node or isinstance(model.parent(call), ast.Compare):
            return None
        found = self.hazards.ops._op_of(call)
        op = index_saved(call, node, found.name if found is not None else None,
                         lambda data: self._requires_grad(data, model.statement_of(call))) or self._in_callee(call, node)
        return None if op is None else (op, node.lineno, False)

    def _requires_grad(self, data: Sequence[ast.expr], at: Located) -> bool:
        """An operand the op differentiates requires grad, on evidence stronger than the general
        one (:meth:`Hazards.grad_shown`, which must hold too): shown to require grad, an
        activation of a module with parameters, or an argument of the function reached through
        views, items and torch ops only; never an integral or boolean operand. (Index code runs on targets and matches as
        often as on activations: a value through a call the analysis cannot see, a matcher's
        ``similarity_fn(boxes, anchors)``, is no evidence here.)"""
        requirement = self.hazards.model.views.requirement
        return any(not self.hazards.integral.integral(e) and self.hazards.grad_shown([e], at) and (
            requirement.requires_grad(e, at) == "yes" or requirement.activation(at) or self._param_rooted(e, 0))
            for e in data)

    def _param_rooted(self, expr: ast.expr, depth: int) -> bool:
        """``expr`` is computed from a parameter of its function (not ``self``) through names bound
        once, items, views and torch ops (the differentiated operand of each)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(expr, ast.Name):
            stmt = self.model.statement_of(expr)
            owner = self.model.owner(stmt)
            reaching = self.model.reaching(self.model.flow(owner), expr.id, stmt)
            if reaching and all(b.form == "param" for b in reaching):
                return expr.id not in ("self", "cls")
            return bool(reaching) and all(  # `x = adj.view(...)`, `if m: x = x[m]`: every value reaching
                b.form == "param" and b.key not in ("self", "cls") or b.form in ("assign", "ann") and b.value is not None
                and self._param_rooted(b.value, depth + 1) for b in reaching)
        if isinstance(expr, ast.Subscript):
            return self._param_rooted(expr.value, depth + 1)
        if isinstance(expr, ast.Attribute):
            return expr.attr in ("T", "mT") and self._param_rooted(expr.value, depth + 1)
        if isinstance(expr, ast.BinOp):
            return self._param_rooted(expr.left, depth + 1) or self._param_rooted(expr.right, depth + 1)
        if not isinstance(expr, ast.Call) or self.hazards.model.is_factory(expr):
            return False
        func = expr.func
        name = self.model.torch_name(func)
        if name is not None:  # `torch.log_softmax(x, -1)`: its first operand
            return bool(expr.args) and not isinstance(expr.args[0], ast.Starred) \
                and self._param_rooted(expr.args[0], depth + 1)
        if isinstance(func, ast.Attribute) and is_tensor(func.value, self.model) or (
                isinstance(func, ast.Attribute) and func.attr in VIEW_METHODS):
            return self._param_rooted(func.value, depth + 1)  # `x.view(-1, n)`, `x.log_softmax(-1)`
        return False

    def _bound_once(self, name: ast.Name) -> Optional[ast.expr]:
        """The one value ``name`` is bound to where it is read (None: several, a parameter, none)."""
        stmt = self.model.statement_of(name)
        reaching = self.model.reaching(self.model.flow(self.model.owner(stmt)), name.id, stmt)
        return reaching[0].value if len(reaching) == 1 and reaching[0].form in ("assign", "ann") else None

    def _in_callee(self, call: ast.Call, passed: ast.expr) -> Optional[str]:
        """``loss = token_loss(logits, labels)`` where ``token_loss``, a function of this file
        called by place, hands its parameter as it came in to an op that keeps it as an index
        (``F.cross_entropy(logits.view(-1, n), labels.view(-1))``) where an operand that op
        differentiates requires grad (one computed from a parameter counts, as for any
        hazard): the op that saves it, as "callee via op (line n)"."""
        target = self.hazards.model.summaries.targets.callee(call)
        if not isinstance(target, tuple) or target[0] in self._open or len(self._open) > 3:
            return None
        func, label = target
        if not isinstance(func, FUNCTIONS) or any(isinstance(a, ast.Starred) for a in call.args) \
                or passed not in call.args:
            return None
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if isinstance(call.func, ast.Attribute) and params[:1] == ["self"]:
            params = params[1:]  # a method called on an instance: `self` is the receiver
        at = call.args.index(passed)
        if at >= len(params):
            return None
        key = params[at]
        self._open.add(func)
        try:
            flow = self.model.flow(func)
            for _, load in flow.loads.get(key, []):
                if not isinstance(load, ast.Name) or self.model.owner(load) is not func:
                    continue
                bindings = self.model.reaching(flow, key, self.model.statement_of(load))
                if not bindings or any(b.form != "param" for b in bindings):
                    continue  # another value of the name (`labels = labels.clone()`)
                inner = self._saving(self._through_views(load))
                if inner is not None:
                    return f"{label} via {inner[0]} (line {inner[1]})"  # as a summary's label reads
            return None
        finally:
            self._open.discard(func)

    def _through_views(self, node: ast.expr) -> ast.expr:
        """``labels.view(-1)``, ``labels.T``: a view of ``node`` (one version counter) read by the op."""
        while True:
            parent = self.model.parent(node)
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "T":
                node = parent
                continue
            call = self.model.parent(parent) if isinstance(parent, ast.Attribute) else None
            if isinstance(call, ast.Call) and call.func is parent and isinstance(parent, ast.Attribute) \
                    and parent.value is node and parent.attr in VIEW_METHODS:
                node = call
                continue
            return node
