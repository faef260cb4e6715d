"""Summaries of a module's own functions and ``nn.Module`` classes, for their call sites.

A call of a user function or module (``self.ln_1(x)``, ``block(x)``, ``helper(h)``) used to be
a call the hazard analysis "cannot see into". A :class:`Summary` says what the callee does with
its tensors, read off its body with the same op facts the hazard analysis uses at a call site
(``op_of``, handed in: this module knows nothing of the hazard analysis):

- which of its inputs it saves for backward (a load of the parameter that an op saving that
  operand reads, directly, through a view of it, or through another summarized call);
- whether it saves its output (it returns what an op saved as its output, or an input it saved);
- whether it returns an input, a view of one, or a fresh tensor;
- which inputs it mutates in place.

A callee is resolved within the file: a module-level function, a method of the enclosing class
(``self.helper``), or an instance of a class of the file (``self.ln_1 = LayerNorm(d)``,
``block = Block(d)``, ``Block(d)(x)``) through its ``forward``. Anything else has no summary
and stays unseen. A recursive cycle is cut where it closes: the inner call is unseen there.
A parameter that reaches an op the analysis cannot see into, and is saved by nothing it can
see, leaves the summary unable to tell (``saves`` None): unknown is not "saves nothing".
"""

from __future__ import annotations

import ast
import dataclasses
import enum
from typing import TYPE_CHECKING, Callable, Dict, FrozenSet, List, Optional, Set, Tuple, Union

from codemod import torch_api
from codemod.analysis.dataflow import VIEW_METHODS
from codemod.analysis.kinds import TENSORISH
from codemod.analysis.syntax import FUNCTIONS, Function, target_key

if TYPE_CHECKING:
    from codemod.analysis.model import SemanticModel

# What an op saves, as the hazard analysis says it: a tuple of "input0", "output"..., or a
# string (its UNSEEN) when it cannot see into the op.
OpFacts = Tuple[str, Union[Tuple[str, ...], str]]
OpOf = Callable[[ast.expr], Optional[OpFacts]]

_ALIAS_METHODS = VIEW_METHODS | {"contiguous"}  # the result shares storage with the receiver
_MAX_HOPS = 4  # name -> value steps followed from a return back to the op that made it


class Returns(enum.Enum):
    """What a callee returns, as far as its ``return`` statements show."""

    INPUT = "input"  # one of its parameters, as it came in
    VIEW = "view"  # a view of a parameter (shares its storage)
    FRESH = "fresh"  # the result of an op: a new tensor
    UNKNOWN = "unknown"  # several kinds, no return, or something it cannot follow


class Saved(enum.Enum):
    YES = "yes"
    NO = "no"
    UNKNOWN = "unknown"  # it reaches an op the analysis cannot see into


@dataclasses.dataclass(frozen=True)
class Summary:
    """What calling a user function or module does with its tensors."""

    name: str  # for messages: "LayerNorm.forward", "helper"
    inputs: Tuple[Saved, ...]  # per positional parameter (self excluded): saved for backward?
    output: Saved  # its result is a tensor autograd saved (so writing into it breaks backward)
    returns: Returns
    returned_input: Optional[int]  # for INPUT and VIEW: which parameter
    mutates: FrozenSet[int]  # parameters it writes into in place
    via: Tuple[str, ...] = ()  # the saving ops found inside, "torch.sigmoid (line 16)"

    @property
    def label(self) -> str:
        """The callee and the saving ops inside it, for messages."""
        return f"{self.name} via {', '.join(self.via)}" if self.via else self.name

    @property
    def saves(self) -> Optional[Tuple[str, ...]]:
        """What the call saves, as OP_SAVES says it ("input0", "output"); None when it cannot
        tell (nothing proven saved, but something unseen on the way)."""
        found = tuple(f"input{i}" for i, s in enumerate(self.inputs) if s is Saved.YES)
        if self.output is Saved.YES:
            found += ("output",)
        if found:
            return found
        if Saved.UNKNOWN in (*self.inputs, self.output):
            return None
        return ()


class Summaries:
    """Summaries of one module's functions and classes, computed once each, on demand."""

    def __init__(self, model: "SemanticModel", op_of: OpOf) -> None:
        self.model = model
        self.op_of = op_of
        self._done: Dict[Function, Optional[Summary]] = {}
        self._open: Set[Function] = set()
        self._top: Optional[Dict[str, ast.stmt]] = None

    # ---------------------------------------------------------------- call sites
    def of_call(self, call: ast.Call) -> Optional[Summary]:
        """The summary of what ``call`` calls, when it is one of this module's functions or
        an instance of one of its classes; None otherwise (or inside a recursive cycle)."""
        target = self.callee(call)
        return self.of_function(target[0], target[1]) if target is not None else None

    def callee(self, call: ast.Call) -> Optional[Tuple[Function, str]]:
        """The function a call runs (a ``forward`` for a module instance) and a label."""
        func = call.func
        if isinstance(func, ast.Call):  # Block(d)(x)
            cls = self._class_of(func)
            return self._forward(cls) if cls is not None else None
        key = target_key(func)
        if key is None:
            return None
        if key.startswith("self.") and key.count(".") == 1:
            cls_node = self.model.enclosing_class(func)
            if cls_node is None:
                return None
            attr = key[5:]
            method = next((s for s in cls_node.body if isinstance(s, FUNCTIONS) and s.name == attr), None)
            if method is not None:
                return method, f"{cls_node.name}.{attr}"
            values = self.model.class_attrs(cls_node).get(attr, [])
            return self._instance_callee([v for v in values if isinstance(v, ast.expr)], len(values))
        if "." in key:
            return None
        owner = self.model.owner(func)
        flow = self.model.flow(owner)
        local = flow.bindings.get(key) if owner is not self.model.module else None
        if local:
            values = [b.value for b in local if b.form == "assign" and b.value is not None]
            return self._instance_callee(values, len(local))
        top = self._top_level().get(key)
        if isinstance(top, FUNCTIONS):
            return top, top.name
        if top is None and owner is not self.model.module:
            values = [b.value for b in self.model.flow(self.model.module).bindings.get(key, [])
                      if b.form == "assign" and b.value is not None]
            return self._instance_callee(values, len(values)) if values else None
        return None

    def _instance_callee(self, values: List[ast.expr], count: int) -> Optional[Tuple[Function, str]]:
        """The forward of the one class all ``values`` build (``LayerNorm(d)``), if they do."""
        classes = {self._class_of(v) for v in values}
        if not values or len(values) != count or len(classes) != 1:
            return None
        cls = classes.pop()
        return self._forward(cls) if cls is not None else None

    def _class_of(self, value: ast.expr) -> Optional[ast.ClassDef]:
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return None
        found = self._top_level().get(value.func.id)
        return found if isinstance(found, ast.ClassDef) else None

    def _forward(self, cls: ast.ClassDef, depth: int = 0) -> Optional[Tuple[Function, str]]:
        """``cls.forward``, or a base class's of this file (a few levels up)."""
        for stmt in cls.body:
            if isinstance(stmt, FUNCTIONS) and stmt.name in ("forward", "__call__"):
                return stmt, f"{cls.name}.{stmt.name}"
        if depth < 4:
            for base in cls.bases:
                found = self._top_level().get(base.id) if isinstance(base, ast.Name) else None
                if isinstance(found, ast.ClassDef):
                    return self._forward(found, depth + 1)
        return None

    def _top_level(self) -> Dict[str, ast.stmt]:
        if self._top is None:
            self._top = {}
            for stmt in self.model.module.body:
                if isinstance(stmt, (*FUNCTIONS, ast.ClassDef)):
                    self._top[stmt.name] = stmt
        return self._top

    # ---------------------------------------------------------------- callees
    def of_function(self, func: Function, label: str = "") -> Optional[Summary]:
        """The summary of ``func`` (None while it is being summarized: a recursive cycle)."""
        if func in self._done:
            return self._done[func]
        if func in self._open:
            return None
        self._open.add(func)
        try:
            found = self._summarize(func, label or func.name)
        finally:
            self._open.discard(func)
        self._done[func] = found
        return found

    def _params(self, func: Function) -> List[str]:
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if plain and plain[0] in ("self", "cls") and isinstance(self.model.parent(func), ast.ClassDef):
            plain = plain[1:]
        return plain

    def _summarize(self, func: Function, label: str) -> Summary:
        params = self._params(func)
        vias: List[str] = []
        inputs = tuple(self._input_saved(func, p, vias) for p in params)
        returns, index, output = self._returned(func, params, vias)
        if returns in (Returns.INPUT, Returns.VIEW) and index is not None and inputs[index] is Saved.YES:
            output = Saved.YES  # it hands back (a view of) an input it saved
        mutates = frozenset(i for i, p in enumerate(params) if self._mutated(func, p))
        return Summary(label, inputs, output, returns, index, mutates, tuple(dict.fromkeys(vias)))

    def _from_param(self, func: Function, key: str, node: ast.AST) -> bool:
        """The load ``node`` of ``key`` in ``func`` may read the parameter as it came in."""
        if self.model.owner(node) is not func:
            return False  # a nested function's load: it runs who knows when
        stmt = self.model.statement_of(node)
        return any(b.form == "param" for b in self.model.reaching(self.model.flow(func), key, stmt))

    def _input_saved(self, func: Function, key: str, vias: List[str]) -> Saved:
        result = Saved.NO
        for _, node in self.model.flow(func).loads.get(key, []):
            if not isinstance(node, ast.Name) or not self._from_param(func, key, node):
                continue
            stmt = self.model.statement_of(node)
            if self.model.intended_reason(stmt, None):
                continue  # grad off there: nothing is saved
            found = self._consumer(node)
            if found is None:
                continue
            op_node, index = found
            facts = self.op_of(op_node)
            if facts is None:
                continue
            name, saves = facts
            if isinstance(saves, str):  # unseen
                if self.model.kind(node) in TENSORISH or result is Saved.NO:
                    result = Saved.UNKNOWN
                continue
            if f"input{index}" in saves:
                vias.append(f"{name} (line {op_node.lineno})")
                return Saved.YES
        return result

    def _consumer(self, node: ast.expr) -> Optional[Tuple[Union[ast.Call, ast.BinOp], int]]:
        """The op that reads ``node`` (through views of it) and the operand it reads it as."""
        while True:
            parent = self.model.parent(node)
            if isinstance(parent, ast.Subscript) and parent.value is node:
                node = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _ALIAS_METHODS:
                call = self.model.parent(parent)
                if isinstance(call, ast.Call) and call.func is parent:
                    node = call
                    continue
            break
        parent = self.model.parent(node)
        if isinstance(parent, ast.BinOp):
            return parent, 0 if parent.left is node else 1
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = self.model.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent and parent.attr not in torch_api.INPLACE_METHODS:
                return call, 0  # x.exp(): the receiver is input 0
            return None
        if isinstance(parent, ast.Call) and parent.func is not node:
            plain = [a for a in parent.args if not isinstance(a, ast.Starred)]
            index = next((i for i, a in enumerate(plain) if a is node), None)
            if index is None:
                return None
            func = parent.func
            if isinstance(func, ast.Attribute) and self.model.torch_name(func) is None \
                    and self.model.kind(func.value) in TENSORISH:
                index += 1  # a.mul(x): x is input 1
            return parent, index
        return None

    def _returned(self, func: Function, params: List[str], vias: List[str]) -> Tuple[Returns, Optional[int], Saved]:
        """What ``func`` returns, which parameter for an input or view, and whether autograd
        saved it (as the output of an op that saves its output)."""
        kinds: Set[Tuple[Returns, Optional[int]]] = set()
        output = Saved.NO
        values = [n.value for n in self.model.walk(func)
                  if isinstance(n, ast.Return) and n.value is not None and self.model.owner(n) is func]
        for value in values:
            expr: ast.expr = value
            view = False
            for _ in range(_MAX_HOPS):
                if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                        and expr.func.attr in _ALIAS_METHODS and self.model.kind(expr.func.value) in TENSORISH:
                    expr, view = expr.func.value, True
                    continue
                if isinstance(expr, ast.Name):
                    reaching = self.model.reaching(self.model.flow(func), expr.id, self.model.statement_of(expr))
                    if len(reaching) == 1 and reaching[0].form == "param" and expr.id in params:
                        kinds.add((Returns.VIEW if view else Returns.INPUT, params.index(expr.id)))
                        break
                    if len(reaching) == 1 and reaching[0].form == "assign" and reaching[0].value is not None:
                        expr = reaching[0].value
                        continue
                    kinds.add((Returns.UNKNOWN, None))
                    break
                facts = self.op_of(expr)
                if facts is None:
                    kinds.add((Returns.UNKNOWN, None))
                    break
                kinds.add((Returns.FRESH, None))
                name, saves = facts
                if isinstance(saves, str):
                    output = Saved.UNKNOWN if output is Saved.NO else output
                elif "output" in saves:
                    vias.append(f"{name} (line {expr.lineno})")
                    output = Saved.YES
                break
            else:
                kinds.add((Returns.UNKNOWN, None))
        if len(kinds) != 1:
            return Returns.UNKNOWN, None, output
        returns, index = kinds.pop()
        return returns, index, output

    def _mutated(self, func: Function, key: str) -> bool:
        """``key += ...``, ``key.add_(...)`` or ``key[...] = ...`` on the parameter as it came in."""
        flow = self.model.flow(func)
        for b in flow.bindings.get(key, []):
            if b.form == "aug" and self._from_param(func, key, b.stmt):
                return True
        for _, node in flow.loads.get(key, []):
            if not isinstance(node, ast.Name) or not self._from_param(func, key, node):
                continue
            parent = self.model.parent(node)
            if isinstance(parent, ast.Attribute) and parent.attr in torch_api.INPLACE_METHODS:
                return True
            if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
                return True
        return False
