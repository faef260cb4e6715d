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
import json
import weakref
from typing import Callable, Dict, FrozenSet, List, Literal, NamedTuple, Optional, Protocol, Sequence, Set, Tuple, Union, cast

from codemod import torch_api
from codemod.analysis import injected
from codemod.analysis.basic_index import copying_index
from codemod.analysis.binder import Binding
from codemod.analysis.branches import binds, branch, never_falls_off, statement_lists, within
from codemod.analysis.calls import Calls
from codemod.analysis.classes import paired
from codemod.analysis.consumed import Ends, dead_result, method_stores_nothing, stores_nothing
from codemod.analysis.dataflow import VIEW_METHODS
from codemod.analysis.dtype import INTEGRAL_OK, integral_by_operator, op_short
from codemod.analysis.factories import Factories, Guard, default_of, own_returns
from codemod.analysis.grad_mode import IntendedReason
from codemod.analysis.handed_in import called_values
from codemod.analysis.kinds import TENSORISH, Kind
from codemod.analysis.names import Names
from codemod.analysis.project import CallFact, SummaryFact, referenced_elsewhere
from codemod.analysis.saved_for import measured_users, operands
from codemod.analysis.requires_grad import Constants, RequiresGradFacts, may_be_frozen
from codemod.analysis.super_forward import super_torch_layer
from codemod.analysis.syntax import FUNCTIONS, Function, Located, is_const, passed_for, positional, spreads, target_key
from codemod.analysis.tensor_kind import KindFacts, TensorKinds, module_dict_entry, tensor_test, used_as_container

# What an op saves, as the hazard analysis says it: a tuple of "input0", "output"..., or a
# string (its UNSEEN) when it cannot see into the op.
OpFacts = Tuple[str, Union[Tuple[str, ...], str]]
OpOf = Callable[[ast.expr], Optional[OpFacts]]

# What a call runs: a function of this file and a label, a project qualname (another file's), or
# the ``nn.Sequential(...)`` construction of the module called.
Target = Union[Tuple[Function, str], str, ast.Call]
_ALIAS_METHODS = VIEW_METHODS | {"contiguous"}  # the result shares storage with the receiver
# Conversions that return the receiver itself when nothing needs converting (same dtype, device).
_CONVERSIONS = frozenset({"to", "type", "type_as", "float", "double", "half", "bfloat16", "cpu", "cuda"})
_MAX_HOPS = 4  # name -> value steps followed from a return back to the op that made it


class SummaryFacts(KindFacts, Protocol):
    """What this part asks of the model beyond where a node sits and a value's kind: the calls
    (and the project index through them), the module's imports, an annotation's kind, and
    whether code mutates on purpose (``grad_mode``)."""

    @property
    def calls(self) -> Calls: ...

    @property
    def names(self) -> Names: ...

    @property
    def kinds(self) -> TensorKinds: ...

    def intended_reason(self, node: ast.AST, target: Optional[ast.expr]) -> Optional[IntendedReason]: ...


def _basic_index(index: ast.expr) -> bool:
    """Indexing by numbers, slices, ``None`` and ``...`` only: the result is a view."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, ast.Constant) and (p.value is None or p.value is Ellipsis or type(p.value) is int)
               or isinstance(p, ast.Slice) and all(b is None or isinstance(b, ast.Constant) for b in (p.lower, p.upper, p.step))
               or isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant)
               for p in parts)


class Returns(enum.Enum):
    """What a callee returns, as far as its ``return`` statements show."""

    INPUT = "input"  # one of its parameters, as it came in
    VIEW = "view"  # a view of a parameter (shares its storage)
    # the outputs of a multi-view op of torch (``chunk``, ``split``, ``unbind``) splitting a
    # parameter, with grad on: views PyTorch refuses to modify in place (``analysis.views``)
    MULTI_VIEW = "multi-view"
    FRESH = "fresh"  # the result of an op: a new tensor
    # a tuple of slices of one parameter (``return x[:, :c], x[:, c:]``): parts of its memory,
    # one version counter (a write into one breaks what an op saved of another)
    SLICES = "slices"
    UNKNOWN = "unknown"  # several kinds, no return, or something it cannot follow


# What returns a parameter or shares its storage (``returned_input`` says which): the input as it
# came in, a view of it, or the outputs of a multi-view op splitting it.
SHARES_INPUT = (Returns.INPUT, Returns.VIEW, Returns.MULTI_VIEW)
# The torch functions that always return a view of their first argument (the function forms of
# ``torch_api.VIEW_METHODS_ALWAYS``; not ``torch.reshape``/``torch.flatten``, which may copy).
FUNCTION_VIEWS = frozenset(f"torch.{m}" for m in ("diagonal", "narrow", "select", "squeeze", "unsqueeze", "transpose",
                                                  "permute", "movedim", "moveaxis", "swapaxes", "swapdims", "t",
                                                  "unflatten"))


def sliced_parameter(model: "SummaryFacts", func: Function, value: ast.expr, params: List[str]) -> Optional[int]:
    """``return x[:, :c], x[:, c:]``: a tuple of two or more slices (slices, integers, ``...``:
    always views) of one parameter as it came in: which parameter; None for anything else."""
    if not isinstance(value, ast.Tuple) or len(value.elts) < 2:
        return None
    bases = set()
    for item in value.elts:
        if not (isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name)):
            return None
        parts = item.slice.elts if isinstance(item.slice, ast.Tuple) else [item.slice]
        if not all(isinstance(p, ast.Slice) or isinstance(p, ast.Constant) and (p.value is Ellipsis or type(p.value) is int)
                   for p in parts):
            return None
        bases.add(item.value)
    names = {b.id for b in bases}
    if len(names) != 1 or next(iter(names)) not in params:
        return None
    name = names.pop()
    at = cast(ast.stmt, model.statement_of(value))
    reaching = model.reaching(model.flow(func), name, at)
    return params.index(name) if reaching and all(b.form == "param" for b in reaching) else None


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
    # per input saved: the parameters whose gradient needs it saved (its own number where its own
    # gradient does: ``abs``, ``** 2``); None where some save is for what the analysis cannot
    # tie to a parameter (a module's weights, a value made inside), or the input is not saved
    saved_for: Tuple[Optional[Tuple[int, ...]], ...] = ()
    params: Tuple[str, ...] = ()  # the positional parameters' names (self excluded), for keywords
    # per place of the tuple every ``return`` gives (``return self.relu(a), self.relu(b)``): that
    # piece is a result autograd saved (:func:`returned_tuple`); () where a return is no such tuple
    pieces: Tuple[Saved, ...] = ()

    def fact(self, of: str) -> SummaryFact:
        """As plain data for the project index (``of``: "class" or "function")."""
        return SummaryFact(self.name, tuple(i.value for i in self.inputs), self.output.value, self.returns.value,
                           self.returned_input, tuple(sorted(self.mutates)), self.via, of,
                           saved_for=self.saved_for, params=self.params)

    @classmethod
    def from_fact(cls, fact: SummaryFact) -> "Summary":
        return cls(fact.name, tuple(Saved(i) for i in fact.inputs), Saved(fact.output), Returns(fact.returns),
                   fact.returned_input, frozenset(fact.mutates), fact.via, fact.saved_for, fact.params)

    def users_at(self, call: ast.Call, index: int) -> Optional[List[ast.expr]]:
        """What ``call`` passes for the parameters whose gradient needs input ``index`` saved
        (:attr:`saved_for`); None where it is not known or the call hides what it passes."""
        needed = self.saved_for[index] if index < len(self.saved_for) else None
        if needed is None or len(self.params) != len(self.inputs) or spreads(call):
            return None
        found = [passed_for(call, self.params[j], j) for j in needed]
        return None if any(f is None for f in found) else cast(List[ast.expr], found)

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

    def __init__(self, model: SummaryFacts, op_of: OpOf) -> None:
        self.model = model
        self.op_of = op_of
        self._done: Dict[Function, Optional[Summary]] = {}
        self._open: Set[Function] = set()
        # (built_summary) the constructions whose arguments this instance reads its classes' __init__ at, the
        # forward it summarizes so, the one doing so now (``active``), and what they gave
        self.built: Tuple[Tuple[ast.ClassDef, ast.Call], ...] = ()
        self.root: Optional[Function] = None
        self.inner: Optional[Summaries] = None
        self.by_construction: Dict[Tuple[Function, ast.Call], Optional[Summary]] = {}
        self.chains = Chains(model, self)
        self.targets = CallTargets(self)
        self.saved_inputs = InputSaves(self)

    # ---------------------------------------------------------------- call sites
    def of_call(self, call: ast.Call) -> Optional[Summary]:
        """The summary of what ``call`` calls, when it is one of this module's functions or
        an instance of one of its classes, or one imported from another file of the run (the
        project index's summary); None otherwise (or inside a recursive cycle)."""
        found = built_summary(self, self.targets.callee(call), construction(self.targets, call))
        if found is None:
            found = self._common(self.targets.alternatives(call))
        if found is None:
            found = self._some(self.targets.loop_members(call))
        return found

    def _some(self, targets: List["Target"]) -> Optional[Summary]:
        """What a call in a loop over every member of a container runs, turn by turn: its
        output is saved on some turn where one member saves it (every member runs)."""
        found = [self.of_target(t) for t in targets]
        if not found or any(f is None for f in found):
            return None
        every = cast(List[Summary], found)
        if any(len(f.inputs) != len(every[0].inputs) or f.mutates != every[0].mutates for f in every):
            return None
        saving = next((f for f in every if f.output is Saved.YES), None)
        if saving is None:
            return self._common(targets) if len(targets) > 1 else every[0]
        same = len({(f.returns, f.returned_input) for f in every}) == 1
        return Summary(saving.name, tuple(Saved.YES if all(f.inputs[i] is Saved.YES for f in every) else Saved.UNKNOWN
                                          for i in range(len(saving.inputs))),
                       Saved.YES, saving.returns if same else Returns.UNKNOWN, saving.returned_input if same else None,
                       saving.mutates, saving.via, pieces=_met_pieces(every))

    def _common(self, targets: List["Target"]) -> Optional[Summary]:
        """What calling a module built differently on different branches (``self.unit =
        nn.Sequential(conv, bn, act)`` or ``nn.Sequential(conv, act)``) does on every one of
        them: a save proven where each alternative makes it, no save where none does."""
        found = [self.of_target(t) for t in targets]
        if len(found) < 2 or any(f is None for f in found):
            return None
        first = cast(Summary, found[0])
        rest = cast(List[Summary], found[1:])
        if any(len(f.inputs) != len(first.inputs) or f.mutates != first.mutates for f in rest):
            return None

        def meet(values: List[Saved]) -> Saved:
            return values[0] if len(set(values)) == 1 else Saved.UNKNOWN

        every = [first, *rest]
        same = len({(f.returns, f.returned_input) for f in every}) == 1
        return Summary(first.name, tuple(meet([f.inputs[i] for f in every]) for i in range(len(first.inputs))),
                       meet([f.output for f in every]), first.returns if same else Returns.UNKNOWN,
                       first.returned_input if same else None, first.mutates,
                       first.via, pieces=_met_pieces(every))

    def of_target(self, target: Optional["Target"]) -> Optional[Summary]:
        if target is None:
            return None
        if isinstance(target, ast.Call):
            return self.chains.sequential(target)
        if isinstance(target, str):
            index = self.model.calls.project
            fact = index.summary(target) if index is not None else None
            if fact is None and index is not None:
                fact = index.library(target)  # an installed library's (``engine.libraries``)
            return Summary.from_fact(fact) if fact is not None else None
        return self.of_function(target[0], target[1])

    # ---------------------------------------------------------------- callees
    def of_function(self, func: Function, label: str = "") -> Optional[Summary]:
        """The summary of ``func`` (None while it is being summarized: a recursive cycle)."""
        if func in self._done:
            return self._done[func]
        if func in self._open or self.built and func is not self.root \
                and self.model.parent(func) in {cls for cls, _ in self.built}:
            return None  # (another instance of a class read at one construction's arguments: not seen)
        self._open.add(func)
        try:
            found = self._summarize(func, label or func.name)
        finally:
            self._open.discard(func)
        self._done[func] = found
        return found

    def active(self) -> "Summaries":
        """The summaries the model answers with now: the innermost reading of a class at one
        construction's arguments (``built_summary``) while one is made, else these."""
        found = self
        while found.inner is not None:
            found = found.inner
        return found

    def _params(self, func: Function) -> List[str]:
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if plain and plain[0] in ("self", "cls") and isinstance(self.model.parent(func), ast.ClassDef):
            plain = plain[1:]
        return plain

    def _summarize(self, func: Function, label: str) -> Summary:
        params = self._params(func)
        vias: List[str] = []
        inputs = tuple(self.saved_inputs._input_saved(func, p, vias) for p in params)
        returns, index, output = self._returned(func, params, vias)
        if returns in SHARES_INPUT and index is not None and inputs[index] is Saved.YES:
            output = Saved.YES  # it hands back (a view of) an input it saved
        mutates = frozenset(i for i, p in enumerate(params) if self._mutated(func, p))
        saved_for = tuple(self.saved_inputs.users(func, p, params) if s is Saved.YES else None
                          for p, s in zip(params, inputs))
        held = self.saved_inputs.for_held
        if any((func, p) in held for p in params):  # saved for what the object holds: not known to require grad
            inputs = tuple(Saved.UNKNOWN if (func, p) in held else s for p, s in zip(params, inputs))
            saved_for = tuple(None if (func, p) in held else f for p, f in zip(params, saved_for))
        pieces = returned_tuple(self, func, params, [])  # (its saving ops not in the whole call's label)
        return Summary(label, inputs, output, returns, index, mutates, tuple(dict.fromkeys(vias)), saved_for,
                       tuple(params), pieces)

    def reads_only_metadata(self, call: ast.Call, arg: ast.expr) -> bool:
        """``arg`` is passed by position to a function of this file (``max_value(t)``, returning
        ``torch.finfo(t.dtype).max``) that reads the parameter only for its metadata
        (``t.dtype``, ``t.shape``, ``t.size(-1)``): nothing it computes needs the values, so the
        call is no use of them. Not through a decorator, ``*args``, a keyword, or a parameter
        the body binds again or hands on as it is."""
        if spreads(call) or arg not in call.args:
            return False
        if isinstance(call.func, ast.Name) and not any(
                isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == call.func.id
                for s in self.model.module.body):
            return False  # only a function of this file: another file's is not resolved (nor parsed) for this
        target = self.targets.callee(call)
        if not isinstance(target, tuple):
            return False
        func = target[0]
        if (call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", None)) != func.name:
            return False  # a module's forward (its hooks may read the values) or a function under another name
        params = self._params(func)
        index = call.args.index(arg)
        bound = len(params) != len(func.args.posonlyargs) + len(func.args.args)
        if func.decorator_list or func.args.vararg is not None or index >= len(params):
            return False
        if bound and not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                          and call.func.value.id in ("self", "cls")):
            return False  # (`Class.method(t)` would shift the parameters)
        key = params[index]
        nodes = list(ast.walk(func))
        if any(isinstance(n, (ast.Global, ast.Nonlocal)) and key in n.names for n in nodes):
            return False
        names = [n for n in nodes if isinstance(n, ast.Name) and n.id == key]
        return bool(names) and all(
            isinstance(n.ctx, ast.Load) and isinstance(up := self.model.parent(n), ast.Attribute)
            and up.value is n and up.attr in _METADATA and isinstance(up.ctx, ast.Load) for n in names)

    def _from_param(self, func: Function, key: str, node: Located) -> bool:
        """The load ``node`` of ``key`` in ``func`` may read the parameter as it came in."""
        if self.model.owner(node) is not func:
            return False  # a nested function's load: it runs who knows when
        stmt = self.model.statement_of(node)
        return any(b.form == "param" for b in self.model.reaching(self.model.flow(func), key, stmt))

    def _returned(self, func: Function, params: List[str], vias: List[str]) -> Tuple[Returns, Optional[int], Saved]:
        """What ``func`` returns, which parameter for an input or view, and whether autograd
        saved it (as the output of an op that saves its output)."""
        kinds: Set[Tuple[Returns, Optional[int]]] = set()
        outputs: List[Saved] = []  # per return: its value is a result autograd saved
        values = [n.value for n in self.model.walk(func)
                  if isinstance(n, ast.Return) and n.value is not None and self.model.owner(n) is func]
        for value in values:
            outputs.append(Saved.NO)
            split = self._split_parameter(func, value, params)
            if split is not None:
                kinds.add((Returns.MULTI_VIEW, split))
                continue
            sliced = sliced_parameter(self.model, func, value, params)
            if sliced is not None:
                kinds.add((Returns.SLICES, sliced))
                continue
            kind, outputs[-1] = walk_returned(self, func, value, params, vias)
            kinds.add(kind)
        # A saved result where some return hands one back and every other return is seen: a
        # known op whose result is not saved (monai's `w_func`: `reciprocal`, or `ones_like` for
        # another weight type; labelled real by running). Where another return is a call the
        # analysis cannot see into (e3nn's `Norm` returns the product of a layer of another file
        # when squared, `out.relu().sqrt()` otherwise; labelled false), it may be: unknown.
        output = Saved.NO
        if Saved.YES in outputs:
            output = Saved.UNKNOWN if Saved.UNKNOWN in outputs else Saved.YES
        elif Saved.UNKNOWN in outputs:
            output = Saved.UNKNOWN
        if len(kinds) != 1:
            return Returns.UNKNOWN, None, output
        returns, index = kinds.pop()
        return returns, index, output

    def _split_parameter(self, func: Function, value: ast.expr, params: List[str]) -> Optional[int]:
        """``return h.chunk(2, dim=1)`` / ``torch.split(h, n)`` of the parameter ``h`` as it came
        in, with grad on there: which parameter (the caller gets multi-output views of what it
        passes); None for anything else."""
        if not isinstance(value, ast.Call) or self.model.intended_reason(value, None):
            return None
        func_expr = value.func
        name = self.model.torch_name(func_expr)
        base: Optional[ast.expr] = None
        if name is not None:
            args = positional(value)
            base = args[0] if name in torch_api.MULTI_VIEW_FUNCTIONS and args else None
        elif isinstance(func_expr, ast.Attribute) and func_expr.attr in torch_api.MULTI_VIEW_METHODS \
                and func_expr.attr != "__iter__":
            kind = self.model.kind(func_expr.value)
            if kind in TENSORISH or (func_expr.attr != "split" and kind is Kind.UNKNOWN):
                base = func_expr.value  # (`line.split(",")` is a string's)
        if not isinstance(base, ast.Name) or base.id not in params:
            return None
        at = cast(ast.stmt, self.model.statement_of(base))
        reaching = self.model.reaching(self.model.flow(func), base.id, at)
        return params.index(base.id) if reaching and all(b.form == "param" for b in reaching) else None

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
            if isinstance(parent, ast.Call) and parent.func is not node:
                inner = self.of_call(parent)  # add_pos(x, pos), which writes into its input
                index = next((i for i, a in enumerate(positional(parent)) if a is node), None)
                if inner is not None and index is not None and index in inner.mutates:
                    return True
        return False


def _met_pieces(every: Sequence[Summary]) -> Tuple[Saved, ...]:
    """The pieces of the tuple all of ``every`` return (one call runs one of them): a piece saved
    where each saves it, not saved where none does; () where their tuples differ in width."""
    if not every or any(len(f.pieces) != len(every[0].pieces) for f in every):
        return ()
    return tuple(values[0] if len(set(values)) == 1 else Saved.UNKNOWN
                 for values in ([f.pieces[i] for f in every] for i in range(len(every[0].pieces))))


def walk_returned(summaries: "Summaries", func: Function, value: ast.expr, params: List[str],
                  vias: List[str]) -> Tuple[Tuple[Returns, Optional[int]], Saved]:
    """What the returned ``value`` of ``func`` is, followed back through names, views and helpers
    handing their input back to the op that made it: which parameter it is (a view of), or a
    fresh result; and whether autograd saved that result (``vias`` gets the saving op)."""
    expr: ast.expr = value
    view = False
    for _ in range(_MAX_HOPS):
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                and expr.func.attr in _ALIAS_METHODS and not summaries.model.torch_name(expr.func):
            expr, view = expr.func.value, True
            continue
        if isinstance(expr, ast.Subscript) and _basic_index(expr.slice):
            expr, view = expr.value, True  # `return x[0]`, `x[:, :d]`: a view
            continue
        if isinstance(expr, ast.Call) and expr.args and not isinstance(expr.args[0], ast.Starred) \
                and (summaries.model.torch_name(expr.func) or "") in FUNCTION_VIEWS:
            expr, view = expr.args[0], True  # `return torch.diagonal(x, dim1=1, dim2=2)`: a view
            continue
        if isinstance(expr, ast.Name):
            at = cast(ast.stmt, summaries.model.statement_of(expr))
            model = summaries.model
            reaching = summaries.chains.decided.live(func, expr.id, model.reaching(model.flow(func), expr.id, at), at)
            forms = {b.form for b in reaching}
            if "param" in forms and forms <= {"param", "aug"} and expr.id in params:  # x += y; return x
                return (Returns.VIEW if view else Returns.INPUT, params.index(expr.id)), Saved.NO
            if len(reaching) == 1 and reaching[0].form == "assign" and reaching[0].value is not None:
                expr = reaching[0].value
                continue
            return (Returns.UNKNOWN, None), Saved.NO
        inner = summaries.of_call(expr) if isinstance(expr, ast.Call) else None
        if inner is not None and inner.returns in SHARES_INPUT \
                and inner.returned_input is not None and isinstance(expr, ast.Call) \
                and inner.returned_input < len(positional(expr)) and not inner.output is Saved.YES:
            view = view or inner.returns is not Returns.INPUT
            expr = positional(expr)[inner.returned_input]  # helper(x) hands x back
            continue
        if isinstance(expr, ast.Call) and _identity_module(summaries, expr):
            expr = expr.args[0]  # `x = self.lab(x)`, `self.lab = nn.Identity()`: x itself
            continue
        facts = summaries.op_of(expr)
        if facts is None:
            return (Returns.UNKNOWN, None), Saved.NO
        name, saves = facts
        if isinstance(saves, str):  # unseen: it may even hand its input back
            return (Returns.UNKNOWN, None), Saved.UNKNOWN
        if name in torch_api.RETURNS_INPUT_MODULES:  # nn.Identity, a Dropout in eval mode: its input
            return (Returns.UNKNOWN, None), Saved.NO
        if "output" in saves:
            vias.append(f"{name} (line {expr.lineno})")
            return (Returns.FRESH, None), Saved.YES
        return (Returns.FRESH, None), Saved.NO
    return (Returns.UNKNOWN, None), Saved.NO


def _identity_module(summaries: "Summaries", call: ast.Call, depth: int = 0) -> bool:
    """``call`` (one positional argument, nothing spread, no keyword) calls an ``nn.Identity``, which hands
    that argument back itself: ``nn.Identity()(x)``, or ``self.lab(x)`` where every value ``__init__``
    may leave ``self.lab`` (``Decided.final``; a conditional's arms where its test is not decided) is
    one, and nothing outside the class's own ``self.lab = ...`` sets it."""
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        return False
    model = summaries.model
    func = call.func
    if isinstance(func, ast.Call):
        values: Sequence[object] = [func]
    elif isinstance(func, ast.Attribute) and target_key(func) == f"self.{func.attr}" \
            and (cls := model.enclosing_class(func)) is not None and not set_from_outside(model, cls, func.attr) \
            and not any(isinstance(s, FUNCTIONS) and s.name == func.attr for s in cls.body):
        values = decided_values(summaries.chains, func, model.class_attrs(cls).get(func.attr, []))
    else:
        return False
    leaves: List[object] = list(values)
    for _ in range(8):
        arms = [v for v in leaves if isinstance(v, ast.IfExp)]
        if not arms:
            break
        for arm in arms:
            way = summaries.chains.decided.test(arm.test)
            leaves.remove(arm)
            leaves += [arm.body] if way is True else [arm.orelse] if way is False else [arm.body, arm.orelse]
    return bool(leaves) and all(isinstance(v, ast.Call) and not v.args and not v.keywords
                                and model.torch_name(v.func) in ("torch.nn.Identity", "torch.nn.modules.linear.Identity")
                                for v in leaves)


def returned_tuple(summaries: "Summaries", func: Function, params: List[str], vias: List[str]) -> Tuple[Saved, ...]:
    """Per place of the tuple every ``return`` of ``func`` gives (``return self.relu(a),
    self.relu(b)``: displays of one width, no starred piece), whether that piece is a result
    autograd saved (:func:`walk_returned`): yes where some return's piece is and no return's
    piece there is unknown (as for the whole result); () where a return is no such tuple."""
    exits = [n for n in summaries.model.walk(func)
             if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) and summaries.model.owner(n) is func]
    values = [n.value if isinstance(n, ast.Return) else None for n in exits]
    if not values or any(not isinstance(v, ast.Tuple) or any(isinstance(e, ast.Starred) for e in v.elts)
                         for v in values):
        return ()  # (a path returning None, a generator, another value: no pieces known)
    tuples = cast(List[ast.Tuple], values)
    width = len(tuples[0].elts)
    if width < 2 or any(len(v.elts) != width for v in tuples) or not never_falls_off(func.body):
        return ()
    found: List[Saved] = []
    for place in range(width):
        saved = [walk_returned(summaries, func, v.elts[place], params, vias)[1] for v in tuples]
        found.append(Saved.UNKNOWN if Saved.UNKNOWN in saved else Saved.YES if Saved.YES in saved else Saved.NO)
    return tuple(found)


# Attributes and methods that read a tensor's metadata (a Python value): nothing is saved.
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "size", "dim", "numel", "ndimension", "nelement",
                       "is_contiguous", "requires_grad", "is_cuda", "stride"})
# Ops whose index operand must be an integral tensor (``x.index_select(0, idx)``, ``x.gather(1,
# idx)``, ``x.take(idx)``, ``x.scatter_reduce_(0, idx, src, "amin")``): by which argument, in the method form and in the ``torch.`` form.
_INDEX_OPERAND = {"index_select": (1, 2), "gather": (1, 2), "take": (0, 1),
                  # (measured, torch 2.13: "Expected dtype int32/int64 for index")
                  "scatter": (1, 2), "scatter_": (1, 2), "scatter_add": (1, 2), "scatter_add_": (1, 2),
                  "scatter_reduce": (1, 2), "scatter_reduce_": (1, 2)}
# What keeps a floating operand floating: arithmetic (float op anything is floating) and the
# methods that return the receiver's dtype.
_KEEPS_FLOATING = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.Pow)
_SAME_DTYPE_METHODS = frozenset({
    "view", "reshape", "unsqueeze", "squeeze", "flatten", "expand", "expand_as", "contiguous", "permute",
    "transpose", "t", "repeat", "narrow", "select", "flip", "clone", "detach", "clamp", "clamp_min", "abs", "neg",
})


def index_operand(model: SummaryFacts, node: ast.expr) -> bool:
    """``node`` is the index operand of an op that raises unless it is an integral tensor."""
    call = model.parent(node)
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute) or call.func is node:
        return False
    name = model.torch_name(call.func)
    short = (name or "").rsplit(".", 1)[-1] if name else call.func.attr
    at = _INDEX_OPERAND.get(short)
    if at is None or (name is not None and name != f"torch.{short}"):
        return False
    position = at[1] if name is not None else at[0]
    if name is None and model.kind(call.func.value) in (Kind.SCALAR, Kind.OTHER):
        return False  # not a tensor's method
    return (len(call.args) > position and call.args[position] is node) \
        or any(k.arg == "index" and k.value is node for k in call.keywords)


class IndexUse:
    """Whether a function's parameter is shown integral by its use as an index: it reaches, as it
    came in, through arithmetic and dtype-keeping methods (a float operand would stay floating),
    the index operand of ``index_select``/``gather``/``take`` in a statement every normal return
    runs (a top-level statement of the body, no ``return`` before it). A call that returned at all
    was handed an integral tensor there, which never requires grad: what an op that also takes
    integral tensors saved of it breaks no backward (allennlp's ``batched_index_select``)."""

    def __init__(self, model: SummaryFacts) -> None:
        self.model = model

    def integral_param(self, func: Function, key: str) -> bool:
        flow = self.model.flow(func)
        loads = [n for _, n in flow.loads.get(key, []) if isinstance(n, ast.Name)]
        return any(self._param_load(func, key, n) and self._reaches_index(func, n, 0) for n in loads)

    def _param_load(self, func: Function, key: str, node: ast.expr) -> bool:
        if self.model.owner(node) is not func:
            return False
        bindings = self.model.reaching(self.model.flow(func), key, self.model.statement_of(node))
        return bool(bindings) and all(b.form == "param" for b in bindings)

    def _reaches_index(self, func: Function, node: ast.expr, hops: int) -> bool:
        while True:
            if index_operand(self.model, node):
                return self._always_runs(func, node)
            parent = self.model.parent(node)
            if isinstance(parent, ast.BinOp) and isinstance(parent.op, _KEEPS_FLOATING):
                node = parent
            elif isinstance(parent, ast.Subscript) and parent.value is node:
                node = parent
            elif isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _SAME_DTYPE_METHODS \
                    and isinstance(call := self.model.parent(parent), ast.Call) and call.func is parent:
                node = call
            elif isinstance(parent, ast.Assign) and parent.value is node and hops < _MAX_HOPS \
                    and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                return self._through_name(func, parent, parent.targets[0].id, hops + 1)
            else:
                return False

    def _through_name(self, func: Function, assign: ast.Assign, key: str, hops: int) -> bool:
        """``flat = (idx + offsets).view(-1)``: a load of ``flat`` that only this assignment reaches."""
        flow = self.model.flow(func)
        for _, load in flow.loads.get(key, []):
            if not isinstance(load, ast.Name) or self.model.owner(load) is not func:
                continue
            bindings = self.model.reaching(flow, key, self.model.statement_of(load))
            if bindings and all(b.stmt is assign for b in bindings) and self._reaches_index(func, load, hops):
                return True
        return False

    def _always_runs(self, func: Function, node: ast.expr) -> bool:
        stmt = self.model.statement_of(node)
        if not any(s is stmt for s in func.body):
            return False
        up: Optional[ast.AST] = node
        while up is not None and up is not stmt:  # not in a branch of the statement's expression
            if isinstance(up, (ast.IfExp, ast.BoolOp, ast.Lambda, ast.comprehension, ast.ListComp, ast.SetComp,
                               ast.DictComp, ast.GeneratorExp)):
                return False
            up = self.model.parent(up)
        return not any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) and self.model.owner(n) is func
                       and (n.lineno, n.col_offset) < (stmt.lineno, stmt.col_offset) for n in self.model.walk(func))


def _through_copy(model: SummaryFacts, node: ast.expr, op_node: ast.expr) -> bool:
    """Between the load ``node`` and the op reading it, a subscript whose index may copy
    (``basic_index.copying_index``: a piece not known to be an int, a slice, ``None`` or ``...``,
    as ``R[:, i, mask[i]]`` with ``mask`` an integer tensor): the op reads an advanced-index
    copy where it does, and the parameter is saved only where the index makes a view, which
    the hazard analysis asks of a direct read the same way (possible, never proven)."""
    cur: ast.expr = node
    while cur is not op_node:
        parent = model.parent(cur)
        if not isinstance(parent, ast.expr):
            return False
        if isinstance(parent, ast.Subscript) and parent.value is cur and copying_index(model, parent):
            return True
        cur = parent
    return False


def own_method(model: "SummaryFacts", targets: "CallTargets", call: ast.Call) -> Optional[Function]:
    """``self.m(...)`` / ``cls.m(...)`` run ``m``, a method of the class around the call (the call's target,
    not a member module's ``forward``: a module call runs hooks too)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")):
        return None
    target = targets.callee(call)
    if not isinstance(target, tuple) or not isinstance(target[0], FUNCTIONS) or target[0].name != func.attr:
        return None
    cls = model.enclosing_class(call)
    return target[0] if cls is not None and model.parent(target[0]) is cls else None


def helper_of_file_stores_nothing(model: "SummaryFacts", targets: "CallTargets", call: ast.Call) -> Optional[bool]:
    """``call`` runs a function of this file that hands on what it computes from its arguments only through
    its result (``consumed.stores_nothing``; a method of the caller's class through ``self``, with the flags
    the call leaves false: ``consumed.method_stores_nothing``); None where the call runs none of this file."""
    method = own_method(model, targets, call)
    if method is not None:
        return method_stores_nothing(model, call, method, lambda c: own_method(model, targets, c))
    target = targets.callee(call)
    if isinstance(target, tuple):
        return isinstance(model.parent(target[0]), ast.Module) and stores_nothing(model, target[0])
    return None


def dead_ends(summaries: "Summaries") -> Ends:
    """What the summaries' :func:`dead_result` may ask: a helper of this file storing nothing past its call
    (:func:`helper_of_file_stores_nothing`); integral results and unreached writes are the hazard
    analysis's (nothing here)."""
    model, targets = summaries.model, summaries.targets
    return Ends(lambda expr: False, lambda stmt, name: False,
                lambda call: bool(helper_of_file_stores_nothing(model, targets, call)))


class InputSaves:
    """Whether a function's parameter reaches an op that saves it for backward (directly, or through conversions)."""

    def __init__(self, summaries: "Summaries") -> None:
        self.summaries = weakref.proxy(summaries)  # weakly: Summaries owns this part (no cycle)
        self.model = summaries.model
        self.op_of = summaries.op_of
        self.index_use = IndexUse(summaries.model)
        # (function, parameter): saved only for the gradient of what the class holds and shows
        # never requiring grad (``self._z`` bound to a constant tensor): code elsewhere may set it
        self.for_held: Set[Tuple[Function, str]] = set()
        self._constants: Optional[Constants] = None  # callers mode: what the file shows

    def _input_saved(self, func: Function, key: str, vias: List[str]) -> Saved:
        result = Saved.NO
        arg = next((a for a in (*func.args.posonlyargs, *func.args.args) if a.arg == key), None)
        if arg is not None and arg.annotation is not None \
                and self.model.kinds.annotation_kind(arg.annotation) in (Kind.SCALAR, Kind.OTHER):
            return Saved.NO  # `header: dict`: what an op saves is an element, never the argument
        if arg is not None and used_as_container(self.model, ast.Name(id=key), func.body[0]):
            return Saved.NO  # `header.pop(k)`: a dict or a list
        for _, node in self.model.flow(func).loads.get(key, []):
            if not isinstance(node, ast.Name):
                continue
            found = self._consumer(node)  # the cheap questions first: most loads save nothing
            if found is None or self._converts(found[0]):
                if result is Saved.NO and self._handed_on(node) and self.summaries._from_param(func, key, node):
                    result = Saved.UNKNOWN  # what saves the alias may save the input: not followed
                continue
            op_node, index = found
            if isinstance(self.model.parent(op_node), ast.Compare) or dead_result(self.model, node, ends=dead_ends(self.summaries)):
                continue  # `x.abs() > t`, `return m | (b * gp >= 0)`: only compared, so backward never reaches the save
            if _through_copy(self.model, node, op_node):
                result = Saved.UNKNOWN if result is Saved.NO else result
                continue  # `abs(R[:, i, mask[i]])`: the op saves a copy, unless the index makes a view (unknown)
            facts = self.op_of(op_node)
            if facts is None:
                continue
            name, saves = facts
            unseen = isinstance(saves, str)
            if not unseen and f"input{index}" not in saves:
                continue
            if not self.summaries._from_param(func, key, node) or self.model.intended_reason(self.model.statement_of(node), None):
                continue  # another value of the name, or grad off there: nothing is saved
            if unseen:
                if self.model.kind(node) not in (Kind.SCALAR, Kind.OTHER):
                    result = Saved.UNKNOWN  # (a number or a string it passes on cannot be saved)
                continue
            if not self._tensor_operand(node, op_node):
                result = Saved.UNKNOWN  # `coords * s` on what may be a numpy array
                continue
            if name in torch_api.MODULES_WITH_PARAMETERS and isinstance(op_node, ast.Call) \
                    and may_be_frozen(self.model, op_node.func):
                result = Saved.UNKNOWN  # saved for the parameters' gradient, which the file may switch off
                continue
            if op_short(name) in INTEGRAL_OK and self.index_use.integral_param(func, key):
                continue  # an integral index (its use as one shows it): nothing saved requires grad
            vias.append(f"{name} (line {op_node.lineno})")
            return Saved.YES
        return result

    def users(self, func: Function, key: str, params: List[str]) -> Optional[Tuple[int, ...]]:
        """The parameters whose gradient needs parameter ``key`` saved, over every op of ``func``
        that may save it (``saved_for``): its own number for an op whose other operands are
        Python numbers (``abs(w)``, ``w ** 2``), the other operand's for one torch measured to
        save it for that operand only (``w @ m``, ``F.linear(w, m)``, a helper saying so). None
        where one of them is for anything else (a module's weights, a value made inside), or a
        load of ``key`` is not the parameter or a view of it as it came in."""
        found: Set[int] = set()
        own = params.index(key)
        for _, node in self.model.flow(func).loads.get(key, []):
            if not isinstance(node, ast.Name):
                continue
            if self.model.owner(node) is not func:
                return None  # a closure's load
            parent = self.model.parent(node)
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _METADATA:
                continue  # `tensor.dim()`, `tensor.size(-1)`: read, never saved
            found_op = self._consumer(node)
            if (found_op is None or self._converts(found_op[0])) and not self._handed_on(node):
                continue  # (`return tensor`, `tensor[m] = v`): nothing here saves or keeps what the name holds
            if not self._param_or_alias(func, key, node):
                return None  # the name holds something else there
            if found_op is None or self._converts(found_op[0]):
                if not self._rebinds_itself(node, key):
                    return None  # an alias under another name: what saves it is not followed
                continue
            op_node, index = found_op
            facts = self.op_of(op_node)
            if isinstance(self.model.parent(op_node), ast.Compare) or facts is None \
                    or self.model.intended_reason(self.model.statement_of(node), None):
                continue
            name, saves = facts
            if isinstance(saves, str):
                return None
            if f"input{index}" not in saves:
                continue
            users = _op_users(self, op_node, index, name, node)
            if users is None:
                return None
            for user in users:
                user = self._handed(user)
                if within(node, user):
                    found.add(own)
                elif isinstance(user, ast.Name) and user.id in params and self._param_or_alias(func, user.id, user):
                    found.add(params.index(user.id))
                elif not (isinstance(user, ast.Constant) or self.model.kind(user) is Kind.SCALAR
                          or integral_by_operator(user)):  # (`torch.mul(t, ~mask)`: the mask requires no grad)
                    if self._held_constant(user):
                        self.for_held.add((func, key))
                        continue
                    return None  # a value of the function's own: it may require grad
        if any(self.summaries._mutated(func, params[j]) for j in found):
            return None  # a write into it may give it grad (`dx += x_adv - x`): its saves then need more than its caller's grad
        return tuple(sorted(found))

    def _held_constant(self, user: ast.expr) -> bool:
        """``self._z`` (an item or a view of it) where every value the class gives it is constant
        as far as the file shows (``requires_grad.Constants`` in callers mode: a literal tensor, a
        property of the file's class building one, an ``__init__`` argument every call in the file
        passes so): no grad that the file shows, but code elsewhere may set it."""
        base = user
        while isinstance(base, ast.Subscript) or isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) \
                and base.func.attr in _ALIAS_METHODS:
            base = base.value if isinstance(base, ast.Subscript) else cast(ast.Attribute, base.func).value
        if not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self"):
            return False
        if self._constants is None:
            self._constants = Constants(cast(RequiresGradFacts, self.model), callers=True)
        return self._constants.constant(base)

    def _param_or_alias(self, func: Function, key: str, node: ast.expr) -> bool:
        """Every binding of ``key`` reaching ``node`` is the parameter, or ``key = key.view(..)``
        (a view or conversion of its own value: still the parameter's tensor)."""
        reaching = self.model.reaching(self.model.flow(func), key, self.model.statement_of(node))
        return bool(reaching) and all(b.form == "param" or b.form == "assign" and b.value is not None
                                      and _alias_of(b.value, key) for b in reaching)

    def _rebinds_itself(self, node: ast.expr, key: str) -> bool:
        """``key = key.unsqueeze(0)``: the load is handed on to the name itself (its loads are read here)."""
        stmt = self.model.statement_of(node)
        return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
            and stmt.targets[0].id == key and _alias_of(stmt.value, key)

    def _converts(self, op: Union[ast.Call, ast.BinOp]) -> bool:
        """``x.to(torch.float32)``, ``x.float()``: a conversion that hands ``x`` itself back
        when it has that dtype and device already."""
        return isinstance(op, ast.Call) and isinstance(op.func, ast.Attribute) \
            and op.func.attr in _CONVERSIONS and self.model.torch_name(op.func) is None

    def _handed_on(self, node: ast.expr) -> bool:
        """The load ``node`` of a parameter, through views and conversions that may return it
        (``x.to(torch.float32)``), is bound to a name or read by another op: whatever saves
        that alias may save the parameter's tensor (LlamaRMSNorm: ``h = h.to(torch.float32)``,
        then ``h.pow(2)``)."""
        converted = False
        while True:
            parent = self.model.parent(node)
            if isinstance(parent, ast.Subscript) and parent.value is node:
                node = parent
                continue
            if isinstance(parent, ast.Attribute) and parent.value is node \
                    and parent.attr in _ALIAS_METHODS | _CONVERSIONS:
                call = self.model.parent(parent)
                if isinstance(call, ast.Call) and call.func is parent:
                    converted = converted or parent.attr in _CONVERSIONS
                    node = call
                    continue
            break
        parent = self.model.parent(node)
        if isinstance(parent, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and parent.value is node:
            return True
        return converted and self._consumer(node) is not None

    def _tensor_operand(self, node: ast.expr, op_node: Union[ast.Call, ast.BinOp]) -> bool:
        """The saved operand is a tensor: known to be one, or handed to a torch function or a
        torch module, whose inputs are."""
        if self.model.kind(node) in TENSORISH:
            return True
        if isinstance(op_node, ast.BinOp):  # x * self.weight: a tensor product, if x is any array
            other = op_node.right if self._consumer_side(node, op_node) == 0 else op_node.left
            return self.model.kind(other) in TENSORISH
        if isinstance(op_node, ast.Call) and self.summaries.of_call(op_node) is not None:
            return True  # a summarized callee (a loop's member too): it said what it saves of a tensor passed in
        if isinstance(op_node, ast.Call) and isinstance(op_node.func, (ast.Name, ast.Attribute)):
            return self.model.torch_name(op_node.func) is not None or self.model.kind(op_node.func) is Kind.MODULE \
                or super_torch_layer(self.model, op_node) is not None  # `super().forward(x)` of a torch layer's subclass
        return False

    def _consumer_side(self, node: ast.expr, op: ast.BinOp) -> int:
        """0 when ``node`` (or a view of it) is the left operand of ``op``, else 1."""
        cur: Optional[ast.AST] = node
        while cur is not None and cur is not op:
            if cur is op.left:
                return 0
            cur = self.model.parent(cur) if isinstance(cur, ast.expr) else None
        return 1

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
            if isinstance(parent, ast.Call) and parent.func is not node and self.hands_back(parent, node) is Returns.INPUT:
                node = parent  # `torch.max(array(a), b)`, `array` handing a tensor back as it came
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


    def _handed(self, operand: ast.expr) -> ast.expr:
        """``array(a)`` of a helper handing its argument back as it came (:meth:`hands_back`): ``a``."""
        while isinstance(operand, ast.Call):
            inner = next((a for a in positional(operand) if self.hands_back(operand, a) is Returns.INPUT), None)
            if inner is None:
                break
            operand = inner
        return operand

    def hands_back(self, call: ast.Call, arg: ast.expr) -> Optional[Returns]:
        """``call`` runs a function of the file or the run whose summary says it returns what it is
        given as ``arg`` (its position), as it came (``Returns.INPUT``) or a view of it
        (``Returns.VIEW``), its result no output autograd saved; None otherwise."""
        plain = positional(call)
        if spreads(call) or not any(a is arg for a in plain):
            return None
        passed = _tensor_passthrough(self.model, self.summaries.targets, call)
        if passed is not None:
            return Returns.INPUT if passed < len(plain) and plain[passed] is arg else None
        summary = self.summaries.of_call(call)
        if summary is None or summary.returns not in (Returns.INPUT, Returns.VIEW) or summary.output is Saved.YES \
                or summary.returned_input is None or summary.returned_input >= len(plain) \
                or plain[summary.returned_input] is not arg:
            return None
        return summary.returns


def _op_users(saves: "InputSaves", op_node: Union[ast.Call, ast.BinOp], index: int, name: str,
              node: ast.expr) -> Optional[List[ast.expr]]:
    """The operands of the op reading ``node`` (as input ``index``) whose gradient needs it saved."""
    method = isinstance(op_node, ast.Call) and isinstance(op_node.func, ast.Attribute) \
        and saves.model.torch_name(op_node.func) is None and saves.summaries.of_call(op_node) is None \
        and (within(node, op_node.func.value) or saves.model.kind(op_node.func.value) in TENSORISH)
    found = operands(op_node, method) if not isinstance(op_node, ast.Call) or not spreads(op_node) else None
    if found is None or any(isinstance(k.value, ast.expr) and k.arg is None for k in getattr(op_node, "keywords", [])):
        return None
    others = [o for o in found if not within(node, o)] + [k.value for k in getattr(op_node, "keywords", [])]
    if all(isinstance(o, ast.Constant) or saves.model.kind(o) is Kind.SCALAR for o in others) \
            and (isinstance(op_node, ast.BinOp) or saves.model.torch_name(op_node.func) is not None or method):
        return [o for o in found if within(node, o)]  # `abs(w)`, `w ** 2`: its own gradient only
    if isinstance(op_node, ast.Call) and (summary := saves.summaries.of_call(op_node)) is not None:
        return summary.users_at(op_node, index)
    if isinstance(op_node, ast.Call) and saves.model.torch_name(op_node.func) is None and not method:
        return None
    return measured_users(name, index, op_node, method)


def _alias_of(value: ast.expr, key: str) -> bool:
    while not isinstance(value, ast.Name):
        if isinstance(value, ast.Subscript) and _basic_index(value.slice):
            value = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in _ALIAS_METHODS | _CONVERSIONS:
            value = value.func.value
        else:
            return False
    return value.id == key


def _tensor_passthrough(model: SummaryFacts, targets: "CallTargets", call: ast.Call) -> Optional[int]:
    """``array(x)`` of a function of this file whose every return is ``x if torch.is_tensor(x)
    else torch.tensor(x)`` (or ``isinstance(x, torch.Tensor)``), ``x`` a parameter it never
    binds again: a tensor it is given comes back as it came (the other arm gets what is no
    tensor, which no op saved and no write reaches as the caller's tensor). Its position."""
    target = targets.callee(call)
    func = target[0] if isinstance(target, tuple) else None
    if not isinstance(func, FUNCTIONS) or func.args.vararg is not None:
        return None
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    returns = [n.value for n in model.walk(func) if isinstance(n, ast.Return) and model.owner(n) is func]
    found = {r.body.id if isinstance(r, ast.IfExp) and isinstance(r.body, ast.Name)
             and tensor_test(r.test, model.torch_name) == r.body.id else None for r in returns}
    if len(found) != 1 or None in found:
        return None
    name = found.pop()
    if name not in params or params[:1] == ["self"] \
            or any(b.form != "param" for b in model.flow(func).bindings.get(name, [])):
        return None
    return params.index(name)



class CallTargets:
    """What a call runs: a function or class of this file (a module instance's forward), or a name imported from another."""

    def __init__(self, summaries: "Summaries") -> None:
        self.summaries = weakref.proxy(summaries)  # weakly: Summaries owns this part (no cycle)
        self.model = summaries.model
        self._top: Optional[Dict[str, ast.stmt]] = None  # the module's top-level definitions by name
        self.loops = LoopMembers(self)
        self.factories = FactoryTargets(self)

    def callee(self, call: ast.Call) -> Optional["Target"]:
        """A function of this file (a module instance's ``forward``) and a label, or another file's qualname."""
        func = call.func
        if isinstance(func, ast.Call):  # Block(d)(x)
            return self._class_target(func)
        if isinstance(func, ast.Subscript):  # self.convs[i](x): any member, when they all run one forward
            members = self._members(func.value)
            found = {self._class_target(m) for m in members} if members else {self._members_target(func.value)}
            return found.pop() if len(found) == 1 else None
        key = target_key(func)
        if key is None:
            return None
        if key.count(".") == 1 and (static := self.model.static_function(func)) is not None:
            return static, static.name  # `f = staticmethod(f)` in a class body: the module's `f`
        if key.startswith("self.") and key.count(".") == 1:
            cls_node = self.model.enclosing_class(func)
            if cls_node is None:
                return None
            attr = key[5:]
            method = next((s for s in cls_node.body if isinstance(s, FUNCTIONS) and s.name == attr), None)
            if method is not None and not injected.abstract(method):  # (abstract: the subclasses define it)
                return method, f"{cls_node.name}.{attr}"
            if set_through_another_receiver(self.model, attr):
                return None  # `unit.body = Other()`: what the attribute holds is not the class's alone
            values = decided_values(self.summaries.chains, func, last_set(self.model, self.model.class_attrs(cls_node).get(attr, [])))
            if (handed := injected_targets(self, cls_node, attr, values)) is not None:  # `self.fn = fn`
                return handed[0] if len(handed) == 1 else None  # (several: ``alternatives``)
            return self._instance_target([v for v in values if isinstance(v, ast.expr)], len(values))
        if key.startswith("self.") and key.count(".") == 2:
            return self._member_target(func, key)
        if "." in key:
            return module_function(self.model, func) if key.count(".") == 1 else None
        owner = self.model.owner(func)
        bound = self.model.flow(owner).bindings.get(key)
        if not bound and owner is not self.model.module:
            imports, assigned = self.model.names.module_names()
            index = self.model.calls.project
            if key not in imports and key not in assigned and (
                    index is None or index.imported(self.model.calls.module_name, key) is None):
                return None  # a builtin, or a name bound nowhere here (the module's flow is not walked)
            bound = self.model.flow(self.model.module, nested=False).bindings.get(key)  # a global (bindings alone)
        top = self._top_level().get(key)
        if isinstance(top, FUNCTIONS) and all(b.form == "def" for b in bound or []):
            return top, top.name
        if bound and all(b.form == "def" for b in bound) and top is None:
            return imported_target(self.model, key, "function")  # from .helpers import scale
        if bound and all(b.form == "for" and b.value is not None for b in bound):
            targets = {self._members_target(b.value) for b in bound if b.value is not None}
            return targets.pop() if len(targets) == 1 else None  # for block in self.blocks
        if bound and len(bound) == 1 and bound[0].form == "param" and isinstance(owner, FUNCTIONS):
            passed = called_values(self.model, self.model.calls, owner, key)  # `def step(vae, x): vae(x)`
            return self._instance_target(passed, len(passed)) if passed else None
        if bound:
            built = [b.value for b in bound if b.form == "assign" and b.value is not None]
            return self._instance_target(built, len(bound))
        return None

    def _member_target(self, func: ast.expr, key: str) -> Optional["Target"]:
        member = self.member_class(func, key)
        if member is None:
            return None
        name = key.split(".")[2]
        method = next((s for s in member.body if isinstance(s, FUNCTIONS) and s.name == name), None)
        if method is not None:
            return method, f"{member.name}.{name}"
        inner = self.member_values(member, name)
        if inner is None:
            return None
        return self._instance_target([v for v in inner if isinstance(v, ast.expr)], len(inner))

    def member_values(self, member: ast.ClassDef, name: str) -> Optional[List[object]]:
        """What ``member`` sets ``self.<name>`` to; None where a base class of the file may set it."""
        if any(isinstance(b, ast.Name) and isinstance(self._top_level().get(b.id), ast.ClassDef) for b in member.bases) \
                or set_from_outside(self.model, member, name):
            return None
        return list(self.model.class_attrs(member).get(name, []))

    def member_class(self, func: ast.expr, key: str) -> Optional[ast.ClassDef]:
        """``self.ae`` of ``self.ae.embed(x)``: set only to instances of one class of this file (no
        subclass of it here): that class (the call runs its method, or its ``self.<name>`` module)."""
        cls_node = self.model.enclosing_class(func)
        if cls_node is None:
            return None
        attr = key.split(".")[1]
        values = self.model.class_attrs(cls_node).get(attr, [])
        built = [v for v in values if isinstance(v, ast.expr)]
        if not built or len(built) != len(values) or not all(
                isinstance(v, ast.Call) and isinstance(v.func, ast.Name) for v in built):
            return None
        classes = {self._top_level().get(cast(ast.Name, cast(ast.Call, v).func).id) for v in built}
        member = classes.pop() if len(classes) == 1 else None
        if not isinstance(member, ast.ClassDef) or any(
                isinstance(s, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == member.name for b in s.bases)
                for s in self.model.module.body):
            return None
        return member

    def alternatives(self, call: ast.Call) -> List["Target"]:
        """``self.unit(x)``, ``self.unit`` set on branches (or by constructions) to modules with targets: those."""
        key = target_key(call.func)
        cls = self.model.enclosing_class(call.func) if key is not None else None
        if key is None or cls is None or not key.startswith("self.") or key.count(".") != 1 \
                or any(isinstance(s, FUNCTIONS) and s.name == key[5:] and not injected.abstract(s) for s in cls.body):
            return []
        values = decided_values(self.summaries.chains, call.func, self.model.class_attrs(cls).get(key[5:], []))
        if (handed := injected_targets(self, cls, key[5:], last_set(self.model, values))) and len(handed) > 1:
            return handed  # `self.fn = fn`, the constructions passing several modules
        targets = [self._class_target(v) if isinstance(v, ast.expr) else None for v in values]
        if len(values) < 2 or any(t is None for t in targets):
            return []
        return list(dict.fromkeys(cast(List[Target], targets)))

    def loop_members(self, call: ast.Call) -> List["Target"]:
        """What a call in a loop (or a list comprehension) over layers runs: :class:`LoopMembers`."""
        return self.loops.members(call)

    def _members(self, container: ast.expr) -> Optional[List[ast.expr]]:
        """The modules ``self.convs`` holds: set once to ``nn.ModuleList()``, ``nn.ModuleList([...])`` or a list,
        then given more only by ``self.convs.append(m)`` in ``__init__`` (a name bound once: its value)."""
        key = target_key(container)
        cls = self.model.enclosing_class(container)
        if key is None or not key.startswith("self.") or key.count(".") != 1 or cls is None:
            return None
        cls = self._setter(cls, key[5:])
        values = self.model.class_attrs(cls).get(key[5:], [])
        if len(values) != 1 or not isinstance(values[0], ast.expr):
            return None
        value = values[0]
        if isinstance(value, ast.Call) and self.model.torch_name(value.func) in _MODULE_LISTS \
                and not value.keywords and len(value.args) <= 1:
            value = value.args[0] if value.args else ast.List(elts=[], ctx=ast.Load())
        if not isinstance(value, (ast.List, ast.Tuple)) or any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        if self._changed(cls, key[5:], appends=True):
            return None
        calls = self.model.calls_in(cls)
        found = list(value.elts)
        for append in calls.get(f"{key}.append", []):
            owner = self.model.owner(append)
            if not (isinstance(owner, FUNCTIONS) and owner.name == "__init__" and len(append.args) == 1
                    and not append.keywords and isinstance(self.model.parent(append), ast.Expr)):
                return None
            found.append(append.args[0])
        resolved = []
        for member in found:
            if isinstance(member, ast.Name):
                flow = self.model.flow(self.model.owner(member))
                reaching = self.model.reaching(flow, member.id, self.model.statement_of(member))
                if len(reaching) != 1 or reaching[0].form != "assign" or reaching[0].value is None:
                    return None
                member = reaching[0].value
            resolved.append(member)
        return resolved

    def _changed(self, cls: ast.ClassDef, attr: str, appends: bool) -> bool:
        """The file may change what ``self.<attr>`` of ``cls`` holds after it is set: an item
        assigned or deleted (``self.blocks[-1] = nn.Linear(...)``, ``net.blocks[0] = ...``), the
        attribute set from outside, or a call that adds, removes or replaces members anywhere
        (``self.blocks.append(m)`` of the class itself left to the caller where ``appends``)."""
        if set_from_outside(self.model, cls, attr):
            return True
        own = self.model.calls_in(cls)
        for callee, calls in self.model.calls_in(self.model.module).items():
            method = (callee or "").rsplit(".", 1)[-1]
            if method not in _MUTATORS or not (callee or "").endswith(f".{attr}.{method}"):
                continue  # (not `<x>.<attr>.append(...)` and the like)
            if appends and callee == f"self.{attr}.append" and len(own.get(callee, [])) == len(calls):
                continue
            return True
        return False

    def _one_class(self, container: ast.expr) -> ast.expr:
        """A member of ``self.blocks`` built of one class's instances (a comprehension, or a list ``append`` filled)."""
        key = cast(str, target_key(container))
        attr, _, entry = key[5:].partition(".")  # `self.blocks`, or `self.transformer.h` (a ModuleDict's)
        cls = self._setter(cast(ast.ClassDef, self.model.enclosing_class(container)), attr)
        values: List[object] = list(self.model.class_attrs(cls)[attr])
        if entry:
            values = module_dict_entry(values, entry, self.model.torch_name,
                                       "dict" in self.model.flow(self.model.module).bindings) or []
        first = (value := cast(ast.Call, values[0])).args[0]  # `nn.ModuleList(layers)`: what `layers` is given
        listed = self.summaries.chains.listed.values(value, first) if isinstance(first, ast.Name) else None
        return _first_member(self.model.torch_name, value, listed)

    def _setter(self, cls: ast.ClassDef, attr: str) -> ast.ClassDef:
        """The class that sets ``self.<attr>``: ``cls``, or where ``cls`` never sets it, its one
        base class of the file that does (a few levels up: ``PAFPN(FPN)`` reads FPN's layers)."""
        for _ in range(4):
            if attr in self.model.class_attrs(cls) or len(cls.bases) != 1 or not isinstance(cls.bases[0], ast.Name) \
                    or any((key or "").startswith(f"self.{attr}.") for key in self.model.calls_in(cls)):
                return cls  # (a subclass that appends to the base's list: its own reading, which fails)
            base = self._top_level().get(cls.bases[0].id)
            if not isinstance(base, ast.ClassDef):
                return cls
            cls = base
        return cls

    def _members_target(self, container: ast.expr) -> Optional["Target"]:
        """What every member of ``self.blocks`` runs, when it was built as
        ``nn.ModuleList([Block(d) for _ in range(n)])`` (or a list, or a Sequential, of
        instances of one class)."""
        key = target_key(container)
        cls = self.model.enclosing_class(container)
        if key is None or not key.startswith("self.") or key.count(".") not in (1, 2) or cls is None:
            return None
        attr, _, entry = key[5:].partition(".")  # `self.blocks`, or `self.transformer.h` of a ModuleDict
        cls = self._setter(cls, attr)
        values: Optional[List[object]] = list(self.model.class_attrs(cls).get(attr, []))
        if self._changed(cls, attr, appends=False) or entry and self._changed(cls, entry, appends=False):
            return None
        if entry:
            values = module_dict_entry(values or [], entry, self.model.torch_name,
                                       "dict" in self.model.flow(self.model.module).bindings)
        targets: Set[Optional[Target]] = set()
        for value in values or [None]:
            if not (isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))
                    and self.model.torch_name(value.func) in _CONTAINERS and len(value.args) == 1
                    and not value.keywords):
                return None
            arg = value.args[0]
            listed = self.summaries.chains.listed.values(value, arg) if isinstance(arg, ast.Name) else None
            if (built := member_comprehension(self.model.torch_name, value)) is not None:
                targets.add(self._class_target(built.elt))
            elif isinstance(arg, (ast.List, ast.Tuple)) and arg.elts:
                targets.update(self._class_target(e) for e in arg.elts)
            elif listed:  # `layers = []`, `layers.append(Block(d))` in a loop, `nn.ModuleList(layers)`
                targets.update(self._class_target(e) for e in listed)
            else:
                return None
        return targets.pop() if len(targets) == 1 else None

    def _instance_target(self, values: List[ast.expr], count: int) -> Optional["Target"]:
        """The forward of the one class all ``values`` build (``LayerNorm(d)``), if they do."""
        targets = {self._class_target(v) for v in values}
        if not values or len(values) != count or len(targets) != 1:
            return None
        return targets.pop()

    def _class_target(self, value: ast.expr) -> Optional["Target"]:
        """``LayerNorm(d)``: the forward of that class, of this file or imported;
        ``nn.Sequential(a, b)``: that chain."""
        if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) \
                and self.model.torch_name(value.func) in _SEQUENTIAL and not value.keywords \
                and (value.args and not any(isinstance(a, ast.Starred) for a in value.args)
                     or self.summaries.chains.listed.members(value) is not None):
            return value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and (imported := module_function(self.model, value.func, "class")) is not None:
            return imported  # `helpers.Block(d)`: that module of the run's class
        if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Name):
            return self.factories.of_method(value) if isinstance(value, ast.Call) else None
        found = self._top_level().get(value.func.id)
        if isinstance(found, ast.FunctionDef):
            return self.factories.target(found)  # `dws_block(c)`, whose every return is `Block(c)`
        if isinstance(found, ast.ClassDef):
            return self._forward(found)
        if found is None:
            return imported_target(self.model, value.func.id, "class")
        return None

    def forward_of(self, cls: ast.ClassDef) -> Optional[Tuple[Function, str]]:
        """What calling an instance of ``cls`` runs: its ``forward`` (or a base class's)."""
        return self._forward(cls)

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


def imported_target(model: SummaryFacts, name: str, of: str) -> Optional[str]:
    """What ``name`` is imported as from the run's files, where the index summarizes it so."""
    index = model.calls.project
    if index is None:
        return None  # a file checked alone: its own definitions only
    module = model.calls.module_name
    qual = index.imported(module, name)
    fact = index.summary(qual) if qual is not None else None
    if qual is None:  # from an installed library (``from timm.layers import Mlp``)
        qual = index.library_name(module, name)
        fact = index.library(qual) if qual is not None else None
    return qual if fact is not None and fact.of == of else None


def module_function(model: SummaryFacts, func: ast.expr, of: str = "function") -> Optional["Target"]:
    """``helpers.act(x)``: ``helpers`` bound once, at the module's top only, to a module of
    the run (``import helpers``, ``helpers = import_module("helpers")``): that module's
    function ``act``, as ``from helpers import act`` names it; None where a function binds
    the name (a parameter, a local: any object) or the top binds it more than once. With
    ``of`` "class": ``helpers.Block`` of ``helpers.Block(d)``, that module's class."""
    index = model.calls.project
    if index is None or not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return None
    head = func.value.id
    if any(isinstance(a, FUNCTIONS) and head in model.flow(a).bindings for a in model.ancestors(func)):
        return None
    if len(model.flow(model.module, nested=False).bindings.get(head, [])) != 1:
        return None
    module = index.imported(model.calls.module_name, head)
    if module is None or module not in index.modules:
        return None
    qual = f"{module}.{func.attr}"
    fact = index.summary(qual)
    return qual if fact is not None and fact.of == of else None


def injected_targets(targets: CallTargets, cls: ast.ClassDef, attr: str, values: Sequence[object]
                     ) -> Optional[List["Target"]]:
    """``self.fn = fn`` of a constructor parameter (``analysis.injected``): the targets of what
    every construction passes, each a chain or an instance of a class of the project; None where
    one is anything else or unseen, or the attribute is set from outside."""
    model = targets.model
    chains = targets.summaries.chains
    setter = targets._setter(cls, attr) if not values else cls
    if setter is not cls:  # `self.loss_fn` stored by a base class's constructor
        cls, values = setter, last_set(model, model.class_attrs(setter).get(attr, []))
    if not values:  # a template method's hook, which the subclasses define
        found_methods = injected.overrides(model, cls, attr, lambda c: not used_elsewhere(model, chains, c, False))
        return [(m, f"{c.name}.{attr}") for m, c in found_methods] if found_methods else None
    found = passed_values(model, chains, cls, attr, values)
    called = [passed_target(targets, e) for e in found or ()]
    if not called or any(t is None for t in called):
        return None
    return list(dict.fromkeys(cast(List[Target], called)))


def passed_values(model: SummaryFacts, chains: "Chains", cls: ast.ClassDef, attr: str, values: Sequence[object]
                  ) -> Optional[List[ast.expr]]:
    """``self.fn = fn`` of a constructor parameter (``analysis.injected``): what every construction
    of ``cls`` passes for it (an expression of this file, or an ``injected.Foreign`` of another
    file's), or what each factory handed in builds where the parameter is called (``self.net =
    make_net(i, o)``); None where one is unseen, or the attribute is set from outside. One answer
    for what the call of the attribute runs (``injected_targets``), what it saves (``hazard``) and
    whether it keeps what it returns (``kept``)."""
    stored = injected.stored_parameter(model, cls, values, attr)
    if stored is None or set_from_outside(model, cls, attr):
        return None
    found = injected.passed(model, stored, chains._param_values, built_unseen(model, chains, cls))
    if found is not None and stored.called:  # `self.net = make_net(i, o)`: what each factory handed in builds
        made = [injected.made(e) for e in found]
        return None if any(m is None for m in made) else cast(List[ast.expr], made)
    return found


def handed_values(targets: CallTargets, func: ast.expr) -> Optional[List[ast.expr]]:
    """``self.fn`` of ``self.fn(x)`` where ``self.fn = fn`` stores a constructor parameter (also
    in a base class's constructor): what every construction passes for it (``passed_values``),
    None where that is not known or the class defines a method of that name."""
    model = targets.model
    key = target_key(func)
    cls = model.enclosing_class(func) if key is not None else None
    if key is None or cls is None or not key.startswith("self.") or key.count(".") != 1 \
            or any(isinstance(s, FUNCTIONS) and s.name == key[5:] for s in cls.body) \
            or set_through_another_receiver(model, key[5:]):
        return None
    attr = key[5:]
    values = last_set(model, model.class_attrs(cls).get(attr, []))
    setter = targets._setter(cls, attr) if not values else cls
    if setter is not cls:  # `self.loss_fn` stored by a base class's constructor
        cls, values = setter, last_set(model, model.class_attrs(setter).get(attr, []))
    return passed_values(model, targets.summaries.chains, cls, attr, values) if values else None


def passed_target(targets: CallTargets, passed: ast.expr) -> Optional["Target"]:
    """What calling a passed value runs: a module built there (``_class_target``), or a
    function of the file handed by name (``Residual(block_fn)``: called as it is, no ``self``);
    from another file (``injected.Foreign``), an instance of a project class or a project
    function by name, as the index summarizes them."""
    if isinstance(passed, injected.Foreign):
        index = targets.model.calls.project
        want = {"new": "class", "def": "function"}.get(passed.kind)
        fact = index.summary(passed.name) if index is not None and want is not None else None
        return index.canonical(passed.name) if index is not None and fact is not None and fact.of == want else None
    if not isinstance(passed, ast.Name):
        return targets._class_target(passed)
    found = targets._top_level().get(passed.id)
    return (found, found.name) if isinstance(found, FUNCTIONS) else None


def built_unseen(model: SummaryFacts, chains: "Chains", cls: ast.ClassDef) -> Callable[[ast.ClassDef], bool]:
    """Whether another file may build a class of ``cls``'s family with arguments no index fact
    shows: it names the class other than to call it (it may derive from it), or calls it where
    ``Chains._param_values`` does not follow those calls (a subclass that neither keeps the
    constructor, ``keeping_init``, nor defines its own)."""
    keeping = set(keeping_init(model, cls))

    def unseen(c: ast.ClassDef) -> bool:
        own = any(isinstance(f, FUNCTIONS) and f.name == "__init__" for f in c.body)
        return used_elsewhere(model, chains, c, calls=not (c.name in keeping or own))
    return unseen


def used_elsewhere(model: SummaryFacts, chains: "Chains", cls: ast.ClassDef, calls: bool) -> bool:
    """Another file of the run names ``cls`` other than to build it (it may derive from it), or
    at all where ``calls``; in a library, anyone may. A file checked alone shows every class."""
    if chains.callers_unseen:
        return True
    index = model.calls.project
    module = model.calls.module_name
    qual = index.canonical(f"{module}.{cls.name}") if index is not None else ""
    return index is not None and (referenced_elsewhere(index, qual, module)
                                  or calls and bool(index.calls_in_other_modules(qual, module)))


class FactoryTargets:
    """What a call of a module-building function of the file makes (a factory), and what a
    chain of layers hands its input to (its first member)."""

    def __init__(self, targets: "CallTargets") -> None:
        self.targets = weakref.proxy(targets)  # weakly: CallTargets owns this part (no cycle)
        self._reading: Set[ast.AST] = set()  # factory functions being read (a cycle is cut)

    def first_member(self, chain: ast.Call, called: Optional[ast.expr] = None) -> Optional["Target"]:
        """What an ``nn.Sequential(a, b)`` chain hands its input to: the forward of its first
        member, where that member is placed and built by one known class (or a factory of one),
        and the file changes no member of what holds the chain (``members_changed``: the name it
        is stored under, and ``called``, the name of the call that runs it): ``self.body[0] =
        Plain(c)`` in any method, ``net.body.insert(0, m)``, ``setattr(self.body, "0", m)`` (a chain
        built empty and filled by ``add_module`` is read so by ``ListedLayers``)."""
        model = self.targets.model
        stored = model.parent(chain)
        words = {target_key(t) for t in getattr(stored, "targets", [getattr(stored, "target", None)]) if t is not None}
        words.add(target_key(called) if called is not None else None)
        built_by_adds = not chain.args and not chain.keywords  # `ListedLayers._added_modules` reads every use
        if not built_by_adds and any(members_changed(model, word.rsplit(".", 1)[-1]) for word in words if word):
            return None
        members = self.targets.summaries.chains.listed.members(chain)
        return self.targets._class_target(members[0]) if members else None

    def of_method(self, call: ast.Call) -> Optional["Target"]:
        """``self._make_stem(c)``, ``Net.block(c)``: what the method it runs builds, where
        nothing else may run in its place (``analysis.factories``), as :meth:`target` reads it."""
        builder = self.targets.summaries.chains.factories.callee(call)
        return self.target(builder) if isinstance(builder, ast.FunctionDef) else None

    def target(self, func: ast.FunctionDef) -> Optional["Target"]:
        """What a factory function of this file builds, where every ``return`` of its own body
        (one at least, no ``yield``) builds the same thing: one class of this file (``return
        Block(c, k=3)``) or, from its only ``return``, one ``nn.Sequential(...)`` chain (``return
        nn.Sequential(conv, bn, nn.ReLU(inplace=True))``). A path that returns nothing hands
        back None, which no caller can call. Factories calling factories are not followed."""
        if func in self._reading:
            return None
        returns = own_returns(func)
        if returns is None:
            return None
        built: Set[object] = set()
        self._reading.add(func)
        try:
            for ret in returns:
                value = ret.value
                if not (isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute))):
                    return None
                if isinstance(value.func, ast.Name) and isinstance(self.targets._top_level().get(value.func.id), FUNCTIONS):
                    return None  # another factory
                target = self.targets._class_target(value)
                if target is None or isinstance(target, ast.Call) and len(returns) != 1:
                    return None
                built.add(target)
        finally:
            self._reading.discard(func)
        return cast("Target", built.pop()) if len(built) == 1 else None


class LoopMembers:
    """What a call runs where its callee is the variable of a loop over a class's layers."""

    def __init__(self, targets: "CallTargets") -> None:
        self.targets = weakref.proxy(targets)  # weakly: CallTargets owns this part (no cycle)
        self.model = targets.model
        self._early: Dict[ast.For, bool] = {}  # loop -> a turn may end early

    def members(self, call: ast.Call) -> List["Target"]:
        """``conv(x)`` in ``for conv in self.convs:`` (or ``for i, conv in
        enumerate(self.convs)``), a statement of the loop's own body in a loop that leaves no
        turn early: every member of ``self.convs`` runs it. The members' targets, when each
        member has one (empty otherwise): see :meth:`_members`."""
        func = call.func
        if not isinstance(func, ast.Name):
            return []
        bound = self.model.flow(self.model.owner(call)).bindings.get(func.id, [])
        loop = bound[0].stmt if len(bound) == 1 else None
        generator = self.model.parent(loop) if isinstance(loop, ast.expr) else None
        if isinstance(loop, ast.For):
            statement = self.model.statement_of(call)
            if not any(statement is s for s in loop.body) or self._leaves_early(loop):
                return []
        elif not (isinstance(generator, ast.comprehension) and generator.target is loop and not generator.ifs
                  and not generator.is_async and self._list_of(generator, call)):
            return []  # `[conv(x) for conv in self.convs]`: the element of a list, built for every member
        head = loop if isinstance(loop, ast.For) else cast(ast.comprehension, generator)
        target, container = head.target, self._named_iterator(head.iter)
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(container, ast.Call) \
                and self._builtin_call(container, "enumerate") and len(container.args) == 1:
            target, container = target.elts[1], self._named_iterator(container.args[0])
        if isinstance(target, ast.Name) and target.id == func.id:
            members = self.targets._members(container)
            same = False
            if members is None and self.targets._members_target(container) is not None:
                members = [self.targets._one_class(container)]  # `nn.ModuleList([Block(d) for d in dims])`
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts) \
                and [cast(ast.Name, e).id for e in target.elts].count(func.id) == 1:
            at = [cast(ast.Name, e).id for e in target.elts].index(func.id)
            members, same = self._unpacked_members(container, at, len(target.elts))
        else:
            return []
        targets = [self.targets._class_target(m) for m in members or []]
        if not targets or any(t is None for t in targets) or same and len(set(targets)) != 1:
            return []
        return list(dict.fromkeys(cast(List[Target], targets)))

    def _named_iterator(self, iterable: ast.expr) -> ast.expr:
        """``blocks`` of ``blocks = zip(self.encs, self.decs)`` (or ``enumerate(...)``), bound once in
        the function and read only by this loop: that call, which the loop runs over as if written
        there; ``iterable`` itself otherwise."""
        if not isinstance(iterable, ast.Name):
            return iterable
        flow = self.model.flow(self.model.owner(iterable))
        bound = flow.bindings.get(iterable.id, [])
        value = bound[0].value if len(bound) == 1 and bound[0].form == "assign" else None
        if value is None or iterable.id in flow.declared or not isinstance(bound[0].stmt, ast.Assign) \
                or len(bound[0].stmt.targets) != 1 or not isinstance(bound[0].stmt.targets[0], ast.Name) \
                or not (self._builtin_call(value, "zip") or self._builtin_call(value, "enumerate")) \
                or [use for _, use in flow.loads.get(iterable.id, [])] != [iterable] \
                or self.model.range(bound[0].stmt)[1] > self.model.range(iterable)[0]:
            return iterable
        return value

    def _list_of(self, generator: ast.comprehension, call: ast.Call) -> bool:
        """``call`` is the element of a list comprehension of the one ``generator``."""
        comp = self.model.parent(generator)
        return isinstance(comp, ast.ListComp) and comp.generators == [generator] and comp.elt is call

    def _builtin_call(self, node: ast.expr, name: str) -> bool:
        """``enumerate(...)`` / ``zip(...)``: the builtin, called with plain positional arguments."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name \
            and not node.keywords and not any(isinstance(a, ast.Starred) for a in node.args) \
            and name not in self.model.flow(self.model.module).bindings

    def _unpacked_members(self, container: ast.expr, at: int, width: int) -> Tuple[Optional[List[ast.expr]], bool]:
        """What the name at place ``at`` of a loop target of ``width`` names runs, turn by turn:
        ``for attn, ff in self.layers`` where every row of ``self.layers`` is a
        ``nn.ModuleList([a, b])`` (or list, tuple) of that width: the rows' members at ``at``;
        ``for conv, norm in zip(self.convs, self.norms)``: the members of ``self.convs`` (zip
        stops at the shortest, so not every member may run: the bool asks that they all run
        the same code). None when a row cannot be read."""
        if self._builtin_call(container, "zip"):
            zipped = cast(ast.Call, container)
            if len(zipped.args) != width:
                return None, True
            members = self.targets._members(zipped.args[at])
            if members is None and self.targets._members_target(zipped.args[at]) is not None:
                # `nn.ModuleList([Block(d) for _ in range(n)])`: one class for every member
                members = [self.targets._one_class(zipped.args[at])]
            return members, True
        rows = self.targets._members(container)
        if rows is None:
            return None, False
        found = []
        for row in rows:
            if isinstance(row, ast.Call) and self.model.torch_name(row.func) in _MODULE_LISTS \
                    and len(row.args) == 1 and not row.keywords:
                row = row.args[0]
            if not isinstance(row, (ast.List, ast.Tuple)) or len(row.elts) != width \
                    or any(isinstance(e, ast.Starred) for e in row.elts):
                return None, False
            found.append(row.elts[at])
        return found, False

    def may_run_once(self, loop: ast.AST) -> bool:
        """Whether ``loop`` may make fewer than two whole turns, for what the analysis sees: its
        length is seen below two (:meth:`length`), or it may leave a turn early; or it runs over
        a collection whose length is not seen (a class's layers built ``range(n)`` times, a
        list handed in). A counted loop over steps the analysis cannot count (``for t in
        range(steps)``, ``while``) is a recurrence, taken to repeat."""
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            return False
        length = self.length(loop.iter)
        if length is not None:
            return length < 2 or self._leaves_early(cast(ast.For, loop))
        iterable = loop.iter
        if self._builtin_call(iterable, "enumerate") and len(cast(ast.Call, iterable).args) == 1:
            iterable = cast(ast.Call, iterable).args[0]
        return not self._builtin_call(iterable, "range")

    def length(self, iterable: ast.expr) -> Optional[int]:
        """How many items ``iterable`` yields, where the code shows it: a list or tuple written
        out, ``range`` of integer literals, ``enumerate``/``zip`` of such, or a class's layers
        ``self.blocks`` set once to a list written out (and appended to only by plain statements
        of ``__init__``) or to ``nn.ModuleList([Block() for _ in range(4)])``."""
        if isinstance(iterable, (ast.List, ast.Tuple)):
            return None if any(isinstance(e, ast.Starred) for e in iterable.elts) else len(iterable.elts)
        if self._builtin_call(iterable, "range") and 1 <= len(cast(ast.Call, iterable).args) <= 3:
            bounds = [a.value for a in cast(ast.Call, iterable).args
                      if isinstance(a, ast.Constant) and type(a.value) is int]
            if len(bounds) == len(cast(ast.Call, iterable).args) and bounds[2:] != [0]:
                return len(range(*bounds))
            return None
        if self._builtin_call(iterable, "enumerate") and len(cast(ast.Call, iterable).args) == 1:
            return self.length(cast(ast.Call, iterable).args[0])
        if self._builtin_call(iterable, "zip") and cast(ast.Call, iterable).args:
            lengths = [self.length(a) for a in cast(ast.Call, iterable).args]
            return None if any(n is None for n in lengths) else min(cast(List[int], lengths))
        return self._layers_length(iterable)

    def _layers_length(self, container: ast.expr) -> Optional[int]:
        """:meth:`length` of ``self.blocks``, a class's layers."""
        if self.targets._members_target(container) is not None:  # one class, built by a comprehension
            value = self.model.class_attrs(self.targets._setter(
                cast(ast.ClassDef, self.model.enclosing_class(container)), cast(str, target_key(container))[5:]))
            built = [v for v in value.get(cast(str, target_key(container))[5:], [])]
            arg = member_comprehension(self.model.torch_name, built[0]) if len(built) == 1 else None
            if arg is not None and len(arg.generators) == 1 and not arg.generators[0].ifs:
                return self.length(arg.generators[0].iter)
        members = self.targets._members(container)
        if members is None:
            return None
        cls = cast(ast.ClassDef, self.model.enclosing_class(container))
        appends = self.model.calls_in(cls).get(f"{target_key(container)}.append", [])
        if any(not isinstance(self.model.parent(cast(ast.AST, self.model.parent(a))), FUNCTIONS) for a in appends):
            return None  # an append in a loop or a branch: it may run any number of times
        return len(members)

    def _leaves_early(self, loop: ast.For) -> bool:
        """A turn of ``loop`` may end before its last statement (``break``, ``continue``, ...)."""
        if loop not in self._early:
            self._early[loop] = any(isinstance(n, (ast.Break, ast.Continue, ast.Return, ast.Raise, ast.Yield))
                                    for s in loop.body for n in ast.walk(s))
        return self._early[loop]


# In-place activation modules whose in-place form saves its result for backward (measured with
# torch by tests/test_summaries.py: writing into the result then breaks backward). The others
# with an ``inplace=`` option (ReLU6, Hardtanh, Hardswish, SiLU, Mish, Dropout...) save nothing
# of it. (Torch facts belong in ``torch_api``; this one waits for its generator to measure it.)
INPLACE_SAVES_RESULT = frozenset({
    "torch.nn.ReLU", "torch.nn.LeakyReLU", "torch.nn.ELU", "torch.nn.SELU", "torch.nn.CELU", "torch.nn.RReLU",
})
_MAX_BUILT = 3  # classes read at one construction's arguments inside one another


def built_summary(summaries: Summaries, target: Optional["Target"], built: Optional[ast.Call]) -> Optional[Summary]:
    """What calling the instance ``built`` makes (``ConvBNAct(c, use_lab=False)``, a class of the file
    with its own ``__init__``) does, where the class's summary leaves something unknown because
    its constructions differ (``self.act = nn.ReLU() if use_act else nn.Identity()``, ``use_act``
    False in another): its forward read again with ``__init__``'s parameters at what ``built``
    passes (its defaults where it passes nothing; what an argument may hold as the file's other
    constructions say, ``Chains.values``), by summaries of their own (``active`` while they
    work: the hazard analysis's op facts ask them). Another instance of that class met inside is
    not seen. ``target``'s summary otherwise."""
    plain = summaries.of_target(target)
    if plain is None or built is None or not isinstance(target, tuple) or not isinstance(built.func, ast.Name) \
            or spreads(built) or len(summaries.built) >= _MAX_BUILT \
            or Saved.UNKNOWN not in (plain.output, *plain.inputs) and plain.returns is not Returns.UNKNOWN:
        return plain
    func, label = target
    cls = summaries.model.parent(func)
    if not isinstance(cls, ast.ClassDef) or cls.name != built.func.id \
            or summaries.targets._top_level().get(built.func.id) is not cls \
            or not any(isinstance(f, FUNCTIONS) and f.name == "__init__" for f in cls.body):
        return plain
    key = (func, built)
    if key not in summaries.by_construction:
        summaries.by_construction[key] = None  # (a cycle: not seen)
        inner = Summaries(summaries.model, summaries.op_of)
        inner.built, inner.root = (*summaries.built, (cls, built)), func
        inner.chains.callers_unseen = summaries.chains.callers_unseen
        summaries.inner = inner
        try:
            summaries.by_construction[key] = inner.of_function(func, label)
        finally:
            summaries.inner = None
    return summaries.by_construction[key] or plain


def _built_param(chains: "Chains", func: Function, param: str, depth: int,
                 values: Callable[[ast.expr, int], Optional[FrozenSet[object]]]
                 ) -> Optional[Tuple[Optional[FrozenSet[object]]]]:
    """(what ``param`` of ``func`` may hold,) where ``func`` is the ``__init__`` of a class the summaries
    read at one construction (``built_summary``): what that call passes, or the default where it passes
    nothing; None where ``func`` is no such ``__init__``."""
    cls = chains.model.parent(func)
    built = next((call for c, call in chains.summaries.built if c is cls), None) if func.name == "__init__" else None
    if built is None:
        return None
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)][1:]
    if param in plain:
        passed = passed_for(built, param, plain.index(param))
        i = plain.index(param) + 1 - (len(args.posonlyargs) + len(args.args) - len(args.defaults))
        default = args.defaults[i] if i >= 0 else None
    elif param in (kw := [a.arg for a in args.kwonlyargs]):
        passed, default = passed_for(built, param, None), args.kw_defaults[kw.index(param)]
    else:
        return (None,)  # (`*args`, `**kw`)
    given = passed if passed is not None else default
    return (values(given, depth + 1) if given is not None else None,)


def construction(targets: CallTargets, call: ast.Call) -> Optional[ast.Call]:
    """``self.agg(x)`` where ``__init__`` leaves ``self.agg`` one construction of a class of the file
    (``self.agg = ConvBNAct(c, use_act=False)``, ``Decided.final`` on branches): that call."""
    key = target_key(call.func)
    model = targets.model
    cls = model.enclosing_class(call.func)
    if key is None or cls is None or not key.startswith("self.") or key.count(".") != 1 \
            or set_through_another_receiver(model, key[5:]):
        return None
    values = decided_values(targets.summaries.chains, call.func,
                            last_set(model, model.class_attrs(cls).get(key[5:], [])))
    value = values[0] if len(values) == 1 else None
    return value if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else None


def decided_values(chains: "Chains", func: ast.expr, values: Sequence[object]) -> Sequence[object]:
    """``self.agg`` of several values (``if agg == 'se': self.agg = ...`` / ``else: ...``): those
    ``__init__`` may leave it where the constructions decide its tests (``Decided.final``: the one
    branch every instance takes); ``values`` where they do not, or where ``__init__`` may return
    early (``if plain: return`` before a later ``self.agg = ...``: ``final`` does not read returns)."""
    if len(values) < 2 or not isinstance(func, ast.Attribute):
        return values
    cls = chains.model.enclosing_class(func)
    init = next((f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == "__init__"), None) if cls else None
    if init is None or any(isinstance(n, ast.Return) and chains.model.owner(n) is init for n in chains.model.walk(init)):
        return values
    final = chains.decided.final(func)
    return values if not final else final


def last_set(model: SummaryFacts, values: Sequence[object]) -> Sequence[object]:
    """``self.pos = nn.Conv1d(...)``, ``self.pos = weight_norm(self.pos)``, ``self.pos =
    nn.Sequential(self.pos, act)``: where every value a class gives an attribute is set by one
    method, the last of them in that method's own body (not in a branch, a loop or an inner
    function; no ``return`` before it) is what the object holds once that method has run.
    Else ``values``."""
    if len(values) < 2 or not all(isinstance(v, ast.expr) for v in values):
        return values
    statements: List[ast.Assign] = []
    for value in values:
        stmt = model.parent(cast(ast.expr, value))
        if not (isinstance(stmt, ast.Assign) and stmt.value is value and len(stmt.targets) == 1):
            return values
        statements.append(stmt)
    last = max(statements, key=lambda s: (s.lineno, s.col_offset))
    method = model.parent(last)
    if not (isinstance(method, FUNCTIONS) and any(s is last for s in method.body)
            and all(model.owner(s) is method for s in statements)):
        return values
    if any(isinstance(n, ast.Return) and n.lineno < last.lineno and model.owner(n) is method
           for n in ast.walk(method)):
        return values  # `if cheap: self.pos = conv; return` leaves the earlier value
    return [last.value]


_SEQUENTIAL = ("torch.nn.Sequential", "torch.nn.modules.container.Sequential")
# Reparametrizations that return the module they are given (its forward unchanged but for how
# its weight is computed): what it saves of its input is that module's.
_RETURNS_ITS_MODULE = (
    "torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
    "torch.nn.utils.parametrizations.weight_norm", "torch.nn.utils.parametrizations.spectral_norm",
    "torch.nn.utils.parametrizations.orthogonal",
)
_MODULE_LISTS = ("torch.nn.ModuleList", "torch.nn.modules.container.ModuleList")
_CONTAINERS = (*_SEQUENTIAL, *_MODULE_LISTS)


def _first_member(torch_name: Callable[[ast.expr], Optional[str]], value: ast.Call,
                  listed: Optional[List[ast.expr]]) -> ast.expr:
    """A member of the one class ``value`` (a container call) holds: the comprehension's element, the
    first of a list filled by appends (``listed``), or the display's first."""
    built = member_comprehension(torch_name, value)
    return built.elt if built is not None else listed[0] if listed else cast(ast.List, value.args[0]).elts[0]


def member_comprehension(torch_name: Callable[[ast.expr], Optional[str]],
                         value: object) -> Optional[Union[ast.ListComp, ast.GeneratorExp]]:
    """The comprehension whose element builds every member of the container call ``value``:
    ``nn.ModuleList([Block(d) for d in dims])`` (or ``nn.Sequential`` of a list comprehension, as read
    before), and ``nn.ModuleList(Block(d) for d in dims)``: a ModuleList stores every module of any
    iterable it is given, a generator's as a list's (``nn.Sequential`` refuses a generator: no module).
    None for any other value."""
    if not (isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords):
        return None
    arg, name = value.args[0], torch_name(value.func)
    if isinstance(arg, ast.ListComp) and name in _CONTAINERS:
        return arg
    return arg if isinstance(arg, ast.GeneratorExp) and name in _MODULE_LISTS else None
# The methods that add, remove or replace a container's members (list, ModuleList, Sequential).
_MUTATORS = frozenset({"append", "extend", "insert", "__setitem__", "__delitem__", "__iadd__", "pop", "remove",
                       "clear", "add_module", "register_module", "reverse", "sort"})
_MAX_DEPTH = 4  # constructor arguments followed through this many calls (Block(inplace=...) passed down)


def _saves_result_either_way(module: str) -> bool:
    """The torch module saves its result whether it runs in place or not (``nn.ReLU``)."""
    return module in INPLACE_SAVES_RESULT and "output" in (op_saves(module) or ())


def func_name(call: ast.Call) -> str:
    return call.func.id if isinstance(call.func, ast.Name) else ""


def op_saves(name: str) -> Optional[Tuple[str, ...]]:
    """What the torch op or module ``name`` saves, measured by version counters where the
    generator did (``OP_SAVES_MEASURED``), else by grad_fn (``OP_SAVES``); None: no data."""
    measured = torch_api.OP_SAVES_MEASURED.get(name)
    return measured if measured is not None else torch_api.OP_SAVES.get(name)


class Feeder(NamedTuple):
    """What feeds a member of a chain of layers (``nn.Sequential(a, b, c)``, ``[conv, act]``)."""

    kind: Literal["caller", "saved", "unsaved", "unseen"]
    layer: Optional[ast.expr]  # the member that saved it (or that could not be seen into)
    name: str  # its module name, for messages ("" when it has none)
    in_place: bool  # "saved": the member ran in place and saved its result (its input)


class Chains:
    """Chains of layers and the ``inplace=`` values that flow into their members."""

    def __init__(self, model: SummaryFacts, summaries: Summaries) -> None:
        self.model = model
        self.summaries = weakref.proxy(summaries)  # weakly: Summaries owns this part (no cycle)
        self._sequentials: Dict[ast.Call, Summary] = {}
        self.listed = ListedLayers(model)
        self.decided = Decided(model, self)
        chains = weakref.proxy(self)  # the lambda holds this part weakly: no cycle through its closure
        self.factories = Factories(model, self.decided.test, lambda expr: chains.values(expr, 0))
        self.built = BuiltLayers(model, self)
        self.chosen = ChosenLayers(model, self.decided.test, lambda expr: chains.values(expr, 0))
        # An installed library's file: its classes and functions are built and called by code
        # it does not show, so no parameter's value is known from its default or its own calls.
        self.callers_unseen = False
        self._flag: Optional[Tuple[Optional[ast.AST]]] = None  # flag_set_after, once found

    def sequential(self, chain: ast.Call) -> Summary:
        """What calling ``nn.Sequential(a, b, c)`` (its members written out) saves: its input
        when the first member saves it, its output when the member feeding the end does."""
        cached = self._sequentials.get(chain)
        if cached is not None:
            return cached
        members = self.listed.members(chain) or [ast.Constant(None)]
        end = self.feeder(members, len(members))
        output = {"saved": Saved.YES, "unsaved": Saved.NO}.get(end.kind, Saved.UNKNOWN)
        first = self._layer_value(members[0])
        first_saved = Saved.UNKNOWN
        if isinstance(first, ast.Call):
            name = self.model.torch_name(first.func)
            if name is not None and name.startswith("torch.nn."):
                module = f"torch.nn.{name.rsplit('.', 1)[-1]}"
                saves = op_saves(module)
                in_place = self.runs_in_place(first, name)
                if in_place and module in INPLACE_SAVES_RESULT:
                    first_saved = Saved.YES
                elif saves is not None and in_place is False:
                    first_saved = Saved.YES if "input0" in saves else Saved.NO
            else:
                inner = self._summary_of_instance(first)
                if inner is not None and inner.inputs:
                    first_saved = inner.inputs[0]
        via = (f"{end.name} (line {end.layer.lineno})",) if output is Saved.YES and end.layer is not None else ()
        found = Summary("nn.Sequential", (first_saved,), output,
                        Returns.FRESH if end.kind in ("saved", "unsaved") else Returns.UNKNOWN,
                        None, frozenset(), via)
        self._sequentials[chain] = found
        return found

    def around(self, layer: ast.Call) -> Optional[Tuple[List[ast.expr], int, bool]]:
        """The members of the chain ``layer`` is written in, its index, and whether the chain
        is a whole ``nn.Sequential`` (else a list literal, part of a longer chain)."""
        parent = self.model.parent(layer)
        if isinstance(parent, ast.Call) and any(a is layer for a in parent.args) \
                and self.model.torch_name(parent.func) in _SEQUENTIAL:
            members = positional(parent)
            return members, next((i for i, a in enumerate(members) if a is layer), -1), True
        if isinstance(parent, ast.List) and not any(isinstance(e, ast.Starred) for e in parent.elts):
            return list(parent.elts), next(i for i, a in enumerate(parent.elts) if a is layer), False
        previous = self._appended_before(layer)
        if previous is not None:
            return [previous, layer], 1, False
        return None

    def _appended_before(self, layer: ast.Call) -> Optional[ast.expr]:
        """``layers.append(prev)``, the last statement before ``layers.append(layer)`` that
        touches ``layers`` (out of an ``if`` whose body it starts, too)."""
        call = self.model.parent(layer)
        if not (isinstance(call, ast.Call) and call.args == [layer] and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append"):
            return None
        holder = target_key(call.func.value)
        parent = self.model.parent(call)
        if holder is None or not isinstance(parent, ast.Expr):
            return None
        stmt: ast.stmt = parent
        root = holder.split(".")[0]
        while True:
            block = self.model.parent(stmt)
            body = next((b for b in (getattr(block, f, None) for f in ("body", "orelse"))
                         if isinstance(b, list) and any(s is stmt for s in b)), None)
            if body is None:
                return None
            at = next(i for i, s in enumerate(body) if s is stmt)
            for before in reversed(body[:at]):
                if not any(isinstance(n, ast.Name) and n.id == root for n in ast.walk(before)):
                    continue  # does not touch the list
                if isinstance(before, ast.If) and not before.orelse and before.body:
                    if self.decided.test(before.test) is False:
                        continue  # `if use_sig:` that no construction of the file takes: it adds nothing
                    before = before.body[-1]  # `if act: layers.append(act_layer)`: the path that adds it
                if isinstance(before, ast.Expr) and isinstance(before.value, ast.Call) and len(before.value.args) == 1 \
                        and isinstance(before.value.func, ast.Attribute) and before.value.func.attr == "append" \
                        and target_key(before.value.func.value) == holder:
                    return before.value.args[0]
                return None
            if not isinstance(block, ast.If):
                return None  # the start of a loop body or a function: what ran before is not one statement
            stmt = block

    def feeder(self, members: List[ast.expr], index: int) -> Feeder:
        """Walks back from ``members[index]`` to the member whose output it receives; in-place
        members that save nothing hand their input on unchanged, so the walk goes past them. A
        member that is one of several layers (``ChosenLayers``) is what the walk finds for each
        of them, where that agrees."""
        before = members[:max(index, 0)]
        for at in range(len(before) - 1, -1, -1):
            member = before[at]
            choices = self.chosen.choices(member)
            if choices is not None:
                return self._either(before[:at], choices, member)
            layer = self._layer_value(member)
            if not isinstance(layer, ast.Call):
                return Feeder("unseen", None, "", False)
            name = self.model.torch_name(layer.func) or param_class(self, layer)
            built = self.built.modules(layer) if name is None else None
            if built is not None:
                fed = [self._torch_feeder(member, cls, in_place) for cls, in_place in built]
                kinds = {f.kind if f is not None else None for f in fed}
                if len(kinds) == 1 and kinds & {"saved", "unsaved"}:
                    names = " or ".join(dict.fromkeys(f.name for f in fed if f is not None))
                    return Feeder(kinds.pop(), member, f"{self.built.label(layer)} ({names})", False)  # type: ignore[arg-type]
                return Feeder("unseen", member, "", False)
            if name is None or not name.startswith("torch.nn."):
                summary = self._summary_of_instance(layer)
                if summary is None or summary.output is Saved.UNKNOWN:
                    return Feeder("unseen", member, summary.name if summary else "", False)
                if summary.output is Saved.YES:
                    return Feeder("saved", member, summary.label, False)
                if summary.returns is Returns.INPUT and not summary.mutates:
                    continue  # hands its input on
                return Feeder("unsaved", member, summary.name, False)
            found = self._torch_feeder(member, name, self.runs_in_place(layer, name))
            if found is None:
                continue  # saves nothing of it, and hands its input on
            return found
        return Feeder("caller", None, "", False)

    def _either(self, before: List[ast.expr], choices: List[ast.expr], member: ast.expr) -> Feeder:
        """What feeds the member after ``before`` + one of ``choices``: the walk's answer where it
        is the same for every choice (each saves its output: saved, whichever is built);
        unseen where they differ."""
        found = [self.feeder([*before, choice], len(before) + 1) for choice in choices]
        kinds = {f.kind for f in found}
        if len(kinds) != 1 or "unseen" in kinds:
            return Feeder("unseen", member, "", False)
        kind = kinds.pop()
        if kind == "caller":
            return Feeder("caller", None, "", False)
        names = " or ".join(dict.fromkeys(f.name for f in found if f.name))
        return Feeder(kind, member, names, all(f.in_place for f in found))

    def _torch_feeder(self, member: ast.expr, name: str, in_place: Optional[bool]) -> Optional[Feeder]:
        """What the torch module ``name`` (running in place or not: ``in_place``, None where not
        known) hands the next member; None where it runs in place, saves nothing of its input
        and hands it on."""
        module = f"torch.nn.{name.rsplit('.', 1)[-1]}"
        if in_place is None:  # (a ReLU saves its result in place or not)
            return Feeder("saved" if _saves_result_either_way(module) else "unseen", member, module, False)
        if in_place:
            if module in INPLACE_SAVES_RESULT:
                return Feeder("saved", member, module, True)
            if module in torch_api.INPLACE_PARAM_CALLABLES:
                return None
        saves = op_saves(module)
        if saves is None:
            return Feeder("unseen", member, module, False)
        return Feeder("saved" if "output" in saves else "unsaved", member, module, False)

    def _summary_of_instance(self, layer: ast.Call) -> Optional[Summary]:
        return built_summary(self.summaries, self.summaries.targets._class_target(layer), layer)

    def _layer_value(self, member: ast.expr, depth: int = 0) -> Optional[ast.expr]:
        """``conv2d`` bound once to ``nn.Conv2d(...)`` -> that call; a call -> itself;
        ``self.pos`` set before in the same function (``self.pos = nn.Conv1d(...)``) -> what
        reaches; a wrapper that hands its module back (``weight_norm(conv)``) -> the module."""
        if depth > 4:
            return None
        if isinstance(member, ast.Call) and self.model.torch_name(member.func) in _RETURNS_ITS_MODULE \
                and member.args and not isinstance(member.args[0], ast.Starred):
            return self._layer_value(member.args[0], depth + 1)
        key = target_key(member) if isinstance(member, (ast.Name, ast.Attribute)) else None
        if key is not None and (isinstance(member, ast.Name) or (key.startswith("self.") and key.count(".") == 1)):
            flow = self.model.flow(self.model.owner(member))
            bindings = self.model.reaching(flow, key, self.model.statement_of(member))
            if len(bindings) == 1 and bindings[0].form == "assign" and bindings[0].value is not None:
                return self._layer_value(bindings[0].value, depth + 1)
            return None
        return member

    def runs_in_place(self, layer: ast.Call, name: Optional[str] = None) -> Optional[bool]:
        """Whether the module built by ``layer`` runs in place: its ``inplace=`` argument,
        followed through constructor parameters and defaults; None when it cannot tell."""
        name = name or self.model.torch_name(layer.func) or param_class(self, layer) or ""
        index = torch_api.INPLACE_PARAM_CALLABLES.get(f"torch.nn.{name.rsplit('.', 1)[-1]}")
        if index is None:
            return False
        if flag_set_after(self) is not None:
            return None  # `self.act.inplace = False` after it is built: not what the constructor says
        value = next((k.value for k in layer.keywords if k.arg == "inplace"), None)
        if value is None and len(layer.args) > index and not any(isinstance(a, ast.Starred) for a in layer.args[:index + 1]):
            value = layer.args[index]
        if value is None and not any(k.arg is None for k in layer.keywords):
            return False
        values = self.values(value, 0) if value is not None else self.built.spread_flags(layer)
        if values is None or len(values) != 1:
            return None
        return next(iter(values)) is True

    def values(self, expr: ast.expr, depth: int) -> Optional[FrozenSet[object]]:
        """The constants ``expr`` may hold: a literal; a parameter's default and what the
        visible calls pass for it (``Block(inplace=False)``); ``self.x`` set from such.
        None when something else may flow in."""
        if isinstance(expr, ast.Constant):
            return frozenset({expr.value})
        if depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            cls = self.model.enclosing_class(expr)
            assigned = self.model.class_attrs(cls).get(expr.attr, []) if cls is not None else []
            return self._union([self.values(v, depth + 1) if isinstance(v, ast.expr) else None for v in assigned])
        if not isinstance(expr, ast.Name):
            return None
        owner = self.model.owner(expr)
        bindings = self.model.reaching(self.model.flow(owner), expr.id, self.model.statement_of(expr))
        found: List[Optional[FrozenSet[object]]] = []
        for b in bindings:
            if b.form == "param" and isinstance(owner, FUNCTIONS):
                found.append(self._param_values(owner, expr.id, depth))
            elif b.form == "assign" and b.value is not None:
                found.append(self.values(b.value, depth + 1))
            else:
                found.append(None)
        return self._union(found)

    def _param_values(self, func: Function, param: str, depth: int,
                      values: Optional[Callable[[ast.expr, int], Optional[FrozenSet[object]]]] = None
                      ) -> Optional[FrozenSet[object]]:
        """A parameter's default and the values the file's calls pass for it (a constructor's
        calls are the class's: ``Block(...)``). Callers in other files are not seen: with no
        call here, the default is what the file shows (not in a library: anyone may call it)."""
        if self.callers_unseen:
            return None
        args = func.args
        plain = [a.arg for a in (*args.posonlyargs, *args.args)]
        default: Optional[ast.expr] = None
        if param in plain:
            i = plain.index(param) - (len(plain) - len(args.defaults))
            default = args.defaults[i] if i >= 0 else None
        else:
            kw = [a.arg for a in args.kwonlyargs]
            default = args.kw_defaults[kw.index(param)] if param in kw else None
        parent = self.model.parent(func)
        if isinstance(parent, ast.ClassDef) and func.name == "__init__":
            callee = parent.name
        elif parent is self.model.module:
            callee = func.name
        else:
            return None
        if plain and plain[0] in ("self", "cls") and isinstance(parent, ast.ClassDef):
            plain = plain[1:]
        position = plain.index(param) if param in plain else None
        values = values or self.values
        found: List[Optional[FrozenSet[object]]] = []
        sites = construction_sites(self.model, parent) if isinstance(parent, ast.ClassDef) \
            else self.model.calls_in(self.model.module).get(callee, [])
        if sites is None:
            return None
        elsewhere: Optional[List[CallFact]] = []  # what the run's other files pass, as written
        for name in keeping_init(self.model, parent) if isinstance(parent, ast.ClassDef) else [callee]:
            found_there = _calls_elsewhere(self.model, name)  # (a subclass keeping it: its constructions too)
            if found_there is None or elsewhere is None:
                return None
            elsewhere += found_there
        assert elsewhere is not None
        found += [_passed_elsewhere(c, param, position, default, lambda e: values(e, depth + 1)) for c in elsewhere]
        for site in sites:
            if spreads(site):
                return None
            passed = passed_for(site, param, position)
            if passed is None:
                found.append(values(default, depth + 1) if default is not None else None)
            else:
                found.append(values(passed, depth + 1))
        if not found:
            found.append(values(default, depth + 1) if default is not None else None)
        return self._union(found)

    @staticmethod
    def _union(found: List[Optional[FrozenSet[object]]]) -> Optional[FrozenSet[object]]:
        if not found or any(f is None for f in found):
            return None
        out: FrozenSet[object] = frozenset()
        for f in found:
            assert f is not None
            out |= f
        return out


_OBJECT = ast.Ellipsis  # a value that is never None: a container literal, a module or object built by a call
_UNSET = ast.Pass  # an attribute not yet assigned


class ChosenLayers:
    """A chain's member that is one of several layers: the branches of a conditional, a name
    bound on ``if``/``else`` branches, an entry of a dict of module instances (``Chains.feeder``
    walks each)."""

    def __init__(self, model: SummaryFacts, test: Callable[[ast.expr], Optional[bool]],
                 values: Callable[[ast.expr], Optional[FrozenSet[object]]]) -> None:
        self.model = model
        self.test = test  # ``Decided.test``: the way a condition always goes, None where not known
        self.values = values  # ``Chains.values``: the constants an expression may be, None where not known

    def choices(self, member: ast.expr, depth: int = 0) -> Optional[List[ast.expr]]:
        """The layers a member of a chain may be where it is one of several: the branches of a
        conditional expression (the one its test always takes where ``Decided.test`` says so),
        the values of a name's bindings that reach it (``if``/``else`` branches), followed
        through names bound to such. None where the member is one value (or any binding that
        reaches is no assignment: a parameter, a loop variable: the walk then says unseen)."""
        if depth > 4:
            return None
        value: Optional[ast.expr] = member
        if isinstance(member, (ast.Name, ast.Attribute)):
            key = target_key(member)
            if key is None or not (isinstance(member, ast.Name) or (key.startswith("self.") and key.count(".") == 1)):
                return None
            bindings = self.model.reaching(self.model.flow(self.model.owner(member)), key,
                                           self.model.statement_of(member))
            if not bindings or not all(b.form == "assign" and b.value is not None for b in bindings):
                return None
            if len(bindings) > 1:
                return [c for b in bindings for c in (self.choices(cast(ast.expr, b.value), depth + 1)
                                                      or [cast(ast.expr, b.value)])]
            value = bindings[0].value
        if isinstance(value, (ast.Name, ast.Attribute)) and value is not member:
            return self.choices(value, depth + 1)
        if isinstance(value, ast.Subscript):
            entries = self._entries(value)
            return [c for e in entries for c in (self.choices(e, depth + 1) or [e])] if entries else None
        if not isinstance(value, ast.IfExp):
            return None
        way = self.test(value.test)
        branches = [value.body] if way is True else [value.orelse] if way is False else [value.body, value.orelse]
        return [c for b in branches for c in (self.choices(b, depth + 1) or [b])]

    def _entries(self, item: ast.Subscript) -> Optional[List[ast.expr]]:
        """``acts[kind]`` of a dict display of string keys bound once to a name of the function
        (or of the file's top level, not bound in the function) and only read after
        (``acts[k]``, ``k in acts``, ``acts.keys()``...: nothing replaces an entry or hands the
        dict on): the entries the key may pick (``values``: ``Chains.values``), every entry where the key is
        not known. None otherwise."""
        if not (isinstance(item.value, ast.Name) and isinstance(item.ctx, ast.Load)):
            return None
        name = item.value.id
        owner = self.model.owner(item)
        flow = self.model.flow(owner)
        if name not in flow.bindings:
            owner, flow = self.model.module, self.model.flow(self.model.module)
        bound = flow.bindings.get(name, [])
        if len(bound) != 1 or bound[0].form != "assign" or name in flow.declared:
            return None
        table = bound[0].value
        if not (isinstance(table, ast.Dict) and table.keys
                and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in table.keys)):
            return None
        mentions = [m for m in self.model.mentions(name) if isinstance(m, ast.Name)]
        if owner is not self.model.module:
            mentions = [m for m in mentions if owner in self.model.ancestors(m)]
        target = bound[0].stmt.targets[0] if isinstance(bound[0].stmt, ast.Assign) else None
        for mention in mentions:
            parent = self.model.parent(mention)
            if mention is target:
                continue  # the binding itself
            if not (isinstance(parent, ast.Subscript) and parent.value is mention and isinstance(parent.ctx, ast.Load)) \
                    and not read_only(self.model, mention):
                return None  # stored into, deleted from, updated, handed on, rebound elsewhere
        keys = [cast(ast.Constant, k).value for k in table.keys]
        picked = self.values(item.slice)
        if picked is None:
            return list(table.values)
        found = [v for k, v in zip(keys, table.values) if k in picked]
        return found or None

def _calls_elsewhere(model: SummaryFacts, callee: str) -> Optional[List[CallFact]]:
    """The calls of the file's ``callee`` (a top-level function or class) in the run's other
    files (``ProjectIndex.calls_in_other_modules``); None where the index counts calls neither
    this file nor those show (a reference handed on)."""
    index = model.calls.project
    if index is None:
        return []
    qual = index.canonical(f"{model.calls.module_name}.{callee}")
    called = [c for c in index.calls.get(qual, []) if c.called]
    here = len(model.calls_in(model.module).get(callee, []))
    if len(called) <= here:
        return []
    elsewhere = index.calls_in_other_modules(qual, model.calls.module_name)
    return elsewhere if len(elsewhere) == len(called) - here else None


def _passed_elsewhere(call: CallFact, param: str, position: Optional[int], default: Optional[ast.expr],
                      values: Callable[[ast.expr], Optional[FrozenSet[object]]]) -> Optional[FrozenSet[object]]:
    """What a call of another file gives ``param``: the literal it passes (``inplace=False``), the
    default where it passes nothing; None where it passes something else or spreads."""
    passed = [(literal, value) for key, literal, value in call.args_values
              if key == param or position is not None and key == str(position)]
    if any(key in ("*", "**") for key, _, _ in call.args_values) or len(passed) > 1:
        return None
    if not passed:
        return values(default) if default is not None else None
    if not passed[0][0]:  # what the index says it names (``project.HANDED``), else nothing is known
        return values(injected.Foreign(passed[0][1])) if isinstance(passed[0][1], str) else None
    return values(ast.Constant(cast(str, passed[0][1])))  # (a literal, to ``values``)


def param_class(chains: Chains, call: ast.Call) -> Optional[str]:
    """``act_layer(inplace=True)`` in ``__init__(self, act_layer=nn.ReLU)`` (the builders of timm,
    torchvision, mmcv): the one torch module class every construction of the class in the file
    passes for ``act_layer``, or its default where none passes one (``Chains._param_values``: None
    where a caller may be unseen, or where one passes anything else: a ``partial``, a factory, a
    class of the project)."""
    func = call.func
    model = chains.model
    owner = model.owner(func) if isinstance(func, ast.Name) else None
    if not isinstance(func, ast.Name) or not isinstance(owner, FUNCTIONS):
        return None
    args = owner.args  # only the function's own parameters bind as "param": most calls end here, without its flow
    if not any(a.arg == func.id for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg)
               if a is not None):
        return None
    bindings = model.reaching(model.flow(owner), func.id, model.statement_of(func))
    if not bindings or any(b.form != "param" for b in bindings):
        return None

    def torch_class(expr: ast.expr, depth: int) -> Optional[FrozenSet[object]]:
        name = model.torch_name(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        short = (name or "").rsplit(".", 1)[-1]
        if name is None or not name.startswith("torch.nn.") or not short[:1].isupper():
            return None
        return frozenset({f"torch.nn.{short}"})

    found = chains._param_values(owner, func.id, 0, values=torch_class)
    return cast(str, next(iter(found))) if found is not None and len(found) == 1 else None


def keeping_init(model: SummaryFacts, cls: ast.ClassDef) -> List[str]:
    """``cls`` and the classes of the file derived from it that keep its ``__init__`` (define
    none, through such only): constructing any of them runs it with the construction's own
    arguments, in this file or another (``TabModel`` and ``class Regressor(TabModel)``)."""
    names = [cls.name]
    grew = True
    while grew:
        grew = False
        for sub in model.module.body:
            if isinstance(sub, ast.ClassDef) and sub.name not in names and len(names) < 32 and len(sub.bases) == 1 \
                    and isinstance(sub.bases[0], ast.Name) and sub.bases[0].id in names \
                    and not any(isinstance(f, FUNCTIONS) and f.name == "__init__" for f in sub.body):
                names.append(sub.name)
                grew = True
    return names


def construction_sites(model: SummaryFacts, cls: ast.ClassDef, depth: int = 0) -> Optional[List[ast.Call]]:
    """The calls of the file that run ``cls.__init__`` with their own arguments: ``Cls(...)``,
    a subclass's ``super().__init__(...)``, and the constructions of a subclass that keeps
    this ``__init__``. None where a subclass runs it otherwise (``Base.__init__(self, ...)``)."""
    sites = list(model.calls_in(model.module).get(cls.name, []))
    for sub in model.module.body:
        if not (isinstance(sub, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == cls.name for b in sub.bases)):
            continue
        if depth > _MAX_DEPTH:
            return None
        init = next((f for f in sub.body if isinstance(f, FUNCTIONS) and f.name == "__init__"), None)
        if init is None:
            inherited = construction_sites(model, sub, depth + 1)
            if inherited is None:
                return None
            sites.extend(inherited)
            continue
        for call in model.walk(init):
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__"):
                continue
            if len(sub.bases) != 1 or not (isinstance(call.func.value, ast.Call)
                                           and isinstance(call.func.value.func, ast.Name)
                                           and call.func.value.func.id == "super"):
                return None  # `Base.__init__(self, ...)`: its arguments are placed otherwise
            sites.append(call)
    return sites


def set_from_outside(model: SummaryFacts, cls: ast.ClassDef, attr: str) -> bool:
    """``<x>.<attr>`` of an instance of ``cls`` may be changed other than by ``self.<attr> =
    ...`` in a method of ``cls``: the file writes ``<x>.<attr>`` (or an item of it) through
    anything but ``self`` (``self.proj.act = None``, ``net.act = None``), deletes or augments
    it, or calls ``setattr`` with a name that may be it."""
    for node in model.attribute_writes(attr):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                and isinstance(node.value, ast.Name) and node.value.id == "self"
                and _assigned_a_value(model, node) and model.enclosing_class(node) is not None):
            return True  # (`self.<attr>` of another class of the file is another instance's)
    for call in model.calls_in(model.module).get("setattr", []):
        name = call.args[1] if len(call.args) > 1 else None
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value != attr):
            return True
    return False


def _assigned_a_value(model: SummaryFacts, target: ast.Attribute) -> bool:
    """``self.<attr> = v``, or its own element of ``self.a, self.b = x, y`` (``classes.paired``:
    the value the class index records for it); not one unpacked from a call."""
    stmt = model.statement_of(target)
    if isinstance(stmt, ast.AnnAssign):
        return stmt.target is target
    return isinstance(stmt, ast.Assign) and any(
        t is target for whole in stmt.targets for t, _ in paired(whole, stmt.value))


def set_through_another_receiver(model: SummaryFacts, attr: str) -> bool:
    """The file binds ``<x>.<attr>`` (``unit.body = Plain(4)``) through a receiver other than
    ``self``: what an instance's attribute holds is then not its class's assignments alone."""
    return any(isinstance(w, ast.Attribute) and isinstance(w.ctx, ast.Store)
               and not (isinstance(w.value, ast.Name) and w.value.id == "self") for w in model.attribute_writes(attr))


def members_changed(model: SummaryFacts, word: str) -> bool:
    """The file may change the first member of a container of layers it reaches as ``word``
    (``x.word`` or a name ``word``, any receiver): an item assigned or deleted (but at a positive
    constant index), a call that removes or replaces one or adds it anywhere (``insert``,
    ``add_module``...; ``append``/``extend`` add at the end), ``_modules`` written, ``setattr``/``delattr``
    on it, or the container bound to another name (``body = self.body``: changed through that)."""
    for node in model.mentions(word):
        up = model.parent(node)
        if isinstance(up, ast.Subscript) and up.value is node and not isinstance(up.ctx, ast.Load) and not (
                isinstance(up.slice, ast.Constant) and type(up.slice.value) is int and up.slice.value > 0):
            return True  # (`self.body[1] = bn`: a later member)
        if isinstance(up, ast.Attribute) and up.value is node and (
                up.attr in _MUTATORS - {"append", "extend", "__iadd__"} or up.attr == "_modules"):
            return True
        if isinstance(up, ast.Call) and up.args[:1] == [node] and isinstance(up.func, ast.Name) \
                and up.func.id in ("setattr", "delattr"):
            return True
        if isinstance(up, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and up.value is node:
            return True
    return False


def flag_set_after(chains: Chains) -> Optional[ast.AST]:
    """The first place in the file that sets a built module's ``inplace`` flag (``_flag_write``),
    found once per file."""
    if chains._flag is None:
        chains._flag = (_flag_write(chains.model),)
    return chains._flag[0]


def _flag_write(model: SummaryFacts) -> Optional[ast.AST]:
    """``self.act.inplace = False``, ``m.inplace = True`` over ``net.modules()``, ``setattr(m,
    "inplace", ...)``: any module may be the one changed, so no constructor says how it runs.
    A class's own ``self.inplace = ...`` is its own flag, not one of these."""
    for write in model.attribute_writes("inplace"):
        if not (isinstance(write, ast.Attribute) and isinstance(write.value, ast.Name) and write.value.id == "self"):
            return write
    for call in model.walk(model.module):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "setattr" \
                and len(call.args) > 1 and isinstance(call.args[1], ast.Constant) and call.args[1].value == "inplace":
            return call
    return None


def switched_on(model: SummaryFacts, write: ast.Attribute) -> Optional[ast.Call]:
    """The construction a flag write turns in place for every instance: ``self.<attr>.inplace =
    True`` as a statement of ``__init__``'s own body, after ``self.<attr> = nn.Dropout(...)`` (the
    attribute's only value in the class, also a statement of that body), and the file's only
    write of a module's flag. None otherwise."""
    assign = model.parent(write)
    init = model.owner(write)
    cls = model.enclosing_class(write)
    if not (isinstance(assign, ast.Assign) and assign.targets == [write] and is_const(assign.value, True)
            and write.attr == "inplace" and isinstance(write.value, ast.Attribute)
            and isinstance(write.value.value, ast.Name) and write.value.value.id == "self"
            and isinstance(init, FUNCTIONS) and init.name == "__init__" and cls is not None
            and model.parent(init) is cls and any(s is assign for s in init.body)):
        return None
    if _flag_write(model) is not write or any(w is not write for w in model.attribute_writes("inplace")
                                              if not (isinstance(w, ast.Attribute) and isinstance(w.value, ast.Name)
                                                      and w.value.id == "self")):
        return None  # another flag write: which module it changes is not this file's to say
    if model.calls_in(model.module).get("setattr"):
        return None  # `setattr(m, name, v)`: any attribute of any module
    values = model.class_attrs(cls).get(write.value.attr, [])
    built = values[0] if len(values) == 1 else None
    made = model.parent(built) if isinstance(built, ast.Call) else None
    if not (isinstance(made, ast.Assign) and any(s is made for s in init.body) and made.lineno < assign.lineno):
        return None
    name = model.torch_name(cast(ast.Call, built).func) or ""
    return cast(ast.Call, built) if f"torch.nn.{name.rsplit('.', 1)[-1]}" in torch_api.INPLACE_PARAM_CALLABLES \
        and name.rsplit(".", 1)[-1][:1].isupper() else None


# A module a builder function may return, as another file reads it (``SummaryFact.builds``):
# "<torch.nn class> yes|no|unknown" (whether it runs in place), or "<class> param <name>
# <position or -> <yes|no|unknown>" where its ``inplace=`` is the builder's own parameter (with
# that default): what each call of the builder passes for it decides.
Flag = Union[Optional[bool], Tuple[str, Optional[int], Optional[bool]]]


_READ_METHODS = frozenset({"keys", "values", "items", "get"})


def read_only(model: SummaryFacts, mention: ast.Name) -> bool:
    """A mention of a dict that cannot change it: ``d.keys()``, ``d.values()``, ``d.items()``,
    ``d.get(k)`` called at once, ``k in d`` / ``k not in d``, ``len(d)``."""
    parent = model.parent(mention)
    if isinstance(parent, ast.Attribute) and parent.attr in _READ_METHODS:
        call = model.parent(parent)
        return isinstance(call, ast.Call) and call.func is parent
    if isinstance(parent, ast.Compare):
        return any(c is mention and isinstance(op, (ast.In, ast.NotIn)) for op, c in zip(parent.ops, parent.comparators))
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len" \
        and "len" not in model.flow(model.module).bindings and parent.args == [mention] and not parent.keywords


class BuiltLayers:
    """The torch modules a construction builds where its class is chosen by a name or a
    function (timm's ``create_act_layer(name)``, mmcv's builders, a file's own tables):
    ``getattr(nn, act)(...)`` with the strings ``act`` may hold known (``Chains.values``: its
    default and what the file's constructions pass), ``ACTS[name](...)`` of a dict display of the
    file that maps strings to torch module classes (every class it holds where the key is not
    known), a call of a builder whose every return builds a torch module (``get_act(name)``,
    ``self.__dropout()``, a static or class method: ``analysis.factories``; one of another
    file of the run through the index's summary, ``SummaryFact.builds``), each module's
    ``inplace=`` read at that call where the builder passes its own parameter. A fact about such
    a layer holds where it holds for every module it may build. Also the ``inplace=`` a
    ``**params`` spread passes (torchvision's MLP)."""

    def __init__(self, model: SummaryFacts, chains: "Chains") -> None:
        self.model = model
        self.chains = weakref.proxy(chains)
        self._tables: Dict[str, Optional[Dict[str, Optional[str]]]] = {}

    def modules(self, call: ast.Call) -> Optional[List[Tuple[str, Optional[bool]]]]:
        """(its ``torch.nn`` class, whether it runs in place: None where that is not known) for
        each module ``call`` may build; None where ``call`` is none of these forms or one of its
        modules is unknown."""
        returned = self._returned_layers(call)
        if returned is not None:
            return returned
        classes = self._by_name(call.func)
        if classes:
            return [(c, self.chains.runs_in_place(call, c)) for c in classes]
        return self._built_elsewhere(call)

    def label(self, call: ast.Call) -> str:
        """How messages name the construction: ``get_act()``, ``self.__dropout()``,
        ``getattr(nn, ...)``, ``ACTS[...]``."""
        func = call.func
        if isinstance(func, ast.Name):
            return f"{func.id}()"
        if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name):
            return f"{func.value.id}[...]"
        if isinstance(func, ast.Attribute):
            return f"{self.model.code(func).strip()}()"
        return "getattr(nn, ...)"

    def saves(self, call: ast.Call) -> Optional[Tuple[str, Optional[Tuple[str, ...]]]]:
        """(a label, what each module ``call`` may build saves: ``("output",)``...) where every
        one saves the same, in place or not (an in-place ReLU saves its result); (a label, None)
        where they differ or one is unknown; None where ``call`` is no such construction."""
        built = self.modules(call)
        if built is None:
            return None
        found: Set[Optional[Tuple[str, ...]]] = set()
        for cls, in_place in built:
            if in_place is None:
                found.add(("output",) if _saves_result_either_way(cls) else None)
            elif in_place and cls in INPLACE_SAVES_RESULT:
                found.add(("output",))
            elif in_place and cls in torch_api.INPLACE_PARAM_CALLABLES:
                found.add(())
            else:
                found.add(op_saves(cls))
        names = " or ".join(dict.fromkeys(cls for cls, _ in built))
        return f"{self.label(call)} ({names})", (found.pop() if len(found) == 1 else None)

    def spread_flags(self, layer: ast.Call) -> Optional[FrozenSet[object]]:
        """``act_layer(**params)`` (torchvision's MLP) where ``params`` is bound once, to dict
        displays of string keys (``{} if inplace is None else {"inplace": inplace}``), and only
        ever spread: the ``inplace=`` values they may pass (False where one leaves it out)."""
        spread = [k.value for k in layer.keywords if k.arg is None]
        if len(spread) != 1 or not isinstance(spread[0], ast.Name):
            return None
        name = spread[0]
        flow = self.model.flow(self.model.owner(name))
        bound = flow.bindings.get(name.id, [])
        if len(bound) != 1 or bound[0].form != "assign" or bound[0].value is None or name.id in flow.declared \
                or self.model.reaching(flow, name.id, self.model.statement_of(name)) != bound:
            return None
        if not all(isinstance(self.model.parent(load), ast.keyword) and getattr(self.model.parent(load), "arg", 0) is None
                   for _, load in flow.loads.get(name.id, [])):
            return None  # `params["inplace"] = False`, `params.update(...)`, handed to a call
        return self._dict_flags(bound[0].value, 0)

    def _dict_flags(self, value: ast.expr, depth: int) -> Optional[FrozenSet[object]]:
        if isinstance(value, ast.IfExp) and depth < _MAX_DEPTH:
            way = self.chains.decided.test(value.test)
            if way is not None:
                return self._dict_flags(value.body if way else value.orelse, depth + 1)
            return self.chains._union([self._dict_flags(value.body, depth + 1), self._dict_flags(value.orelse, depth + 1)])
        if not isinstance(value, ast.Dict) or not all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                                      for k in value.keys):
            return None
        keys = [cast(ast.Constant, k).value for k in value.keys]
        return self.chains.values(value.values[keys.index("inplace")], 0) if "inplace" in keys else frozenset({False})

    def _by_name(self, func: ast.expr, keys: Optional[Callable[[ast.expr], Optional[FrozenSet[object]]]] = None
                 ) -> Optional[List[str]]:
        """The classes ``getattr(nn, act)`` or ``ACTS[name]`` may be (sorted), None if unknown;
        the strings the name may hold as ``keys`` says (else ``Chains.values``)."""
        keys = keys or (lambda expr: self.chains.values(expr, 0))
        module = self.model.flow(self.model.module).bindings
        if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr" \
                and "getattr" not in module and len(func.args) == 2 and not func.keywords \
                and self.model.torch_name(func.args[0]) == "torch.nn":
            names = keys(func.args[1])
            if not names or not all(isinstance(n, str) for n in names):
                return None
            classes = [self._torch_class(f"torch.nn.{n}") for n in cast(FrozenSet[str], names)]
            return None if None in classes else sorted(cast(List[str], classes))
        if not (isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name)):
            return None
        owner = self.model.owner(func)
        if owner is not self.model.module and func.value.id in self.model.flow(owner).bindings:
            return None  # a local name, not the file's table
        table = self._table(func.value.id)
        if table is None:
            return None
        picked_keys = keys(func.slice)
        picked = list(table.values()) if picked_keys is None else [
            table[k] for k in picked_keys if isinstance(k, str) and k in table]
        if None in picked:
            return None  # an entry that is no torch class (`Mish()`, the file's `Swish`) may be picked
        return sorted(set(cast(List[str], picked))) or None

    def _torch_class(self, name: str) -> Optional[str]:
        """``torch.nn.<Name>`` where the torch API data knows the module class, else None."""
        short = name.rsplit(".", 1)[-1]
        known = short[:1].isupper() and (op_saves(f"torch.nn.{short}") is not None
                                         or f"torch.nn.{short}" in torch_api.INPLACE_PARAM_CALLABLES)
        return f"torch.nn.{short}" if known else None

    def _table(self, name: str) -> Optional[Dict[str, Optional[str]]]:
        """``ACTS = {"relu": nn.ReLU, "leaky": partial(nn.LeakyReLU, negative_slope=0.1)}``: a
        dict display bound once at the file's top level, read only (``ACTS[...]``, ``ACTS.keys()``,
        ``act in ACTS``, ``len(ACTS)``: nothing adds to it or replaces an entry), every key a
        string: key -> its torch module class (a ``partial`` of one that fixes no ``inplace``), or
        None for an entry that is none (``Mish()``, the file's own ``Swish``, a lambda: unknown
        where a key may pick it)."""
        if name in self._tables:
            return self._tables[name]
        self._tables[name] = None
        bound = self.model.flow(self.model.module).bindings.get(name, [])
        value = bound[0].value if len(bound) == 1 and bound[0].form == "assign" else None
        if not isinstance(value, ast.Dict) or not value.keys:
            return None
        table: Dict[str, Optional[str]] = {}
        for key, entry in zip(value.keys, value.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None
            if isinstance(entry, ast.Call) and entry.args and not isinstance(entry.args[0], ast.Starred) \
                    and "functools.partial" in self.model.qualified_names(entry.func) \
                    and not any(k.arg in (None, "inplace") for k in entry.keywords) and len(entry.args) == 1:
                entry = entry.args[0]
            found = self.model.torch_name(entry) if isinstance(entry, (ast.Name, ast.Attribute)) else None
            table[key.value] = self._torch_class(found) if found is not None and found.startswith("torch.nn.") else None
        if not any(table.values()):
            return None
        for mention in self.model.mentions(name):
            parent = self.model.parent(mention)
            if not isinstance(mention, ast.Name) or self.model.owner(mention) is self.model.module and parent is bound[0].stmt:
                continue  # `x.ACTS` (another object's attribute), or the binding itself
            if not (isinstance(parent, ast.Subscript) and parent.value is mention and isinstance(parent.ctx, ast.Load)) \
                    and not read_only(self.model, mention):
                return None  # `ACTS["gelu"] = ...`, `ACTS.update(...)`, handed to a call
        self._tables[name] = table
        return table

    def _returned_layers(self, call: ast.Call) -> Optional[List[Tuple[str, Optional[bool]]]]:
        """``get_act(name)``, ``self.__dropout()``: a builder of this file whose every return
        hands back a torch module built in it (``Factories.returned``): each module's class and
        whether it runs in place when built by this call."""
        factories = self.chains.factories
        func = factories.callee(call)
        built = self.returned_modules(func, call) if func is not None else None
        return [(cls, self._resolve(flag, call, func)) for cls, flag, _ in built] if built else None

    def returned_modules(self, func: Function, call: Optional[ast.Call] = None,
                         factories: Optional[Factories] = None) -> Optional[List[Tuple[str, Flag, Tuple[Guard, ...]]]]:
        """What every return of the builder ``func`` may hand back (as ``call`` would call it,
        where given: the branches its arguments rule out are left out; read by ``factories``,
        else the file's), each a torch module class, its flag: True / False / None (unknown), or
        (parameter, position, default) where ``inplace=`` is the builder's own parameter, and
        the tests on the builder's parameters it is built under (``Factories.guards``)."""
        factories = factories or self.chains.factories
        values = factories.returned(func, call)
        if not values:
            return None
        found: List[Tuple[str, Flag, Tuple[Guard, ...]]] = []
        for value in values:
            name = self.model.torch_name(value.func) if isinstance(value, ast.Call) else None
            short = (name or "").rsplit(".", 1)[-1]
            if name is not None and name.startswith("torch.nn.") and short[:1].isupper() and self._torch_class(name):
                classes: Optional[List[str]] = [f"torch.nn.{short}"]
            else:  # `return ACTS[name](inplace=inplace)`, `getattr(nn, act)()`: the key as the call passes it
                classes = self._by_name(value.func, lambda expr: factories.keys(expr, func, call)) \
                    if isinstance(value, ast.Call) else None
            if not classes:
                return None
            guards = tuple(factories.guards(value, func))
            found += [(cls, self._flag(cast(ast.Call, value), cls, func), guards) for cls in classes]
        return found

    def _flag(self, layer: ast.Call, cls: str, func: Function) -> Flag:
        """Whether ``layer`` runs in place, or the builder's parameter its ``inplace=`` is."""
        index = torch_api.INPLACE_PARAM_CALLABLES.get(cls)
        if index is None:
            return False
        if flag_set_after(self.chains) is not None:
            return None
        value = next((k.value for k in layer.keywords if k.arg == "inplace"), None)
        if value is None and len(layer.args) > index and not any(isinstance(a, ast.Starred) for a in layer.args[:index + 1]):
            value = layer.args[index]
        if isinstance(value, ast.Name) and self.model.owner(value) is func:
            flow = self.model.flow(func)
            bound = flow.bindings.get(value.id, [])
            if len(bound) == 1 and bound[0].form == "param" and value.id not in flow.declared:
                plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
                if plain and isinstance(self.model.parent(func), ast.ClassDef) \
                        and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list):
                    plain = plain[1:]
                default = default_of(func, value.id)
                known = self.chains.values(default, 0) if default is not None else None
                return (value.id, plain.index(value.id) if value.id in plain else None,
                        next(iter(known)) is True if known is not None and len(known) == 1 else None)
        return self.chains.runs_in_place(layer, cls)

    def _resolve(self, flag: Flag, call: ast.Call, func: Optional[Function] = None) -> Optional[bool]:
        """A module's flag as ``call`` builds it: what the call passes for the builder's
        parameter (its constants as this file shows them), else the parameter's default."""
        if not isinstance(flag, tuple):
            return flag
        param, position, default = flag
        if spreads(call):
            return None
        passed = passed_for(call, param, position)
        if passed is None:
            return default
        known = self.chains.values(passed, 0)
        return next(iter(known)) is True if known is not None and len(known) == 1 else None

    def _built_elsewhere(self, call: ast.Call) -> Optional[List[Tuple[str, Optional[bool]]]]:
        """``get_act(name)`` imported from another file of the run (or an installed library):
        the modules its summary says every return builds, each flag read at this call; None
        where the name is bound here too or nothing is known. A flag write anywhere in this file
        (``self.act.inplace = False``) leaves every flag unknown."""
        func = call.func
        index = self.model.calls.project
        if not isinstance(func, ast.Name) or index is None:
            return None
        owner = self.model.owner(func)
        if owner is not self.model.module and func.id in self.model.flow(owner).bindings \
                or len(self.model.flow(self.model.module).bindings.get(func.id, [])) != 1:
            return None  # a local name, or the import rebound at the top level
        module = self.model.calls.module_name
        qual = index.imported(module, func.id)
        fact = index.summary(qual) if qual is not None else index.library_summary(module, func.id)
        if fact is None or fact.of != "function" or not fact.builds:
            return None
        found: List[Tuple[str, Optional[bool]]] = []
        changed = flag_set_after(self.chains) is not None
        for entry in fact.builds:
            decoded = decode_built(entry)
            if decoded is None:
                return None
            cls, flag, guards = decoded
            if any(self.chains.factories.excludes(g, call) for g in guards):
                continue  # `if name == "gelu": return nn.GELU()` where this call passes "relu"
            resolved = self._resolve(flag, call)
            found.append((cls, None if changed and cls in torch_api.INPLACE_PARAM_CALLABLES else resolved))
        return found or None


def encode_built(cls: str, flag: Flag, guards: Sequence[Guard] = ()) -> str:
    """One entry of ``SummaryFact.builds``, as JSON: ``[class, flag, guards]`` (see :data:`Flag`:
    "yes" / "no" / "unknown", or ``[parameter, position, default]``; a guard ``[parameter,
    position, want, values, default]``, the default ``[value]`` or ``[]``)."""
    def word(value: Optional[bool]) -> str:
        return "unknown" if value is None else "yes" if value else "no"

    flagged: object = [flag[0], flag[1], word(flag[2])] if isinstance(flag, tuple) else word(flag)
    shown = [[g.param, g.position, g.want, sorted(g.values, key=repr), list(g.default or ())] for g in guards]
    return json.dumps([cls, flagged, shown])


def decode_built(entry: str) -> Optional[Tuple[str, Flag, Tuple[Guard, ...]]]:
    """The (class, flag, guards) of one entry of ``SummaryFact.builds``; None for anything malformed."""
    words = {"yes": True, "no": False, "unknown": None}
    try:
        cls, flagged, shown = json.loads(entry)
        flag: Flag
        if isinstance(flagged, list):
            param, position, default = flagged
            if not isinstance(param, str) or not (position is None or type(position) is int) or default not in words:
                return None
            flag = (param, position, words[default])
        else:
            flag = words[flagged]
        guards = tuple(Guard(str(p), None if at is None else int(at), frozenset(values), bool(want),
                             tuple(default)[:1] if default else None)
                       for p, at, want, values, default in shown)
    except (ValueError, TypeError, KeyError):
        return None
    return (cls, flag, guards) if isinstance(cls, str) else None


class Decided:
    """Tests that come out the same for every instance the file builds, from the constructor
    arguments it passes (``Block(act_cfg=dict(type='ReLU'))``) and the defaults: ``if
    self.act is not None:`` where ``__init__`` sets ``self.act = nn.ReLU() if act_cfg is not
    None else None``; ``if NL == 'relu':``. Where anything else may flow in (a caller of another
    file, a subclass that sets the attribute, an attribute set outside ``__init__``), undecided."""

    def __init__(self, model: SummaryFacts, chains: "Chains") -> None:
        self.model = model
        self.chains = weakref.proxy(chains)
        self._tests: Dict[ast.expr, Optional[bool]] = {}
        # what an expression may hold, asked at a depth: the same answer every time (the file's facts
        # do not change), and without it a parameter passed down a chain of calls is asked once per
        # path through the call sites (avalanche 0.6.0's benchmarks/utils: 5.6 million times)
        self._values: Dict[Tuple[ast.expr, int], Optional[FrozenSet[object]]] = {}

    def test(self, test: ast.expr, depth: int = 0) -> Optional[bool]:
        """True or False where the test always comes out so; None where it may not."""
        if test not in self._tests:
            self._tests[test] = None  # (a cycle through an attribute's own test: undecided)
            self._tests[test] = self._test(test, depth)
        return self._tests[test]

    def _test(self, test: ast.expr, depth: int) -> Optional[bool]:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.test(test.operand, depth + 1)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self.test(v, depth + 1) for v in test.values]
            want = isinstance(test.op, ast.Or)  # `or`: one True decides; `and`: one False
            if want in parts:
                return want
            return None if None in parts else not want
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op, right = test.ops[0], test.comparators[0]
            left = self.values(test.left, depth + 1)
            if left is None:
                return None
            if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
                outcomes = {v is None for v in left}
            elif isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) \
                    and isinstance(right.value, (str, int)) and _OBJECT not in left:
                outcomes = {type(v) is type(right.value) and v == right.value for v in left}
            else:
                return None
            if len(outcomes) != 1:
                return None
            same = outcomes.pop()
            return same if isinstance(op, (ast.Is, ast.Eq)) else not same
        found = self.values(test, depth + 1)
        if found is None or _OBJECT in found or len({bool(v) for v in found}) != 1:
            return None
        return bool(next(iter(found)))

    def values(self, expr: ast.expr, depth: int) -> Optional[FrozenSet[object]]:
        """What ``expr`` may hold: constants, and :data:`_OBJECT` for what is never None."""
        if depth > 3 * _MAX_DEPTH:
            return None
        key = (expr, depth)
        if key not in self._values:
            self._values[key] = self._values_of(expr, depth)
        return self._values[key]

    def _values_of(self, expr: ast.expr, depth: int) -> Optional[FrozenSet[object]]:
        if isinstance(expr, ast.Constant):
            return frozenset({expr.value})
        if isinstance(expr, (ast.Dict, ast.List, ast.Tuple, ast.Set, ast.Lambda, ast.ListComp, ast.DictComp)):
            return frozenset({_OBJECT})
        if isinstance(expr, ast.Call) and isinstance(expr.func, (ast.Name, ast.Attribute)) and self._builds(expr):
            return frozenset({_OBJECT})
        if isinstance(expr, (ast.Compare, ast.BoolOp)) or isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            decided = self.test(expr, depth + 1)
            return None if decided is None else frozenset({decided})
        if isinstance(expr, ast.IfExp):
            decided = self.test(expr.test, depth + 1)
            if decided is not None:
                return self.values(expr.body if decided else expr.orelse, depth + 1)
            return self.chains._union([self.values(expr.body, depth + 1), self.values(expr.orelse, depth + 1)])
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
            return self._attribute(expr, depth)
        if not isinstance(expr, ast.Name):
            return None
        owner = self.model.owner(expr)
        found: List[Optional[FrozenSet[object]]] = []
        for b in self.model.reaching(self.model.flow(owner), expr.id, self.model.statement_of(expr)):
            if b.form == "param" and isinstance(owner, FUNCTIONS):
                at_built = _built_param(self.chains, owner, expr.id, depth, self.values)
                # (`ConvBNAct(c, use_lab=False)`: this instance's own arguments, where the summaries read one)
                found.append(self.chains._param_values(owner, expr.id, depth, self.values) if at_built is None
                             else at_built[0])
            elif b.form == "assign" and b.value is not None:
                found.append(self.values(b.value, depth + 1))
            else:
                found.append(None)
        return self.chains._union(found)

    def _builds(self, call: ast.Call) -> bool:
        """``dict(...)``, ``nn.ReLU(...)``, ``Block(...)`` of a class of the file: never None."""
        name = self.model.names.torch_name(call.func) or ""
        if name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper():
            return True
        if isinstance(call.func, ast.Name):
            if call.func.id in ("dict", "list", "tuple", "set") and call.func.id not in self.model.flow(self.model.module).bindings:
                return True
            return any(isinstance(s, ast.ClassDef) and s.name == call.func.id for s in self.model.module.body)
        return False

    def _attribute(self, expr: ast.Attribute, depth: int) -> Optional[FrozenSet[object]]:
        """``self.act`` after ``__init__``: what the assignments that may be the last give it."""
        final = self.final(expr, depth)
        if final is None:
            return None
        return self.chains._union([self.values(value, depth + 1) for value in final])

    def final(self, expr: ast.Attribute, depth: int = 0) -> Optional[List[ast.expr]]:
        """The values ``self.act`` may hold after ``__init__``: set there only (and no subclass
        of the file may set it again), by statements run on every path, on none, or maybe (an
        undecided ``if``): the last one run on every path and the maybes after it. None when it
        may be left unset or set elsewhere."""
        cls = self.model.enclosing_class(expr)
        if cls is None or self.chains.callers_unseen or self._set_below(cls, expr.attr) \
                or set_from_outside(self.model, cls, expr.attr):
            return None
        init = next((f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == "__init__"), None)
        possible: List[ast.expr] = []
        unset = True
        for value in sorted(self.model.class_attrs(cls).get(expr.attr, []), key=lambda v: self.model.range(v)[0]
                            if isinstance(v, ast.expr) else (0, 0)):
            stmt = self.model.statement_of(value) if isinstance(value, ast.expr) else None  # (`self.a, self.b = x, y`)
            if init is None or not isinstance(stmt, ast.Assign) or self.model.owner(stmt) is not init \
                    or not isinstance(value, ast.expr):
                return None
            runs = self._runs(stmt, init, depth)
            if runs is False:
                continue
            if runs and self._may_return_before(stmt, init, depth):
                runs = None  # (`if plain: return` before `self.act = nn.Sigmoid()`)
            possible = [value] if runs else [*possible, value]
            unset = unset and not runs
        return None if unset else possible

    def _may_return_before(self, stmt: ast.stmt, init: Function, depth: int) -> bool:
        """A ``return`` of ``__init__`` itself written before ``stmt`` may run (not in a branch every
        construction takes the other way): ``stmt`` then may not run."""
        start = self.model.range(stmt)[0]
        return any(isinstance(node, ast.Return) and self.model.owner(node) is init
                   and self.model.range(node)[0] < start and self._runs(node, init, depth) is not False
                   for node in self.model.walk(init))

    def _set_below(self, cls: ast.ClassDef, attr: str, depth: int = 0) -> bool:
        """A subclass of the file (a few levels down) sets ``self.<attr>`` too."""
        for sub in self.model.module.body:
            if isinstance(sub, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == cls.name for b in sub.bases):
                if depth > _MAX_DEPTH or attr in self.model.class_attrs(sub) or self._set_below(sub, attr, depth + 1):
                    return True
        return False

    def _runs(self, stmt: ast.stmt, init: Function, depth: int) -> Optional[bool]:
        """Whether ``stmt`` of ``__init__`` runs: every ``if`` around it decided its way (True),
        one decided the other way (False), or it may (a loop, a ``try``, an undecided test)."""
        runs: Optional[bool] = True
        node: ast.AST = stmt
        for up in self.model.ancestors(stmt):
            if up is init:
                return runs
            if isinstance(up, ast.If):
                side = branch(node, up) if node is not up.test else None
                decided = self.test(up.test, depth + 1)
                if side is None:
                    return None
                if decided is not None and decided != (side == "body"):
                    return False
                if decided is None:
                    runs = None
            elif not isinstance(up, (ast.With, ast.AsyncWith)):
                runs = None
            node = up
        return None

    def never_runs(self, stmt: ast.stmt) -> bool:
        """``stmt`` sits in a branch of an ``if`` (of its own function) that every instance the
        file builds takes the other way: ``if self.attention is not None: out = ...`` where
        ``__init__`` sets ``self.attention = None``. False where any test around it may go its way."""
        node: ast.AST = stmt
        for up in self.model.ancestors(stmt):
            if isinstance(up, (*FUNCTIONS, ast.ClassDef, ast.Module, ast.Lambda)):
                return False
            if isinstance(up, ast.If) and node is not up.test:
                side = branch(node, up)
                way = self.test(up.test)
                if side is not None and way is not None and way != (side == "body"):
                    return True
            node = up
        return False

    def live(self, func: Function, key: str, bindings: List[Binding], at: ast.stmt) -> List[Binding]:
        """The ``bindings`` of ``key`` that reach ``at`` less those every run rebinds on the way:
        a decided ``if`` before ``at`` (in a block holding it) whose taken branch binds ``key``."""
        if len(bindings) < 2:
            return bindings
        decided: List[Tuple[ast.If, List[ast.stmt]]] = []
        node: ast.AST = at
        while node is not func:
            parent = self.model.parent(node)
            if parent is None:
                return bindings
            for block in statement_lists(parent):
                if any(s is node for s in block):
                    for s in block[:next(i for i, s in enumerate(block) if s is node)]:
                        if isinstance(s, ast.If):
                            way = self.test(s.test)
                            taken = s.body if way else s.orelse
                            if way is not None and binds(taken, key):
                                decided.append((s, taken))
            node = parent
        if not decided:
            return bindings
        kept = [b for b in bindings if not any(
            self.model.range(b.stmt)[1] <= self.model.range(s)[0] and not any(within(b.stmt, t) for t in taken)
            for s, taken in decided)]
        return kept or bindings


# A member of a chain the analysis cannot place (a conditional append, a list it cannot follow):
# ``Chains.feeder`` reads it as a layer it cannot see into.
_UNPLACED: ast.expr = ast.Constant(None)


def _turns(iterable: ast.expr) -> bool:
    """A loop over ``iterable`` surely turns once: a display with an item (none spread) or ``range`` of
    integer literals that is not empty."""
    if isinstance(iterable, (ast.List, ast.Tuple)):
        return bool(iterable.elts) and not any(isinstance(e, ast.Starred) for e in iterable.elts)
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range" \
            and not iterable.keywords and 1 <= len(iterable.args) <= 3 \
            and all(isinstance(a, ast.Constant) and type(a.value) is int for a in iterable.args):
        bounds = [cast(int, cast(ast.Constant, a).value) for a in iterable.args]
        return bounds[2:] != [0] and len(range(*bounds)) > 0
    return False


class ListedLayers:
    """The members of ``nn.Sequential(*layers)`` where ``layers`` is a list the same function
    builds (``layers = []``, then ``layers.append(m)`` / ``layers.extend([a, b])``), in the
    order they are added: the layers nearest the end are known only where the adds that put
    them there run on every path (in one block, in a loop's body: every turn that runs)."""

    def __init__(self, model: SummaryFacts) -> None:
        self.model = model
        self._done: Dict[ast.Call, Optional[List[ast.expr]]] = {}

    def members(self, chain: ast.Call) -> Optional[List[ast.expr]]:
        """The chain's members, first to last; :data:`_UNPLACED` where one cannot be placed.
        None when the chain spreads anything but such a list."""
        if chain not in self._done:
            self._done[chain] = self._members(chain)
        return self._done[chain]

    def _members(self, chain: ast.Call) -> Optional[List[ast.expr]]:
        if not chain.args and not chain.keywords:
            return self._added_modules(chain)
        if not any(isinstance(a, ast.Starred) for a in chain.args):
            return list(chain.args)
        spread = chain.args[0]
        if len(chain.args) == 1 and not chain.keywords and isinstance(spread, ast.Starred) \
                and isinstance(spread.value, (ast.List, ast.Tuple)) \
                and not any(isinstance(e, ast.Starred) for e in spread.value.elts):
            return list(spread.value.elts)  # `nn.Sequential(*[conv, bn])`: the display's items
        if len(chain.args) != 1 or chain.keywords or not isinstance(spread, ast.Starred) \
                or not isinstance(spread.value, ast.Name):
            return None
        built = self._built(chain, spread.value)
        if built is None:
            return None
        first, adds = built
        found: List[ast.expr] = list(first)
        if not adds:
            return found
        last = adds[-1][0]
        for stmt, layers in adds:
            placed = self._placed(stmt, last, chain)
            found.extend(layers if placed else [_UNPLACED])
        if isinstance(last, ast.AugAssign) and not self._sure_last(first, adds, chain):
            # `layers += [...]` in a loop that may not turn: the chain may end in an earlier layer (read so
            # for `+=` only: the appends and extends read before keep their reading, see the tests)
            found[-1] = _UNPLACED
        return found

    def _sure_last(self, first: List[ast.expr], adds: List[Tuple[ast.stmt, List[ast.expr]]], chain: ast.Call) -> bool:
        """The chain ends in the last layer the last add adds, whether or not the loops holding that add
        (and not the chain) turn: none may run zero turns (a display or a ``range`` of literals that is
        not empty), or the one that may is the only one and the layer last before it is written the same
        (``enc = [conv, nn.ReLU(True)]``, then ``enc += [conv, nn.ReLU(True)]`` in the loop)."""
        last = adds[-1][0]
        func = self.model.owner(chain)
        loops = []
        for up in self.model.ancestors(last):
            if up is func:
                break
            if isinstance(up, (ast.For, ast.AsyncFor)) and not within(chain, up) and not _turns(up.iter):
                loops.append(up)
        if not loops:
            return True
        if len(loops) != 1 or not adds[-1][1]:
            return False
        before = [*first, *(layer for stmt, layers in adds if not within(stmt, loops[0]) for layer in layers)]
        return bool(before) and before[-1] is not _UNPLACED and adds[-1][1][-1] is not _UNPLACED \
            and ast.dump(before[-1]) == ast.dump(adds[-1][1][-1])

    def _added_modules(self, chain: ast.Call) -> Optional[List[ast.expr]]:
        """``self.body = nn.Sequential()``, then ``self.body.add_module(name, m)`` statements in
        the same method: the first member is the first add, where it runs on every path (no
        ``if``/``try``/``while`` around it, only loops) and no add comes before it; the members
        after it are not placed. None where ``self.body`` is used otherwise in its class than
        called or added to there (its members may change), or set elsewhere."""
        stmt = self.model.parent(chain)
        func = self.model.owner(chain)
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.value is chain
                and isinstance(func, FUNCTIONS)):
            return None
        target = stmt.targets[0]
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            return None
        cls = self.model.enclosing_class(chain)
        if cls is None or len(self.model.class_attrs(cls).get(target.attr, [])) != 1:
            return None
        adds: List[ast.Call] = []
        for node in self.model.mentions(target.attr):
            if node is target or not isinstance(node, ast.Attribute):
                continue
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                return None  # another receiver's attribute of that name: not followed
            up = self.model.parent(node)
            if isinstance(up, ast.Call) and up.func is node:
                continue  # `self.body(x)`: a call
            call = self.model.parent(up) if isinstance(up, ast.Attribute) else None
            if not (isinstance(up, ast.Attribute) and up.attr in ("add_module", "register_module")
                    and isinstance(call, ast.Call) and call.func is up and len(call.args) == 2
                    and not call.keywords and isinstance(self.model.parent(call), ast.Expr)
                    and self.model.owner(call) is func):
                return None
            adds.append(call)
        if not adds:
            return None
        adds.sort(key=lambda c: self.model.range(c)[0])
        first = adds[0]
        for up in self.model.ancestors(first):
            if up is func:
                break
            if not isinstance(up, (ast.Expr, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                return None
        if self.model.range(first)[0] < self.model.range(stmt)[1]:
            return None
        more = len(adds) > 1 or any(isinstance(up, (ast.For, ast.AsyncFor)) for up in self.model.ancestors(first))
        return [first.args[1], *([_UNPLACED] if more else [])]

    def values(self, container: ast.Call, name: ast.Name) -> Optional[List[ast.expr]]:
        """Every value ``nn.ModuleList(layers)`` may hold, where ``layers`` is such a list (in
        any order); None where one is not known."""
        built = self._built(container, name)
        if built is None:
            return None
        found = [*built[0], *(layer for _, layers in built[1] for layer in layers)]
        return None if any(layer is _UNPLACED for layer in found) else found

    def _built(self, user: ast.Call, name: ast.Name) -> Optional[Tuple[List[ast.expr], List[Tuple[ast.stmt, List[ast.expr]]]]]:
        """``layers = [...]`` (its elements) and the adds after it, before ``user`` reads ``name``
        (the list's only other uses). None where the list is bound otherwise, read, handed on or
        changed otherwise."""
        flow = self.model.flow(self.model.owner(user))
        bindings = flow.bindings.get(name.id, [])
        if not bindings or bindings[0].form != "assign" or not isinstance(bindings[0].value, ast.List) \
                or name.id in flow.declared or any(isinstance(e, ast.Starred) for e in bindings[0].value.elts):
            return None
        start = self.model.range(bindings[0].stmt)[1]
        at = self.model.range(self.model.statement_of(user))[0]
        adds: List[Tuple[ast.stmt, List[ast.expr]]] = []
        for more in bindings[1:]:  # `layers += [a, b]`: the list extended in place (list.__iadd__), bound again
            stmt = more.stmt
            if not (more.form == "aug" and isinstance(stmt, ast.AugAssign) and isinstance(stmt.op, ast.Add)
                    and isinstance(stmt.target, ast.Name) and isinstance(stmt.value, (ast.List, ast.Tuple))
                    and not any(isinstance(e, ast.Starred) for e in stmt.value.elts)
                    and start <= self.model.range(stmt)[0] < at and self.model.owner(stmt) is self.model.owner(user)):
                return None
            adds.append((stmt, list(stmt.value.elts)))
        for pos, load in sorted(flow.loads.get(name.id, []), key=lambda use: use[0]):
            if load is name:
                continue
            added = self._added(load)
            if added is None or not start <= pos < at or self.model.owner(load) is not self.model.owner(user):
                return None  # the list is read, handed on or changed otherwise: its order is unknown
            adds.append(added)
        adds.sort(key=lambda add: self.model.range(add[0])[0])
        return list(bindings[0].value.elts), adds

    def _added(self, load: ast.expr) -> Optional[Tuple[ast.stmt, List[ast.expr]]]:
        """``layers.append(m)`` or ``layers.extend([a, b])``, a statement of its own: the
        statement and what it adds (:data:`_UNPLACED` for what an ``extend`` of something else adds)."""
        attr = self.model.parent(load)
        call = self.model.parent(attr) if isinstance(attr, ast.Attribute) else None
        stmt = self.model.parent(call) if isinstance(call, ast.Call) else None
        if not (isinstance(attr, ast.Attribute) and isinstance(call, ast.Call) and call.func is attr
                and isinstance(stmt, ast.Expr) and len(call.args) == 1 and not call.keywords
                and not isinstance(call.args[0], ast.Starred)):
            return None
        if attr.attr == "append":
            return stmt, [call.args[0]]
        if attr.attr == "extend":
            given = call.args[0]
            if isinstance(given, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in given.elts):
                return stmt, list(given.elts)
            return stmt, [_UNPLACED]
        return None

    def _placed(self, stmt: ast.stmt, last: ast.stmt, chain: ast.Call) -> bool:
        """The add ``stmt`` runs, in order, on every path that runs the last add: it is in the
        last add's block or in a block holding that one, and only loops (no ``if``, ``try``,
        ``while``...) stand between that block and the chain's function."""
        func = self.model.owner(chain)
        blocks = []
        for up in self.model.ancestors(last):
            if up is func:
                break
            if not isinstance(up, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
                return False
            blocks.append(up)
        if isinstance(func, (ast.Lambda, ast.Module)) or not blocks and self.model.parent(last) is not func:
            return False
        parent = self.model.parent(stmt)
        return parent is func or any(parent is b for b in blocks) and isinstance(stmt, (ast.Expr, ast.AugAssign)) \
            and any(stmt is s for s in getattr(parent, "body", []))
