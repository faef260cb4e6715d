"""Static hazard analysis: which in-place ops really break autograd.

Most in-place ops are harmless (``out = conv(x); out += x``). A conflict needs a tensor that an
op saved for backward — its output (``exp``, ``sigmoid``, ``softmax``, ``relu``...) or an input
(``matmul``, ``mul`` by a tensor, ``linear``, norms...) — and that is later modified in place,
directly or through an alias or a view, with grad mode on. Which op saves what is data measured
from torch (``OP_SAVES`` in ``torch_api.py``). Calls the analysis cannot see into (user
functions and modules, ops it has no data for) are treated as if they saved their tensors, and
the explanation says so.
"""

from __future__ import annotations

import ast
from typing import (
    TYPE_CHECKING,
    Dict,
    Final,
    Literal,
    NamedTuple,
    Optional,
    Sequence,
    Tuple,
    Type,
    Union,
    cast,
)

from codemod import torch_api
from codemod.analysis.binder import Flow
from codemod.analysis.classes import AttrValue
from codemod.analysis.dataflow import VIEW_METHODS
from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import Located, Pos, Span, is_const, target_key
from codemod.analysis.tensor_kind import is_tensor

if TYPE_CHECKING:
    from codemod.analysis.model import SemanticModel

_OPERATORS: Dict[Type[ast.operator], Tuple[str, str]] = {  # operator -> (op, symbol)
    ast.Mult: ("mul", "*"), ast.Div: ("div", "/"), ast.Add: ("add", "+"), ast.Sub: ("sub", "-"),
    ast.MatMult: ("matmul", "@"), ast.Pow: ("pow", "**"), ast.FloorDiv: ("floor_divide", "//"),
    ast.Mod: ("remainder", "%"),
}
UNSEEN: Final = "unseen"  # a call the analysis cannot see into
Saves = Union[Tuple[str, ...], Literal["unseen"]]  # what an op saves ("input0", "output"...), or UNSEEN


class Op(NamedTuple):
    """An op an expression runs, by a name for messages, and what it saves for backward."""

    name: str
    saves: Saves


class Hazards:
    """Explains, for an in-place op, which save it would break (or returns None)."""

    def __init__(self, model: "SemanticModel") -> None:
        self.model = model

    # ---------------------------------------------------------------- entry points
    def explain(self, node: Located, target: ast.expr) -> Optional[str]:
        """Why the in-place write at ``node`` into ``target`` breaks backward, if it does."""
        if self.model.intended_reason(node, None):
            return None  # grad off: nothing is saved
        key = target_key(target)
        if key is None:
            return self._producer_reason(target, self.model.statement_of(node))
        return self._key_reason(key, self.model.statement_of(node), target)

    def explain_module(self, call: ast.Call) -> Optional[str]:
        """Why building this ``inplace=True`` module makes a conflict at one of its calls."""
        chains = self.model.summaries.chains
        if chains.runs_in_place(call) is False:
            return None  # `inplace=` is False wherever it is built (Block(inplace=False), a default)
        around = chains.around(call)  # nn.Sequential(...) or a list literal of layers
        if around is not None and (around[2] or around[1] > 0):
            return self._sequential_reason(around[0], around[1], around[2])
        parent = self.model.parent(call)
        if isinstance(parent, ast.Call) and parent.func is call and parent.args:
            return self.explain(parent, parent.args[0])  # nn.ReLU(inplace=True)(x)
        assign = parent
        key = target_key(assign.targets[0]) if isinstance(assign, ast.Assign) and len(assign.targets) == 1 else None
        if key is None:
            return "its calls cannot be followed (it is not bound to a name), so it may write into a saved tensor"
        scope = self.model.enclosing_class(call) if key.startswith("self.") else self.model.owner(call)
        if scope is None:
            return f"its calls cannot be followed (`{key}` is set outside a class), so it may write into a saved tensor"
        calls = [c for c in self.model.calls_in(scope).get(key, []) if c.args or c.keywords]
        if not calls:
            return f"no call of `{key}` is visible, so it may write into a saved tensor"
        for site in calls:
            arg = site.args[0] if site.args else site.keywords[0].value
            reason = self.explain(site, arg)
            if reason:
                line = site.lineno
                return f"`{key}(...)` at line {line} writes into its input: {reason}"
        return None

    # ---------------------------------------------------------------- reasons
    def _key_reason(self, key: str, stmt: Located, target: ast.expr) -> Optional[str]:
        owner = self.model.owner(stmt)
        flow = self.model.flow(owner)
        start, end = self.model.range(stmt)
        identity, views = self.model.aliases(flow, key, start)
        family = [key, *sorted(identity), *sorted(views)]
        for member in family:
            bindings = [b for b in self.model.reaching(flow, member, stmt) if b.form != "aug"]
            for binding in bindings:
                if binding.form == "param":
                    if member in (key, *identity) and is_tensor(target, self.model):
                        return f"`{member}` comes from the caller, which the analysis cannot see"
                    continue
                if binding.form in ("assign", "ann") and binding.value is not None:
                    reason = self._producer_reason(binding.value, binding.stmt, member)
                    if reason:
                        return reason
            since = max((b.end for b in bindings), default=(0, 0))
            reason = self._use_reason(flow, member, since, (start, end), target)
            if reason:
                return reason
        return None

    def _producer_reason(self, expr: ast.expr, stmt: Located, name: str = "") -> Optional[str]:
        """The expression's value is the output of an op that saves its output (or a leaf)."""
        what = f"`{name}`" if name else "the tensor"
        if isinstance(expr, ast.Call) and any(
            k.arg == "requires_grad" and is_const(k.value, True) for k in expr.keywords
        ):
            return f"{what} is a leaf that requires grad: autograd forbids writing into it in place"
        found = self._op_of(expr)
        if found is None:
            return None
        op, saves = found
        line = stmt.lineno
        if saves == UNSEEN:
            if not is_tensor(expr, self.model):
                return None  # only a tensor we know of is assumed saved by what we cannot see
            return f"{what} comes from `{op}` at line {line}, a call the analysis cannot see into"
        if "output" in saves:
            return f"{what} is the output of `{op}` at line {line}, which autograd saves for backward"
        return None

    def _use_reason(self, flow: Flow, key: str, since: Pos, at: Span, target: ast.expr) -> Optional[str]:
        """A use of ``key`` as a saved input of an op after ``since``, up to the write at ``at``
        (its own right-hand side runs first), or anywhere in a loop around it (the next turn's
        write follows)."""
        start, end = at
        loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le]
        for pos, node in flow.loads.get(key, []):
            if node is target:
                continue  # the written tensor itself, as the in-place call's receiver
            before = since <= pos < end
            in_loop = any(ls <= pos <= le for ls, le in loops)
            if not (before or in_loop):
                continue
            stmt = self.model.statement_of(node)
            if self.model.intended_reason(stmt, None):
                continue
            reason = self._consumer_reason(node, key)
            if reason:
                return reason
        return None

    def _consumer_reason(self, node: ast.expr, key: str) -> Optional[str]:
        """Does the op that reads ``node`` save it? (Views of it count as it.)"""
        node = self._through_views(node)
        parent = self.model.parent(node)
        line = node.lineno
        index: Optional[int] = None
        op_node: Union[ast.Call, ast.BinOp, None] = None
        if isinstance(parent, ast.Call) and parent.func is not node:
            plain = [a for a in parent.args if not isinstance(a, ast.Starred)]
            index = next((i for i, a in enumerate(plain) if a is node), None)
            if index is not None and isinstance(parent.func, ast.Attribute) and self._is_method_call(parent):
                index += 1
            op_node = parent
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            call = self.model.parent(parent)
            if parent.attr in torch_api.INPLACE_METHODS:
                return None  # another write into it (reported on its own), not a save
            if isinstance(call, ast.Call) and call.func is parent:
                index, op_node = 0, call  # x.exp(): the receiver is input 0
        elif isinstance(parent, ast.BinOp):
            index, op_node = (0 if parent.left is node else 1), parent
        if op_node is None or index is None:
            return None
        found = self._op_of(op_node)
        if found is None:
            return None
        op, saves = found
        if saves == UNSEEN:
            if not is_tensor(node, self.model):
                return None
            return f"`{key}` is passed to `{op}` at line {line}, a call the analysis cannot see into"
        if f"input{index}" in saves:
            return f"`{key}` was saved for backward by `{op}` at line {line}"
        return None

    def _through_views(self, node: ast.expr) -> ast.expr:
        """``x[0]``, ``x.view(...)``, ``x.t()``: an op on the view reads (and may save) x."""
        while True:
            parent = self.model.parent(node)
            if isinstance(parent, ast.Subscript) and parent.value is node:
                node = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in VIEW_METHODS:
                call = self.model.parent(parent)
                if isinstance(call, ast.Call) and call.func is parent:
                    node = call
                    continue
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in ("T", "mT", "data"):
                node = parent
                continue
            return node

    def _is_method_call(self, call: ast.Call) -> bool:
        """Whether ``call`` (of an attribute: callers check) calls a method of a tensor."""
        func = cast(ast.Attribute, call.func)
        return self.model.torch_name(func) is None and self.model.kind(func.value) in (Kind.TENSOR, Kind.PARAMETER, Kind.UNKNOWN) \
            and not self._module_of(func) and self.model.summaries.callee(call) is None

    # ---------------------------------------------------------------- ops
    def _op_of(self, expr: ast.expr) -> Optional[Op]:
        """The op ``expr`` runs (what it saves: a tuple from OP_SAVES, or UNSEEN); None when
        the expression is no op at all (a name, a literal)."""
        if isinstance(expr, ast.BinOp):
            operator = _OPERATORS.get(type(expr.op))
            if operator is None:
                return None
            op, symbol = operator
            kinds = (self.model.kind(expr.left), self.model.kind(expr.right))
            scalar = Kind.SCALAR in kinds
            entry = f"{op}_scalar" if scalar else op
            fallback: Saves = torch_api.OP_SAVES.get(op, UNSEEN)
            return Op(symbol, torch_api.OP_SAVES.get(entry, fallback))
        if isinstance(expr, ast.UnaryOp):
            return Op("unary", ())
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        name = self.model.torch_name(func)
        if name is not None:
            short = name.rsplit(".", 1)[-1]
            if name in torch_api.OP_SAVES:
                return Op(name, torch_api.OP_SAVES[name])
            if short == "as_tensor" or self.model.is_factory(expr):
                return Op(name, ())  # a fresh tensor (as_tensor: data coming in, as before)
            short = short[:-1] if short.endswith("_") else short
            if name.startswith("torch.nn.") and name[len("torch.nn."):][:1].isupper():
                return Op(name, UNSEEN)  # building a module is no op; calling it is handled below
            return Op(name, torch_api.OP_SAVES.get(short, UNSEEN))
        summary = self.model.summaries.of_call(expr)  # a user function or module, a Sequential
        if summary is not None:
            return Op(summary.label, UNSEEN if summary.saves is None else summary.saves)
        module = self._module_of(func)
        if module is not None:
            return Op(module, torch_api.OP_SAVES.get(module, UNSEEN))
        if isinstance(func, ast.Attribute) and (func.attr in VIEW_METHODS or func.attr.startswith("new_")):
            return Op(func.attr, ())  # a view (saves nothing) or a fresh tensor
        if isinstance(func, ast.Attribute) and is_tensor(func.value, self.model):
            method = func.attr
            if method.endswith("_"):
                return Op(f"{self.model.code(func).strip()}()", torch_api.OP_SAVES.get(method[:-1], UNSEEN))
            if method in VIEW_METHODS or method in ("clone", "detach", "contiguous", "to", "float", "double", "half"):
                return Op(method, ())
            if method in ("size", "dim", "numel", "item", "tolist"):
                return None
            return Op(method, torch_api.OP_SAVES.get(method, UNSEEN))
        kind = self.model.kind(expr)
        if kind in (Kind.SCALAR, Kind.OTHER):
            return None
        return Op(self.model.code(func).strip(), UNSEEN)

    def _module_of(self, func: ast.expr) -> Optional[str]:
        """``self.fc`` built from ``nn.Linear(...)`` -> "torch.nn.Linear"."""
        key = target_key(func)
        if key is None:
            return None
        values: Sequence[Optional[AttrValue]]
        if key.startswith("self.") and key.count(".") == 1:
            cls = self.model.enclosing_class(func)
            values = self.model.class_attrs(cls).get(key[5:], []) if cls is not None else []
        else:
            owner = self.model.owner(func)
            values = [b.value for b in self.model.flow(owner).bindings.get(key, []) if b.form == "assign"]
        for value in values:
            if isinstance(value, ast.Call):
                name = self.model.torch_name(value.func)
                if name and name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper():
                    return f"torch.nn.{name.rsplit('.', 1)[-1]}"
        return None

    def _sequential_reason(self, layers: Sequence[ast.expr], index: int, whole: bool) -> Optional[str]:
        feeder = self.model.summaries.chains.feeder(list(layers), index)
        line = feeder.layer.lineno if feeder.layer is not None else 0
        if feeder.kind == "caller":
            if whole:
                return "it is the first layer of an nn.Sequential: its input comes from the caller"
            return "it follows the layers before its list, which the analysis cannot follow"
        if feeder.kind == "saved":
            how = "which ran in place and saved its result" if feeder.in_place else "whose output autograd saves"
            return f"it follows `{feeder.name}` (line {line}), {how} for backward"
        if feeder.kind == "unseen":
            if feeder.name:
                return f"it follows `{feeder.name}` (line {line}), which the analysis has no data for"
            return "it follows a layer the analysis cannot see into"
        return None
