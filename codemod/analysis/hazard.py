"""Static hazard analysis: which in-place ops really break autograd.

Most in-place ops are harmless (``out = conv(x); out += x``). A conflict needs a tensor that an
op saved for backward — its output (``exp``, ``sigmoid``, ``softmax``, ``relu``...) or an input
(``matmul``, ``mul`` by a tensor, ``linear``, norms...) — and that is later modified in place,
directly or through an alias or a view, with grad mode on. Which op saves what is data measured
from torch (``OP_SAVES`` and ``OP_SAVES_MEASURED`` in ``torch_api.py``).
"""

from __future__ import annotations

import ast
import enum
import itertools
import weakref
from functools import partial
from typing import (
    AbstractSet,
    Callable,
    Dict,
    Final,
    FrozenSet,
    Iterable,
    Iterator,
    List,
    Literal,
    NamedTuple,
    Optional,
    Protocol,
    Sequence,
    Set,
    Tuple,
    Type,
    Union,
    cast,
)

from codemod import torch_api
from codemod.analysis import carried, injected
from codemod.analysis.basic_index import copying_index as _copying_index, decided as _decided, module_function as _module_function
from codemod.analysis.basic_index import subject_key as _subject_key, uninverted as _uninverted, zero_dim_index as _zero_dim_index
from codemod.analysis.binder import Binding, Flow
from codemod.analysis.branches import (always_binds, binds, branch, copied_where_it_requires_grad, dead_arm, dead_on_none, flag_excluded,
                                       flag_position, flags_left_off, needed_flags, off_flag, other_arm, requires_grad_test,
                                       statement_lists, steady_flag, within)
from codemod.analysis.classes import AttrValue
from codemod.analysis.consumed import (Ends, consumed_before, consumed_then_dead, dead_result, keeps_nothing,
                                       name_escapes, stores_nothing,
                                       refused_numpy_before, written_name)
from codemod.analysis.out_abort import OutFacts, abort_line
from codemod.analysis.dataflow import VIEW_ATTRIBUTES, VIEW_METHODS, element_bound, row_of_index_matrix
from codemod.analysis.dtype import BITWISE, INTEGRAL_OK, Floating, Integral, boolean_tensor, op_short
from codemod.analysis.index_saves import IndexSaves
from codemod.analysis.kinds import TENSORISH, Kind
from codemod.analysis.leaves import creates_leaf
from codemod.analysis.names import identity_argument
from codemod.analysis.op_forms import form_saves, sparse_made
from codemod.analysis.project import CallFact
from codemod.analysis.requires_grad import (SHAPE_METHODS, Constants, RequiresGradFacts, differentiable_operands, makes_fresh,
                                            may_be_frozen)
from codemod.analysis.saved_for import may_take_a_number, measured_users
from codemod.analysis.summaries import (
    FUNCTION_VIEWS, Returns, Saved, Summaries, SummaryFacts, flag_set_after, helper_of_file_stores_nothing, index_operand,
    passed_values, set_from_outside,
    switched_on, walk_returned,
)
from codemod.analysis.super_forward import super_torch_layer
from codemod.analysis.syntax import (CONTAINER_FILLING, FUNCTIONS, OWNERS, Function, Located, Owner, Pos, Span, call_args, default_of, is_const, passed_for, spreads,
                                     subscript_base, target_key)
from codemod.analysis.tensor_kind import TAKES_ANY, is_tensor, tensor_only, used_as_container
from codemod.analysis.views import Views, own_callee, view_chain, view_of_itself

# torch.nn classes that are no modules: building one is not a construction of a layer
_NOT_MODULES = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})
_OPERATORS: Dict[Type[ast.operator], Tuple[str, str]] = {  # operator -> (op, symbol)
    ast.Mult: ("mul", "*"), ast.Div: ("div", "/"), ast.Add: ("add", "+"), ast.Sub: ("sub", "-"),
    ast.MatMult: ("matmul", "@"), ast.Pow: ("pow", "**"), ast.FloorDiv: ("floor_divide", "//"),
    ast.Mod: ("remainder", "%"),
}
UNSEEN: Final = "unseen"  # a call the analysis cannot see into
Saves = Union[Tuple[str, ...], Literal["unseen"]]  # what an op saves ("input0", "output"...), or UNSEEN


class HazardFacts(SummaryFacts, RequiresGradFacts, Protocol):
    """What the hazard analysis asks of the model: every fact of the parts below it, the
    summaries of the module's own functions, and the views PyTorch refuses to modify."""

    @property
    def summaries(self) -> Summaries: ...

    @property
    def views(self) -> Views: ...

    def handed_own_values(self, target: ast.AST) -> bool: ...


# Attributes and methods whose result carries no gradient back to the tensor they read.
_INDEX_ATTRIBUTES = frozenset({
    "shape", "dtype", "device", "ndim", "size", "dim", "numel", "argmax", "argmin", "argsort", "nonzero",
    "indices", "item", "tolist", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite",
})


# Ops of INTEGRAL_OK that save an input for that input's own gradient (``x.pow(2)``, ``x.abs()``),
# not only for another operand's (``x * w`` saves x for w's gradient: nothing when w requires none).
_OWN_GRADIENT = frozenset({"pow", "**", "abs", "clamp", "clip", "clamp_min", "clamp_max", "square", "prod",
                           "cumprod"})


# Ops that raise on operands of different dtypes ("expected scalar type Float but found Long"),
# measured with torch 2.13 (tests/test_recall42_carried_state.py checks it): one floating operand
# shows the others are floating.
ONE_DTYPE = frozenset({"einsum", "matmul", "@", "mm", "bmm", "addmm", "baddbmm"})


# Comparisons whose result indexes as a mask (not `is`, `in`: Python bools only).
_MASK_COMPARISONS = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _by_short_name(name: str, short: str) -> Saves:
    """What a torch function without op data of its own saves, by its short name; nothing for a
    collective (``dist.gather(t, ...)`` records no autograd node: it is not ``torch.gather``)."""
    if name.startswith("torch.distributed.") and not name.startswith("torch.distributed.nn."):
        return ()
    return saves(short)


def saves(name: str) -> Saves:
    """What the op ``name`` saves: measured by version counters, else by grad_fn, else UNSEEN."""
    measured = torch_api.OP_SAVES_MEASURED.get(name)
    if measured is not None:
        return measured
    return torch_api.OP_SAVES.get(name, UNSEEN)


# torch functions whose result is a Python value about their argument (a type test, a count):
# they record no graph, so they save nothing (``torch.is_tensor(x)`` in a device test).
_PYTHON_VALUED = frozenset({"is_tensor", "is_storage", "is_floating_point", "is_complex", "is_nonzero",
                            "is_same_size", "numel", "is_conj", "is_neg", "is_inference"})
# torch functions with op data whose first argument may be a Python number (measured: each
# accepted ``2.0`` there); every other one raises a TypeError on a number.
_NUMBER_FIRST = frozenset({"add", "div", "floor_divide", "mul", "pow", "remainder", "sub", "float_power",
                           "true_divide", "multiply", "subtract", "divide", "fmod", "where", "full"})


def _tensor_use(model: "HazardFacts", load: ast.expr) -> bool:
    """``load`` is the receiver of a method only tensors have among the values code usually
    holds (``x.pow(2)``, ``x.norm()``; not ``sum``, ``max`` or ``view``, which numpy shares), or
    the first argument of a torch op that takes tensors only there (``torch.norm(x)``,
    ``F.softmax(x, -1)``; not ``torch.cat``, which takes a list)."""
    parent = model.parent(load)
    if isinstance(parent, ast.Attribute) and parent.value is load and tensor_only(parent.attr):
        call = model.parent(parent)
        # `math.sqrt(...)`: a module's function, no method
        return isinstance(call, ast.Call) and call.func is parent and not model.qualified_names(parent)
    if isinstance(parent, ast.Call) and parent.args[:1] == [load]:
        name = model.torch_name(parent.func)
        short = (name or "").rsplit(".", 1)[-1]
        return name is not None and saves(short) != UNSEEN and short not in _NUMBER_FIRST \
            and short not in TAKES_ANY and not short.endswith("_")
    return False


def read_as_tensor(model: "HazardFacts", base: ast.expr, write: Located) -> bool:
    """``x`` read, before the write, where any other value than a tensor would have raised
    (see :func:`_tensor_use`), and not bound again since: at the write ``x`` is a tensor."""
    if not isinstance(base, ast.Name):
        return False
    flow = model.flow(model.owner(write))
    stmt = model.statement_of(write)
    before = model.range(write)[0]

    def values(at: Located) -> Set[int]:  # the bindings (not in-place updates) that reach it
        return {id(b) for b in model.reaching(flow, base.id, at) if b.form != "aug"}

    reaching: Optional[Set[int]] = None
    for pos, load in flow.loads.get(base.id, []):
        if not _tensor_use(model, load):
            continue
        if not (pos < before or (isinstance(write, (ast.AugAssign, ast.Assign)) and within(load, write.value))):
            continue
        reaching = values(stmt) if reaching is None else reaching
        if reaching and values(model.statement_of(load)) == reaching:
            return True  # the same value: no binding between the read and the write
    return False


def tensor_on_live_paths(model: "HazardFacts", base: ast.expr, write: Located) -> bool:
    """``x`` is a tensor at the write on every path that runs: each binding that reaches it is
    an assignment of a tensor, but those in a branch no instance of the file takes
    (``Decided.never_runs``: ``if self.attention is not None: out = self.attention_module(out)``
    where ``__init__`` sets ``self.attention = None``), and at least one is left."""
    if not isinstance(base, ast.Name):
        return False
    flow = model.flow(model.owner(write))
    decided = model.summaries.chains.decided
    live = [b for b in model.reaching(flow, base.id, model.statement_of(write))
            if not (isinstance(b.stmt, ast.stmt) and decided.never_runs(b.stmt))]
    return bool(live) and all(b.form == "assign" and b.value is not None and model.kind(b.value) is Kind.TENSOR
                              for b in live)


class Tier(str, enum.Enum):
    """How much the analysis saw of a hazard."""

    PROVEN = "proven"  # a saving op identified before the write: the default report
    POSSIBLE = "possible"  # provenance unknown (a call it cannot see into, the caller): on request


class Hazard(NamedTuple):
    """Why an in-place write breaks backward, and how much of that the analysis saw."""

    reason: str
    tier: Tier = Tier.PROVEN

    @property
    def proven(self) -> bool:
        return self.tier is Tier.PROVEN


def _sliced_name(expr: ast.expr) -> Optional[str]:
    """``z`` of ``z[:, :c]`` / ``z[:, c:, ...]`` / ``z[0]``: basic indexing (slices, integers,
    ``...``) of a name, always a view of it (a tensor or list index copies: None)."""
    if not (isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name)):
        return None
    parts = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
    for part in parts:
        if isinstance(part, ast.Slice):
            bounds = [b for b in (part.lower, part.upper, part.step) if b is not None]
            if all(isinstance(b, (ast.Constant, ast.Name, ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Call)) for b in bounds):
                continue
            return None
        if isinstance(part, ast.Constant) and (part.value is Ellipsis or type(part.value) is int):
            continue
        return None
    return expr.value.id


def _tensor_sliced(model: "HazardFacts", item: ast.expr) -> bool:
    """``z[:, :c]`` (a slice: only tensors and arrays take one per dimension), or ``z[0]`` of a ``z``
    shown to be a tensor: items of a tuple or list (``args[0]``, ``args[1]``) are distinct objects."""
    parts = item.slice.elts if isinstance(item, ast.Subscript) and isinstance(item.slice, ast.Tuple) else [
        getattr(item, "slice", None)]
    return len(parts) > 1 or isinstance(parts[0], ast.Slice) or isinstance(item, ast.Subscript) and is_tensor(item.value, model)


def _unpacked_bases(model: "HazardFacts", value: object, width: int) -> List[Optional[str]]:
    """What each item of ``a, b = value`` slices (``z`` of ``z[:, :c]``; None: not a slice), one
    per target; [] when ``value`` is no such tuple. A call whose callee hands back slices of one
    argument (``Returns.SLICES``: ``return t[:, :c], t[:, c:]``), writing nothing, slices one
    tensor in every item."""
    if isinstance(value, ast.Tuple) and len(value.elts) == width:
        return [_sliced_name(e) for e in value.elts]
    if isinstance(value, ast.Call):
        summary = model.summaries.of_call(value)
        if summary is not None and summary.returns is Returns.SLICES and not summary.mutates:
            return ["<the argument>"] * width
    return []


def _slice_of_a_tensor(model: "HazardFacts", base: ast.expr, at: Located) -> bool:
    """``z2`` of ``z1, z2 = split_half(z)``, every binding reaching ``at``, where the callee hands
    back slices of the argument (``Returns.SLICES``) and that argument is a tensor: a tensor."""
    if not isinstance(base, ast.Name):
        return False
    bindings = model.reaching(model.flow(model.owner(at)), base.id, model.statement_of(at))
    for b in bindings:
        value = getattr(b.stmt, "value", None)
        if b.form != "other" or not isinstance(b.stmt, ast.Assign) or not isinstance(value, ast.Call):
            return False
        summary = model.summaries.of_call(value)
        index = summary.returned_input if summary is not None and summary.returns is Returns.SLICES else None
        if index is None or index >= len(value.args) or not is_tensor(value.args[index], model):
            return False
    return bool(bindings)


def dict_entries(model: "HazardFacts", flow: Flow, key: str, views: Set[str], stmt: Located) -> Dict[str, str]:
    """The aliases of ``key`` (``views``) that are another entry of the dict ``key`` is an entry of
    (``val = props[p][None, :]`` beside ``idx_m = props["_idx_m"]``; ``props`` used as a container:
    ``used_as_container``), by name, each with that dict's name: a dict's entries are no views of
    one tensor, unless the keys name the same entry, which a variable key may (possible at most)."""
    mine = _entry_of(model, flow, key, stmt)
    if mine is None:
        return {}
    return {other: mine for other in views if _entry_of(model, flow, other, stmt) == mine}


def _entry_of(model: "HazardFacts", flow: Flow, key: str, stmt: Located) -> Optional[str]:
    """The dict ``key``'s one reaching binding takes an entry of (``props`` of ``val = props[p][None, :]``),
    through subscripts and views of the entry; None where it is not an entry of a container."""
    reaching = [b for b in model.reaching(flow, key, stmt) if b.form != "aug"]
    if len(reaching) != 1 or reaching[0].form != "assign" or reaching[0].value is None:
        return None
    value: ast.expr = reaching[0].value
    while True:
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name):
            used = used_as_container(model, value.value, reaching[0].stmt)
            return value.value.id if used else None
        if isinstance(value, ast.Subscript):
            value = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS:
            value = value.func.value
        elif isinstance(value, ast.Attribute) and value.attr in ("T", "mT", "real", "imag"):
            value = value.value
        else:
            return None


def _one_entry(found: Hazard, member: str, key: str, container: str) -> Hazard:
    """A hazard found through ``member``, another entry of the dict ``container`` than ``key``'s: possible only."""
    if not found.proven:
        return found
    return _possible(f"{found.reason}, if `{member}` and `{key}` are one entry of `{container}` (entries of a dict "
                     "are no views of one tensor; the analysis cannot tell the keys apart)")


def _counter_siblings(self: "Hazards", flow: Flow, key: str, stmt: Located, start: Pos) -> List[Tuple[str, Pos]]:
    """``z1, z2 = z[:, :c], z[:, c:]``: the other names one unpacking of views of one base
    binds beside ``key`` (written at ``stmt``), not rebound since: disjoint memory, but one
    version counter, so a write into ``key`` breaks what an op saved of them. Only a tuple
    of views written out (``chunk``/``split`` outputs are refused by PyTorch: view-write)."""
    bindings = self._reaching(flow, key, stmt, start)
    made = bindings[0] if len(bindings) == 1 else None
    value = getattr(made.stmt, "value", None) if made is not None else None
    if made is None or made.form not in ("assign", "other") or not isinstance(made.stmt, ast.Assign) \
            or len(made.stmt.targets) != 1 or not isinstance(made.stmt.targets[0], ast.Tuple):
        return []
    bases = _unpacked_bases(self.model, value, len(made.stmt.targets[0].elts))
    names = [target_key(t) for t in made.stmt.targets[0].elts]
    base = bases[names.index(key)] if key in names and bases else None
    if base is None or isinstance(value, ast.Tuple) and not _tensor_sliced(self.model, value.elts[names.index(key)]):
        return []
    found: List[Tuple[str, Pos]] = []
    for name, source in zip(names, bases):
        if name is None or name == key or source != base:
            continue
        reaching = self._reaching(flow, name, stmt, start)
        if len(reaching) == 1 and reaching[0].stmt is made.stmt:
            found.append((name, made.end))
    return found


def _unseen_grad_op(model: "HazardFacts", expr: ast.expr) -> Optional[Op]:
    """An op under a with-statement named like torch's grad-off contexts but not resolved to torch
    (``grad_mode.GradMode.unseen_grad_off``: ``torch.no_grad()`` on a parameter named ``torch``):
    whether autograd records it is unknown, so what it saves is too (UNSEEN, never proven)."""
    if isinstance(expr, (ast.Call, ast.BinOp, ast.UnaryOp)) and model.grad.local_reason(expr) == "grad-unseen":
        return Op(model.code(expr.func if isinstance(expr, ast.Call) else expr).strip(), UNSEEN)
    return None


def _possible(reason: str) -> Hazard:
    return Hazard(reason, Tier.POSSIBLE)


class IndexHazard(Hazard):
    """A save of the written tensor as an op's index, target or mask (:mod:`~codemod.analysis.index_saves`):
    proven for an integral or boolean tensor too (the op refuses anything but a tensor there)."""

    __slots__ = ()


def best(found: Iterable[Optional[Hazard]]) -> Optional[Hazard]:
    """The first proven hazard, else the first possible one (``found`` is consumed lazily)."""
    fallback: Optional[Hazard] = None
    for hazard in found:
        if hazard is None:
            continue
        if hazard.proven:
            return hazard
        fallback = fallback or hazard
    return fallback


def refused_view(model: "HazardFacts", call: ast.Call, arg: ast.expr) -> Optional[str]:
    """``self.block(left)`` with ``left, right = h.chunk(2)`` and ``h`` requiring grad, grad on
    at the call: the callee's write into its parameter goes into an output of a multi-view op,
    which PyTorch refuses to modify in place. Why, in words; None where that is not shown."""
    if not isinstance(arg, ast.Name) or model.intended_reason(call, None):
        return None
    views = model.views
    origin = views.refused(arg, model.statement_of(call))
    if origin is None or origin.kind != "multi-output" or not origin.certain \
            or views.base_requires_grad(origin) != "yes":
        return None
    creation = origin.creation
    func = creation.func if isinstance(creation, ast.Call) else None
    op = func.attr if isinstance(func, ast.Attribute) else (model.torch_name(func) or "") if func else ""
    if not op and isinstance(func, ast.Name):
        op = func.id  # the file's own function returning the views (`halves(x)`)
    what = f"an output of `{op.rsplit('.', 1)[-1]}()`" if op else "a view from iterating a tensor"
    return (f"`{arg.id}` is {what} at line {getattr(creation, 'lineno', 0)}, a view PyTorch refuses to "
            "modify in place (\"... is a view and is being modified inplace\")")


def refused_elsewhere(model: "HazardFacts", func: Function, param: str, index: Optional[int],
                      flag: Optional["Flag"] = None) -> List[Hazard]:
    """A call of ``func`` in another file of the run passes, for ``param`` (at ``index``), an
    output of a multi-view op of a tensor that requires grad, with grad on
    (``CallFact.args_refused``, as that file's analysis saw it): the write into the parameter
    raises there. The hazard of the first such call (none where none is shown)."""
    for call, position in calls_from_elsewhere(model, func, index, flag):
        if param in call.args_refused or (position is not None and position in call.args_refused):
            return [Hazard(f"`{param}` is the caller's tensor: a call in `{call.caller or 'another module'}` passes an "
                           "output of a multi-view op (`chunk`, `split`, `unbind`) of a tensor that requires grad, a "
                           "view PyTorch refuses to modify in place (\"... is a view and is being modified inplace\")")]
    return []


_CONDITIONAL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.Match, ast.IfExp, ast.BoolOp,
                ast.comprehension, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _used_on_every_call(model: "HazardFacts", func: Function, param: str) -> bool:
    """Every use of ``param`` in ``func`` runs whenever ``func`` does: none sits under an ``if``,
    a loop, a ``try``, a conditional expression or a nested scope. What another file's call
    passes is all that is known of it: a write that a flag guards (``if inplace:
    torch.relu_(input)`` of ``F.relu``) may not run for that call."""
    last = None
    for node in model.walk(func):
        if isinstance(node, ast.Name) and node.id == param:
            last = node if last is None or (node.lineno, node.col_offset) > (last.lineno, last.col_offset) else last
            for anc in model.ancestors(node):
                if anc is func:
                    break
                if isinstance(anc, _CONDITIONAL):
                    return False
    # a `return` under a test before a use (`if not inplace: return f(x)`, then the write): a
    # call may leave before it
    return last is None or not any(
        model.owner(r) is func and (r.lineno, r.col_offset) < (last.lineno, last.col_offset)
        and any(isinstance(anc, _CONDITIONAL) for anc in _up_to(model, r, func))
        for r in model.walk(func) if isinstance(r, ast.Return))


def _up_to(model: "HazardFacts", node: ast.AST, func: Function) -> Iterator[ast.AST]:
    """The ancestors of ``node`` below ``func``."""
    for anc in model.ancestors(node):
        if anc is func:
            return
        yield anc


# Augmented assignments whose op saves its right operand for the gradient of the written tensor
# (measured: ``x[1] *= x[0]``, ``/=``, ``**=`` raise at backward; ``+=`` and ``-=`` save nothing).
_SAVES_OTHER = (ast.Mult, ast.Div, ast.Pow)


def saved_by_the_write(model: "HazardFacts", node: Located, target: ast.expr) -> Optional[Hazard]:
    """``x[..., 5:] *= x[..., 4:5]``: the write's own op saves its right operand for the
    gradient of ``x[..., 5:]``, and that operand is ``x`` or a view of it (a name, basic
    indexing: slices, numbers, ``...``), which shares ``x``'s version counter; the write then
    bumps it, so backward finds the saved operand modified. Proven where ``x`` requires grad as
    far as the analysis sees, possible where it is a tensor that may; None otherwise."""
    if not (isinstance(node, ast.AugAssign) and isinstance(node.op, _SAVES_OTHER)):
        return None
    base = _base(target)
    key = target_key(base)
    if key is None or not _plain_view_of(model, node.value, key):
        return None
    reason = (f"`{model.code(node.value).strip()}` is saved for backward by this write's own "
              f"`{_AUG_SYMBOL[type(node.op)]}=` (for the gradient of the part it writes), and it is "
              f"`{key}` or a view of it, which the write then modifies")
    return _by_requirement(model, base, model.statement_of(node), key, reason)


def _by_requirement(model: "HazardFacts", base: ast.expr, stmt: Located, name: str, reason: str) -> Optional[Hazard]:
    """A write's own save (its operand, its chain): proven where ``base`` requires grad as far
    as the analysis sees, possible where it is a tensor that may, None otherwise."""
    requires = model.views.requirement.requires_grad(base, stmt)
    if requires == "yes":
        return Hazard(reason)
    if requires == "no" or not is_tensor(base, model):
        return None
    return _possible(f"{reason}, if `{name}` requires grad (nothing the analysis sees shows it does)")


_AUG_SYMBOL = {ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}


# In-place methods whose saves depend on their other operands (``x.pow_(2)`` saves nothing of
# ``x``, measured; a tensor exponent does; ``scatter_reduce_``/``index_reduce_`` by the reduction):
# the table's entry is not what every call saves, so a chain through them proves nothing.
_SAVES_BY_OPERANDS = frozenset({"pow_", "float_power_", "scatter_reduce_", "index_reduce_"})


def saved_by_the_chain(model: "HazardFacts", node: Located, target: ast.expr,
                       grad_shown: Callable[[Iterable[ast.expr], Located], bool]) -> Optional[Hazard]:
    """``buf.exp_().sub_(1)``: a link of an in-place chain saves the tensor it writes (its input
    or its result, measured: ``exp_``, ``sigmoid_``, ``relu_``, ...; ``mul_``, ``add_``, ``clamp_``
    save nothing of it), and a later link writes that same tensor in place, so backward finds
    what the first saved modified. Proven where the tensor requires grad, or the analysis has the
    grad evidence every other save has (``grad_shown``: an activation, a value computed from an
    argument), as ``x.exp_()`` on one line and ``x.clamp_()`` on the next already were; possible
    where it is a tensor that may; None otherwise."""
    methods: List[str] = []  # the chain's methods, outermost first
    link = node
    while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute) \
            and link.func.attr in torch_api.INPLACE_METHODS:
        methods.append(link.func.attr)
        link = link.func.value
    if len(methods) < 2 or link is not target:
        return None
    methods.reverse()  # innermost first
    saving = next((m for m in methods[:-1] if m not in _SAVES_BY_OPERANDS
                   and {"input0", "output"} & set(torch_api.OP_SAVES_MEASURED.get(m, ()))), None)
    if saving is None:
        return None
    name = model.code(target).strip()
    reason = (f"`{name}.{saving}()` saves `{name}` for backward, and the chained "
              f"`{methods[-1]}()` on the same line then modifies it")
    stmt = model.statement_of(node)
    if grad_shown([target], stmt):
        return Hazard(reason)
    return _by_requirement(model, target, stmt, name, reason)


def _plain_view_of(model: "HazardFacts", expr: ast.expr, key: str) -> bool:
    """``expr`` is the tensor named ``key`` or a view of it by basic indexing (slices, numbers,
    ``...``, ``None``): never a copy (advanced indexing with a tensor copies)."""
    while isinstance(expr, ast.Subscript):
        if not _basic_index(model, expr):
            return False
        expr = expr.value
    return target_key(expr) == key


def _basic_index(model: "HazardFacts", sub: ast.Subscript) -> bool:
    """Every piece of the index is a slice, an int, ``...`` or ``None``: the result is a view."""
    for piece in sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]:
        if isinstance(piece, ast.Slice) or isinstance(piece, ast.Constant) and (
                piece.value is None or piece.value is Ellipsis or type(piece.value) is int):
            continue
        if isinstance(piece, ast.UnaryOp) and isinstance(piece.op, ast.USub) \
                and isinstance(piece.operand, ast.Constant) and type(piece.operand.value) is int:
            continue
        if model.kind(piece) is Kind.SCALAR and not isinstance(piece, ast.Constant):
            continue  # an int (a bool would mask: a copy)
        return False
    return True


# Tensor methods whose result is always a view of the receiver (``reshape``, ``flatten`` and
# ``contiguous`` may copy; einops too).
_SURE_VIEWS = frozenset({"view", "view_as", "transpose", "permute", "unsqueeze", "squeeze", "narrow", "select",
                         "expand", "expand_as", "t", "unflatten", "diagonal", "movedim", "swapaxes", "unfold"})


def _sure_view_of(model: "HazardFacts", expr: ast.expr, key: str) -> bool:
    """``expr`` is a view of the tensor named ``key`` for sure: basic indexing, the methods
    of ``_SURE_VIEWS`` and the torch functions of ``FUNCTION_VIEWS``, in any order; never what
    may be a copy (advanced indexing, ``reshape``)."""
    viewed = False
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _SURE_VIEWS \
                and model.torch_name(expr.func) is None:
            expr, viewed = expr.func.value, True
        elif isinstance(expr, ast.Call) and expr.args and not isinstance(expr.args[0], ast.Starred) \
                and (model.torch_name(expr.func) or "") in FUNCTION_VIEWS:
            expr, viewed = expr.args[0], True
        elif isinstance(expr, ast.Subscript) and _basic_index(model, expr):
            expr, viewed = expr.value, True
        else:
            return viewed and target_key(expr) == key


def _helper_view(model: "HazardFacts", call: ast.Call, arg: ast.expr) -> bool:
    """``call`` runs a function that hands ``arg`` back as it came (its summary), or, a function
    of this file, a view of it for sure: every return a chain of sure views (``_SURE_VIEWS``,
    ``FUNCTION_VIEWS``, basic indexing) of that parameter, which nothing in it binds again."""
    summaries = model.summaries
    how = summaries.saved_inputs.hands_back(call, arg)
    if how is Returns.INPUT or how is None:
        return how is not None
    target = summaries.targets.callee(call)
    func = target[0] if isinstance(target, tuple) else None
    summary = summaries.of_call(call)
    if not isinstance(func, FUNCTIONS) or func.args.vararg is not None or summary is None:
        return False
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if params[:1] in (["self"], ["cls"]) and isinstance(model.parent(func), ast.ClassDef):
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if not (isinstance(receiver, ast.Name) and receiver.id == "self") \
                or own_callee(model.views, call, model.views.returned.extended()) is not func:
            return False  # `self._view(x)` of the caller's class, undecorated, no class of the file extending it
        # (the summary's positions start after the receiver)
        params = params[1:]
    index = summary.returned_input
    if index is None or index >= len(params):
        return False
    param = params[index]
    if any(b.form != "param" for b in model.flow(func).bindings.get(param, [])):
        return False
    returns = [n.value for n in model.walk(func) if isinstance(n, ast.Return) and model.owner(n) is func]
    return bool(returns) and all(r is not None and _sure_view_of(model, r, param) for r in returns)


def _helper_view_source(model: "HazardFacts", b: Binding) -> Optional[str]:
    """``d = diagonal(v)`` / ``d = self._view(x)`` (a plain binding of one name) of a helper that hands
    ``v`` back as it came or a sure view of it (:func:`_helper_view`): the name ``v``, else None."""
    value = b.value
    if b.form != "assign" or not isinstance(value, ast.Call) or spreads(value):
        return None
    for arg in value.args:
        if isinstance(arg, ast.Name) and _helper_view(model, value, arg):
            return arg.id
    return None


def helper_views(model: "HazardFacts", reaching: Callable[[str, Located], List[Binding]], flow: Flow, key: str,
                 family: Set[str], stmt: Located) -> Set[str]:
    """The names a write into ``key`` (or one of ``family``, its aliases) at ``stmt`` also writes into
    through a helper's view: ``d = diagonal(v)`` then ``d.add_(1)`` writes into ``v`` (a view shares
    its base's memory and version counter), and ``d = diagonal(v)`` then ``v.add_(1)`` into ``d``.
    Each only where one binding of each name reaches ``stmt``, the helper's call, and ``v`` is bound at
    ``stmt`` as it was at the call (not rebound since); ``reaching(name, at)``: the plain bindings
    of ``name`` that reach ``at``. As the dataflow's aliases take ``d = v.t()``."""
    found: Set[str] = set()
    members = set(family)
    pending = list(members)
    while pending and len(members) < 24:
        member = pending.pop()
        made = reaching(member, stmt)
        source = _helper_view_source(model, made[0]) if len(made) == 1 else None
        if source is not None and source not in members \
                and _same_bindings(reaching(source, stmt), reaching(source, made[0].stmt)):
            found.add(source)
            members.add(source)
            pending.append(source)
    for other, bindings in flow.bindings.items():  # views a helper made of a member, bound to a name
        if other in members or not any(b.form == "assign" and isinstance(b.value, ast.Call) for b in bindings):
            continue
        made = reaching(other, stmt)
        source = _helper_view_source(model, made[0]) if len(made) == 1 else None
        if source in members and _same_bindings(reaching(source, stmt), reaching(source, made[0].stmt)) \
                and made[0].end <= model.range(stmt)[0]:
            found.add(other)
    return found


def _same_bindings(here: List[Binding], there: List[Binding]) -> bool:
    return bool(here) and [id(b) for b in here] == [id(b) for b in there]


def detached_copy(model: "HazardFacts", flow: Flow, key: str, stmt: Located, depth: int = 0) -> bool:
    """What ``key`` holds at ``stmt`` is, on every path, ``t.detach()``, a view or part of one, or a
    name that holds one (``p_ = p.detach()``; ``flat = p_.view(-1)``): a tensor that requires no
    grad, which PyTorch lets one write into with grad on (no leaf error, whatever ``t`` is). It
    still shares ``t``'s version counter: a write into it trips what autograd saved of ``t``."""
    reaching = [b for b in model.reaching(flow, key, stmt) if b.form != "aug"] if depth < 8 else []
    for binding in reaching:
        value = binding.value
        if binding.form != "assign" or value is None:
            return False
        while True:  # down the views and parts to what they view
            if isinstance(value, ast.Subscript):
                value = value.value
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr in VIEW_METHODS and value.func.attr != "detach":
                value = value.func.value
            else:
                break
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "detach":
            continue
        base = target_key(value)
        if base is None or base == key or not detached_copy(model, flow, base, binding.stmt, depth + 1):
            return False
    return bool(reaching)


def floating_shown(model: "HazardFacts", floating: Floating, expr: ast.expr, at: Located) -> bool:
    """``expr`` is a floating tensor: its dtype shows it (:class:`~codemod.analysis.dtype.Floating`),
    or it requires grad as far as the analysis sees (only floating and complex tensors can)."""
    return floating.floating(expr) or model.views.requirement.requires_grad(expr, at) == "yes"


_GRAD_SWITCHES = ("enable_grad", "set_grad_enabled", "inference_mode")


def grad_off_alias(model: "HazardFacts", node: Located, target: ast.expr) -> bool:
    """``w = vt.clone() if torch.is_grad_enabled() else vt`` then a write into ``w``: the arm
    that is a tensor itself (``vt``) is taken only where grad is off. Where the function never turns grad on (no ``enable_grad``, ``set_grad_enabled``,
    ``inference_mode``) and the write sits in the same ``with`` blocks as the binding, grad is
    off at the write and was off wherever the function ran before it outside ``no_grad``
    blocks: nothing the write changes was saved for backward (the op that made ``vt`` ran with
    grad off too), and the other arm (a ``clone``) writes a copy. ``w`` must have that one binding there."""
    base = _base(target)
    if not isinstance(base, ast.Name):
        return False
    stmt = model.statement_of(node)
    owner = model.owner(stmt)
    reaching = model.reaching(model.flow(owner), base.id, stmt)
    if len(reaching) != 1 or reaching[0].form != "assign" or not isinstance(reaching[0].value, ast.IfExp):
        return False
    value = reaching[0].value
    test, on_when = value.test, True
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, on_when = test.operand, not on_when
    if not (isinstance(test, ast.Call) and not test.args and not test.keywords
            and model.torch_name(test.func) == "torch.is_grad_enabled"):
        return False
    grad_on, grad_off = (value.body, value.orelse) if on_when else (value.orelse, value.body)
    copied = isinstance(grad_on, ast.Call) and (
        isinstance(grad_on.func, ast.Attribute) and grad_on.func.attr == "clone" and model.torch_name(grad_on.func) is None
        or model.torch_name(grad_on.func) == "torch.clone")
    if not copied or target_key(grad_off) is None:
        return False
    if any(isinstance(n, ast.Call) and (model.torch_name(n.func) or "").endswith(_GRAD_SWITCHES)
           for n in model.walk(owner)):
        return False

    def withs(at: ast.AST) -> List[int]:
        found: List[int] = []
        for up in model.ancestors(at):
            if up is owner:
                break
            if isinstance(up, (ast.With, ast.AsyncWith)):
                found.append(id(up))
        return found
    return withs(reaching[0].stmt) == withs(stmt)


def _base(target: ast.expr) -> ast.expr:
    """``x`` of ``x[i][j]``: the tensor a subscript writes into."""
    while isinstance(target, ast.Subscript):
        target = target.value
    return target


class Op(NamedTuple):
    """An op an expression runs, by a name for messages, and what it saves for backward."""

    name: str
    saves: Saves


# Binary ops whose saves differ when one operand is a Python number (``<op>_scalar`` and
# ``r<op>_scalar`` in OP_SAVES_MEASURED): their call forms are measured like the operators.
_BINARY = frozenset({"pow", "mul", "div", "add", "sub", "remainder", "floor_divide"})
# Methods of Python containers that store what they are given (they run no op on it).
_CONTAINER_METHODS = CONTAINER_FILLING | {"put"}


def _hands_back(model: HazardFacts, value: Optional[ast.expr], key: str) -> bool:
    """``value`` is ``key`` itself, on every path (``key.clamp_(min=eps)``, an in-place method of a
    tensor) or on one (``key if c else f(key)``: a conditional expression with a branch ``key``)."""
    if isinstance(value, ast.IfExp):
        return any(target_key(branch) == key for branch in (value.body, value.orelse))
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
        and value.func.attr in torch_api.INPLACE_METHODS and target_key(value.func.value) == key \
        and model.torch_name(value.func) is None


def _rebound_to_a_view(model: HazardFacts, b: Binding, key: str) -> bool:
    """``x = x[:, :1]``, ``x = x.unsqueeze(0)``, ``x, t = x[:, :1], x[:, 1:]``, ``x = same(x)``:
    the binding gives ``key`` the tensor it held before, or a view of it for sure: a write
    through the new binding reaches the tensor the earlier bindings made (the caller's, where
    one is the parameter), with its version counter."""
    stmt = b.stmt
    value: Optional[ast.expr] = None
    if b.form == "assign" and isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        value = b.value
    elif b.form == "other" and isinstance(stmt, ast.Assign) and isinstance(stmt.value, (ast.Tuple, ast.List)):
        for target in stmt.targets:  # `x, t = x[:, :1], x[:, 1:]`: the element given to `key`
            if isinstance(target, (ast.Tuple, ast.List)) and len(target.elts) == len(stmt.value.elts) \
                    and not any(isinstance(e, ast.Starred) for e in (*target.elts, *stmt.value.elts)):
                at = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == key]
                if len(at) == 1:
                    value = stmt.value.elts[at[0]]
    return value is not None and view_of_itself(model.views, value, key)


def rebound_parameter(model: HazardFacts, key: str, stmt: Located) -> bool:
    """Before the write at ``stmt`` into ``key``, a parameter ``key`` reaches it through
    rebindings of the name to the tensor it held or a view of it for sure (``x = same(x)``,
    ``x, t = x[:, :1], x[:, 1:]``: :func:`_rebound_to_a_view`): the write reaches the caller's
    tensor, as a write into the parameter does (the fix's safety: a mutation the caller may see)."""
    owner = model.owner(stmt)
    if not isinstance(owner, FUNCTIONS):
        return False
    flow = model.flow(owner)
    todo = [b for b in model.reaching(flow, key, stmt) if b.form != "aug"]
    seen: Set[int] = set()
    while todo and len(seen) < 16:
        b = todo.pop()
        if id(b) in seen:
            continue
        seen.add(id(b))
        if b.form == "param":
            return True
        if _rebound_to_a_view(model, b, key):
            todo.extend(x for x in model.reaching(flow, key, b.stmt) if x.form != "aug")
    return False


def _through_inplace(hazards: Hazards, flow: Flow, key: str, bindings: List[Binding]) -> List[Binding]:
    """``probs = probs.clamp_(min=eps)`` (or ``out = out if self.bn is None else self.bn(out)``,
    on one path) hands back the tensor itself: the bindings that reached that statement still
    say what the tensor is (``probs = torch.sigmoid(h)``, saved)."""
    found: List[Binding] = []
    todo: List[Binding] = list(bindings)
    seen: Set[int] = set()
    while todo and len(seen) < 8:
        b = todo.pop(0)
        if id(b) in seen:
            continue
        seen.add(id(b))
        found.append(b)
        value = b.value
        if b.form == "assign" and _hands_back(hazards.model, value, key) \
                or _rebound_to_a_view(hazards.model, b, key):
            todo.extend(hazards._reaching(flow, key, b.stmt, hazards.model.range(b.stmt)[0]))
    return found


class Hazards:
    """Explains, for an in-place op, which save it would break (or returns None)."""

    def __init__(self, model: HazardFacts) -> None:
        self.model = model
        self.constants = Constants(model)
        self.constant_args = Constants(model, callers=True)  # parameters: what this module passes
        self.integral = Integral(model)
        self.floating = Floating(model, lambda op: saves(op) != UNSEEN)
        self._runs: Dict[Function, List[ast.Call]] = {}  # function -> the calls that run it
        self._asking: Set[Function] = set()  # functions whose callers are being asked (recursion)
        self.flagged: Dict[Function, Flag] = {}  # functions whose write runs only where a flag is passed
        self.guards: Dict[Function, Set[str]] = {}  # functions asked for a write that runs only where these flags are
        self.ops = OpSaves(self)
        self.modules = ModuleHazards(self)
        self.producers = Producers(self)
        self.consumers = Consumers(self)
        self.carried, self.saved_for = CarriedState(self), SavedFor(self)

    def grad_shown(self, inputs: Iterable[ast.expr], at: Located) -> bool:
        """Positive evidence that an op run at ``at`` on ``inputs`` records a backward: one of
        them requires grad as far as the analysis sees (a parameter, a tensor made with
        ``requires_grad=True``, what a module with parameters returned, a caller's such value),
        or the op runs in the ``forward`` of a module with parameters (an activation), or one of
        them is computed from a tensor the function was handed (an argument: see
        :class:`~codemod.analysis.views.InputFlow`)."""
        views = self.model.views
        inputs = list(inputs)
        return any(views.requirement.requires_grad(e, at) == "yes" for e in inputs) or views.requirement.activation(at) \
            or any(views.inputs.derived(e, at) for e in inputs)

    def operands(self, op_node: ast.expr) -> List[ast.expr]:
        """The values an op reads: a binary operator's two sides, a call's receiver (a method), arguments, keywords."""
        if isinstance(op_node, ast.BinOp):
            return [op_node.left, op_node.right]
        if not isinstance(op_node, ast.Call):
            return []
        found = [a for a in op_node.args if not isinstance(a, ast.Starred)] + [k.value for k in op_node.keywords]
        func = op_node.func
        if isinstance(func, ast.Attribute) and self.model.torch_name(func) is None:
            found.insert(0, func.value)
        return found

    def grad_operands(self, op_node: ast.expr) -> List[ast.expr]:
        """The operands of ``op_node`` that may carry a gradient into what it computes: all of
        :meth:`operands` but the dim, index and mask of an index or scatter op (which never do)."""
        if isinstance(op_node, ast.Call):
            func = op_node.func
            name = self.model.torch_name(func)
            if name is not None:
                found = differentiable_operands(op_node, name.rsplit(".", 1)[-1], False)
            else:
                found = differentiable_operands(op_node, func.attr, True) if isinstance(func, ast.Attribute) else None
            if found is not None:
                return found
        return self.operands(op_node)

    # ---------------------------------------------------------------- entry points
    def explain(self, node: Located, target: ast.expr) -> Optional[Hazard]:
        """Why the in-place write at ``node`` into ``target`` breaks backward, if it does (possible at most
        after an ``assert not x.requires_grad``: :func:`asserted_grad_free`; and once a search of the module ran
        out of its budget (:class:`UnreachedSearch`, ``GradRequirement._rg``: what it answered is unknown, and
        unknown is no proof))."""
        found = asserted_grad_free(self.model, node, self._explained(node, target))
        return found._replace(tier=Tier.POSSIBLE) if found is not None and found.proven \
            and (self.producers.unreached.exhausted or self.model.views.requirement.exhausted) else found

    def _explained(self, node: Located, target: ast.expr) -> Optional[Hazard]:
        if self.model.intended_reason(node, None) or self._closure_grad_off(node) or dead_arm(node, self.model.ancestors):
            return None  # grad off: nothing is saved; or an arm that never runs (`merge = False` / `if merge:`)
        if _feeds_only_out_calls(self.model, node) or grad_off_alias(self.model, node, target):
            return None
        base = _base(target)
        if isinstance(target, ast.Subscript) and isinstance(node, ast.AugAssign):
            listed = self.producers.listed(target, node)
            if listed is not None:  # `laterals[i - 1] += up`: a write into the element, a tensor
                return self.producers._every(listed, f"{self.model.code(target.value).strip()}[...]")
        if self.model.kind(base) in (Kind.SCALAR, Kind.OTHER) or used_as_container(self.model, base, node):
            return None  # a number, a dict or a list (`header[Keys.SPACE] = ...`): nothing autograd saved
        integral = self._integral(node, target)
        key = target_key(target)
        stmt = self.model.statement_of(node)
        own = saved_by_the_write(self.model, node, target) or saved_by_the_chain(self.model, node, target, self.grad_shown)
        if own is not None and own.proven:
            return own
        if key is None:
            if isinstance(stmt, ast.Assign) and stmt.value is node and len(stmt.targets) == 1 \
                    and isinstance(stmt.targets[0], ast.Name) and self.producers._never_backpropagated(
                        self.model.flow(self.model.owner(stmt)), stmt.targets[0].id, stmt.targets[0]):
                return None  # `probs = torch.exp(lp).clamp_(0, 1)` only sampled into a mask
            return None if integral else best([_produced(self, node, target, stmt), own])
        return best(itertools.chain(self._key_hazards(key, stmt, target, node, integral), [own]))

    def _closure_grad_off(self, node: Located) -> bool:
        """A function defined inside another and only called there (not returned or handed on)
        runs where its calls run: with grad off when every one of them is (the enclosing function
        as a whole: an optimizer kernel's helpers; or each call, under ``torch.no_grad()``)."""
        owner = self.model.owner(node)
        if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        for up in self.model.ancestors(owner):
            if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and up.body:
                uses = [n for n in self.model.walk(up) if isinstance(n, ast.Name) and n.id == owner.name
                        and isinstance(n.ctx, ast.Load)]
                called = all(isinstance(self.model.parent(n), ast.Call) and self.model.parent(n).func is n  # type: ignore[union-attr]
                             for n in uses)
                return bool(uses) and called and all(self.model.intended_reason(n, None) for n in uses)
        return False

    # ---------------------------------------------------------------- what is written
    def _integral(self, node: Located, target: ast.expr) -> bool:
        """Integral or boolean values (``mask &= ~other``, ``n -= 1`` on an int, ``.long()``
        results): no op saves them as its output (they have no gradient); an op saves them only
        as an index or mask for another operand's gradient, which the analysis does not tell
        apart (so such a save is a possible hazard)."""
        if isinstance(node, ast.AugAssign) and isinstance(node.op, BITWISE):
            return True  # defined on integral and boolean tensors only
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.startswith(
                ("bitwise_", "logical_")):
            return True
        return self.integral.integral(_base(target)) or _scatter_source_integral(self, node)

    # ---------------------------------------------------------------- reasons
    def _key_hazards(self, key: str, stmt: Located, target: ast.expr, write: Located,
                     integral: bool) -> Iterator[Optional[Hazard]]:
        owner = self.model.owner(stmt)
        flow = self.model.flow(owner)
        start, end = self.model.range(stmt)
        identity, views = self.model.aliases(flow, key, start)
        views = views | helper_views(self.model, lambda name, at: self._reaching(flow, name, at, self.model.range(at)[0]),
                                     flow, key, {key, *identity, *views}, stmt)
        family = [key, *sorted(identity), *sorted(views)]
        entries = dict_entries(self.model, flow, key, views, stmt)
        params: List[str] = []
        for member in family:
            if member != key and "." not in member and member not in flow.bindings:
                continue  # a module-level name (`torch` of `torch.view_as_real(p)`), not an alias
            if member != key and _through_data(flow, key, member, start):
                continue  # `e = w.data`: same storage, but a version counter of its own
            unsure = tensor_indexed_view(self.model, flow, member, {key, *identity}, views, stmt) \
                or tensor_indexed_view(self.model, flow, key, {member}, views, stmt) if member in views - identity else None
            for found in self._member_hazards(flow, key, member, identity, stmt, target, write, integral, params):
                found = found if unsure is None else _through_index(self.model, found, unsure)
                yield found if found is None or member not in entries else _one_entry(found, member, key, entries[member])
        yield from FormerViews(self).saved(flow, key, stmt, target, write, integral)
        for sibling, made in _counter_siblings(self, flow, key, stmt, start):
            rebound = [b.start for b in self._reaching(flow, sibling, stmt, start)]
            for found in self.consumers._use_hazards(flow, sibling, made, (start, end), target, rebound, write, integral):
                yield found if found is None else found._replace(
                    reason=f"{found.reason} (`{sibling}` and `{key}` are views of one tensor: one version counter)")
        if isinstance(owner, FUNCTIONS) and not integral:
            yield from self.carried.handed_back(owner, flow, key, write)
            needs = needed_flags(write, self.model.ancestors) | self.guards.get(owner, set())
            for param in params:  # (`leaf`: not through a detached copy, `t = tensor.detach()`)
                yield from self._from_callers(owner, param, param == key and copied_where_it_requires_grad(
                    stmt, param, self.model.ancestors), param == key or not detached_copy(self.model, flow, key, stmt), needs)

    def _member_hazards(self, flow: Flow, key: str, member: str, identity: Set[str], stmt: Located, target: ast.expr,
                        write: Located, integral: bool, params: List[str]) -> Iterator[Optional[Hazard]]:
        """What autograd saved of ``member`` (``key`` written, or an alias of it) before the write (``params``: gets
        ``member`` where it is a parameter)."""
        start, end = self.model.range(stmt)
        bindings = self._reaching(flow, member, stmt, start)
        for binding in _through_inplace(self, flow, member, bindings):
            if binding.form != "param" and _dead_on_none(self.model, binding, member, write):
                continue  # `if mask is not None: alphas = alphas * mask` / `mask.squeeze()`: relu's output never met
            if binding.form == "param":
                params.append(member)
                if member in (key, *identity) and is_tensor(target, self.model):
                    yield _possible(f"`{member}` comes from the caller, which the analysis cannot see")
                continue
            if binding.form in ("assign", "ann") and binding.value is not None and not integral:
                found = self.producers._producer(  # a detached copy of a leaf is no leaf (`d = w.detach()`)
                    binding.value, binding.stmt, member, lambda: member in (key, *identity) and not integral
                    and self.floating.written_floating(write), member == key or not detached_copy(self.model, flow, key, stmt))
                if found is not None and found.proven and not found.reason.endswith(LEAF_HANDED) \
                        and self.producers._never_backpropagated(flow, member, target, made=binding):
                    continue  # `block_scores = s.amax(-1)` only for topk indices: backward never reads it (a leaf: refused anyway)
                if found is not None and found.proven and self.producers._only_without_grad(binding, stmt, member) \
                        or found is not None and member not in (key, *identity) and sparse_made(found.reason):
                    continue  # (`D = L.to_dense()` of a sparse `L`: a dense copy, not `L`)
                if found is not None and found.proven and refused_with_grad(self, binding.value, write):
                    continue  # `probs = softmax(x)`, `...cumsum(probs).numpy()`, `probs[m] = 0`
                yield from_a_later_turn(self.model, found, (binding.start, binding.end), stmt)
            if binding.form == "other" and not integral:
                yield from_a_later_turn(self.model, _unpacked_piece(self, flow, binding, member, target),
                                        (binding.start, binding.end), stmt)
        since = max((b.end for b in bindings), default=(0, 0))
        rebound_in = [b.start for b in bindings]
        yield from self.consumers._use_hazards(flow, member, since, (start, end), target, rebound_in, write, integral)

    def _from_callers(self, func: Function, param: str, grad_free: bool = False, leaf: bool = True,
                      needs: AbstractSet[str] = frozenset()) -> Iterator[Optional[Hazard]]:
        """The write modifies the caller's tensor: at a call of ``func`` (other files': ``elsewhere``), was the
        argument for ``param`` saved by an op run before the call (``Decoder(8)(quant)`` twice), or an output of a
        multi-view op? Proven only. ``grad_free``: the caller's tensor reaches the write only where it requires no
        grad or grad is off (``copied_where_it_requires_grad``): no proof; ``leaf`` false (a detached copy): no leaf proof.
        ``needs``: flags of ``func`` the write runs only with (``if inplace:``): a call leaving one false is no path
        to it (:func:`flag_route`)."""
        if func in self._asking:
            return  # a recursive cycle
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if plain[:1] and plain[0] in ("self", "cls") and isinstance(self.model.parent(func), ast.ClassDef):
            plain = plain[1:]
        index = plain.index(param) if param in plain else None
        self._asking.add(func)
        flag = self.flagged.get(func)
        try:
            for call in self._calls_of(func):
                route = flag_route(self.model, func, call, needs)
                if flag is not None and flag_left_off(call, flag) or route is None:
                    continue  # the op runs out of place for this call / the write does not run
                arg = next((k.value for k in call.keywords if k.arg == param), None)
                if arg is None and index is not None and index < len(call.args) \
                        and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
                    arg = call.args[index]
                found = explain_routed(self, call, arg, route) if arg is not None and not grad_free else None
                if found is not None and found.proven:
                    yield Hazard(f"`{param}` is the caller's tensor: at line {call.lineno}, {found.reason}")
                elif arg is not None and not grad_free and leaf and self.producers.switched_leaf(arg, call):
                    yield Hazard(f"`{param}` is the caller's tensor: at line {call.lineno}, a leaf that requires grad "
                                 "(made by `requires_grad_()`): autograd forbids writing into it in place")
                refused = refused_view(self.model, call, arg) if arg is not None else None
                if refused is not None:
                    yield Hazard(f"`{param}` is the caller's tensor: at line {call.lineno}, {refused}")
            yield from () if grad_free else elsewhere(self.model, func, param, index, leaf, flag)
        finally:
            self._asking.discard(func)

    def _calls_of(self, func: Function) -> List[ast.Call]:
        """The calls in this file that run ``func`` (a ``forward``: the calls of instances,
        looked for only when the file builds one of the classes it may be the forward of)."""
        found = self._runs.get(func)
        if found is not None:
            return found
        by_key = self.model.calls_in(self.model.module)  # callee key -> calls, built once
        candidates = [c for key, calls in by_key.items() if key is not None
                      and (key == func.name or key.endswith(f".{func.name}")) for c in calls]
        if func.name == "forward" and isinstance(self.model.parent(func), ast.ClassDef):
            classes = {c.name for c in self.model.module.body if isinstance(c, ast.ClassDef)}
            if any(name in by_key for name in classes):  # the file builds one of its classes
                candidates = [c for calls in by_key.values() for c in calls]  # `block(x)`, `Block(d)(x)`
        found = []
        targets = self.model.summaries.targets
        for call in candidates:
            target = targets.callee(call)
            if target is None:  # `for block in self.blocks: h = block(h)`: every member runs one forward
                members = targets.loop_members(call)
                target = members[0] if len(members) == 1 else None
            if isinstance(target, ast.Call) and len(call.args) == 1 and not call.keywords \
                    and not isinstance(call.args[0], ast.Starred):
                target = targets.factories.first_member(target, call.func)  # `self.body(x)`: its first member gets x
            if isinstance(target, tuple) and target[0] is func:
                found.append(call)
        self._runs[func] = found
        return found

    def _reaching(self, flow: Flow, key: str, stmt: Located, start: Pos) -> List[Binding]:
        """The plain bindings of ``key`` that reach ``stmt``, less those made after it in a loop
        that binds ``key`` again before ``stmt`` on every turn (in a block holding ``stmt``, or
        in every branch of an ``if``/``elif``/``else`` there): the next turn rebinds first (:func:`_plain_reaching`)."""
        bindings = _plain_reaching(self.model, flow, key, stmt)
        if not any(b.start >= start for b in bindings):
            return bindings
        blocks = set(map(id, self.model.ancestors(stmt)))
        for ls, le in flow.loops:
            if ls <= start <= le and self._rebound_every_turn(flow, key, (ls, start), blocks):
                bindings = [b for b in bindings if not (b.start >= start and b.end <= le)]
        return bindings

    def _rebound_every_turn(self, flow: Flow, key: str, between: Span, blocks: Set[int]) -> bool:
        for b in flow.bindings.get(key, []):
            if not (between[0] <= b.start < between[1]) or b.form not in ("assign", "ann", "other"):
                continue
            if id(self.model.parent(b.stmt)) in blocks:
                return True
            for up in self.model.ancestors(b.stmt):
                if isinstance(up, ast.If) and id(self.model.parent(up)) in blocks:
                    if always_binds(up, key):
                        return True
                    break
        return False


def _feeds_only_out_calls(model: HazardFacts, node: Located) -> bool:
    """``d = x.norm().clamp_min_(eps)`` read only by calls with ``out=`` (which refuse inputs
    that require grad): no backward ever reads what the write changed."""
    stmt = model.statement_of(node)
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and node is not stmt):
        return False
    name = stmt.targets[0].id
    flow = model.flow(model.owner(stmt))
    after = [n for pos, n in flow.loads.get(name, []) if pos >= model.range(stmt)[1]]
    return bool(after) and all(
        isinstance(call, ast.Call) and any(k.arg == "out" for k in call.keywords) and n in call.args
        for n in after for call in [model.parent(n)])


def asserted_grad_free(model: HazardFacts, node: Located, found: Optional[Hazard]) -> Optional[Hazard]:
    """``found`` is possible at most where an ``assert`` runs before the write on every path through the
    function, whose test holding implies grad is off or the tensor it tests does not require grad
    (``assert not a.requires_grad``: :meth:`~codemod.analysis.grad_mode.GradMode.promises_off`), that tensor a
    name the function never rebinds nor switches, and no ``try`` around the write may catch its failure. Where
    the assert holds, ``a`` (and what is made of it) carries no grad; but ``python -O`` strips asserts, and
    then the write raises for an ``a`` that requires grad: not proven, and not left out either."""
    if found is None or not found.proven:
        return found
    owner, below = model.owner(node), cast(ast.AST, model.statement_of(node))
    for up in model.ancestors(below):
        if isinstance(up, ast.Try) and up.handlers:
            return found
        for block in statement_lists(up):
            at = next((i for i, s in enumerate(block) if s is below), None)
            guard = next((s for s in reversed(block[:at]) if isinstance(s, ast.Assert)
                          and model.grad.promises_off(s.test) and _unswitched(model, owner, s.test)), None) \
                if at is not None else None
            if guard is not None:
                return _possible(f"{found.reason}, unless `{model.code(guard.test).strip()}` holds: the assert refuses "
                                 "a tensor that requires grad (but `python -O` strips asserts)")
        if up is owner:
            return found
        below = up
    return found


def _unswitched(model: HazardFacts, owner: Owner, test: ast.expr) -> bool:
    """Every ``x.requires_grad`` that ``test`` asks is of a name ``owner`` never rebinds nor switches."""
    names = {n.value.id for n in ast.walk(test) if isinstance(n, ast.Attribute) and n.attr == "requires_grad"
             and isinstance(n.value, ast.Name)}
    asked = [n for n in ast.walk(test) if isinstance(n, ast.Attribute) and n.attr == "requires_grad"]
    return len(names) == len(asked) and not any(
        isinstance(n, ast.Name) and n.id in names and not isinstance(n.ctx, ast.Load)
        or isinstance(n, ast.Attribute) and n.attr in ("requires_grad_", "requires_grad", "detach_")
        and isinstance(n.value, ast.Name) and n.value.id in names and (n.attr != "requires_grad" or not isinstance(n.ctx, ast.Load))
        for n in model.walk(owner))


def _through_data(flow: Flow, key: str, member: str, at: Pos) -> bool:
    """``key`` was bound from ``member.data`` (or ``member`` from ``key.data``): the two share
    storage, but ``.data`` is a tensor with a version counter of its own, so a write into one
    never trips the saved version of the other."""
    for name, other in ((key, member), (member, key)):
        earlier = [b for b in flow.bindings.get(name, []) if b.end <= at and b.form == "assign"]
        if earlier and earlier[-1].value is not None and any(
                isinstance(n, ast.Attribute) and n.attr == "data" and target_key(n.value) == other
                for n in ast.walk(earlier[-1].value)):
            return True
    return False


def elsewhere(model: HazardFacts, func: Function, param: str, index: Optional[int],
              leaf: bool = True, flag: Optional[Flag] = None) -> Iterator[Hazard]:
    """:meth:`Hazards._from_callers` for the calls of ``func`` in the run's other files: arguments
    their callers proved saved, and outputs of multi-view ops; none where a use of ``param`` may
    not run on every call (what another file's call passes is all that is known of it)."""
    if _used_on_every_call(model, func, param):
        yield from saved_by_callers_elsewhere(model, func, param, index, leaf, flag)
        yield from refused_elsewhere(model, func, param, index, flag)


def calls_from_elsewhere(model: HazardFacts, func: Function, index: Optional[int],
                         flag: Optional[Flag] = None) -> Iterator[Tuple[CallFact, Optional[str]]]:
    """The calls of ``func`` in the run's other files (the project index) that run it with grad
    on, each with the position its argument for the parameter at ``index`` has there (None: only
    keywords are sure). Calls with grad off record nothing; an instance's call (``self.block(x)``,
    ``norm(x)``, ``helper.m(x)``: ``bound``) counts where it runs ``func`` as given
    (``Calls.bound_runs``: no decorator of it or of its class, no ``__call__`` of the class's own
    for ``forward``)."""
    calls = model.calls
    project = calls.project
    qualname = calls.qualname(func) if project is not None else None
    if project is None or qualname is None:
        return
    method = isinstance(model.parent(func), ast.ClassDef)
    direct = calls.bound_runs(func)
    module = qualname.rsplit(".", 2 if method else 1)[0]
    for call in project.calls_saving(qualname, module):
        if not call.called or call.grad_off or (call.caller and project.grad_off(call.caller)) \
                or call.bound and not direct or flag is not None and flag_left_off_there(model, call, flag):
            continue  # (`flag`: a call keeping the flag's default False runs the op out of place)
        # `Cls.m(obj, x)` passes the instance first: only keywords are sure; `self.block(x)` (bound) does not
        yield call, str(index) if index is not None and (call.bound or not method) else None


# The end of the reason a caller records for a leaf it hands on (``indexing._known_leaf``):
# ``leaf`` false in :func:`saved_by_callers_elsewhere` leaves such reasons out.
LEAF_HANDED = "a leaf that requires grad: autograd forbids writing into it in place"


def saved_by_callers_elsewhere(model: HazardFacts, func: Function, param: str,
                               index: Optional[int], leaf: bool = True, flag: Optional[Flag] = None) -> Iterator[Hazard]:
    """:meth:`Hazards._from_callers` for the calls of ``func`` in the run's other files (the project
    index): a call whose caller's own analysis proved the argument saved for a backward still
    to run (``CallFact.args_saved``, with its reason)."""
    for call, position in calls_from_elsewhere(model, func, index, flag):
        for name, why in call.args_saved:
            if name in (param, position) and (leaf or not why.endswith(LEAF_HANDED)):
                where = f"`{call.caller}`" if call.caller else "another module's top level"
                yield Hazard(f"`{param}` is the caller's tensor: at its call in {where}, {why}")


def from_a_later_turn(model: HazardFacts, found: Optional[Hazard], made: Span,
                      stmt: Located) -> Optional[Hazard]:
    """``found`` (a reason from the binding or the read spanning ``made``) where ``made`` is at
    or after ``stmt`` in a loop around it (``for blk in self.blocks: h = blk(h)``): it reaches
    ``stmt`` only from the loop's second turn, so the hazard is not proven where the loop may
    make one turn (:meth:`LoopMembers.may_run_once`): with one block (``Net(1)``) the program
    works."""
    if found is None or not found.proven or made[0] < model.range(stmt)[0]:
        return found
    loop = _loop_around(model, stmt, made)
    if loop is None or not model.summaries.targets.loops.may_run_once(loop):
        excluded = _second_turn_excluded(model, loop, stmt) if loop is not None else None
        if excluded is not None:
            return _possible(f"{found.reason}, from the loop's second turn on; but the loop at line "
                             f"{cast(ast.stmt, loop).lineno} turns twice only where {excluded}")
        return found
    where = f" at line {cast(ast.stmt, loop).lineno}" if loop is not None else ""
    return _possible(f"{found.reason}, from the loop's second turn on (the analysis cannot see that the loop"
                     f"{where} runs twice)")


def _second_turn_excluded(model: HazardFacts, loop: ast.AST, stmt: Located) -> Optional[str]:
    """``for _ in range(n if self.task == "ice" else 1):`` around ``stmt``, under ``if self.task ==
    "sokoban":``: the loop (in no loop of its own function) makes a second turn only where its bound's test
    gives the subject one literal, and with that literal an ``if`` around ``stmt`` rules ``stmt`` out, so no
    turn after the first runs it. The subject is steady (:func:`_steady_subject`); the text saying why, or
    None."""
    if not (isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name)
            and loop.iter.func.id == "range" and len(loop.iter.args) == 1 and not loop.iter.keywords
            and "builtins.range" in model.qualified_names(loop.iter.func)
            and isinstance(bound := loop.iter.args[0], ast.IfExp)):
        return None
    once = [_int_constant(arm) for arm in (bound.body, bound.orelse)]
    if (once[0] is not None and once[0] <= 1) == (once[1] is not None and once[1] <= 1):
        return None  # (neither arm, or both, known to turn at most once)
    holds = once[1] is not None and once[1] <= 1  # the test's value where the loop turns twice
    test = bound.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant)
            and isinstance(test.ops[0], ast.Eq if holds else ast.NotEq)):
        return None
    key, func = _subject_key(test.left), model.owner(loop)
    if key is None or isinstance(func, ast.Module) or not _steady_subject(model, func, test.left) \
            or any(isinstance(up, (ast.For, ast.AsyncFor, ast.While)) for up in _within_owner(model, loop)):
        return None
    decided: Dict[str, object] = {key: test.comparators[0].value}
    child: ast.AST = stmt
    for up in model.ancestors(stmt):
        if up is func:
            break
        if isinstance(up, ast.If) and child is not up.test \
                and _decided(up.test, decided) is not None and (child in up.body) is not _decided(up.test, decided):
            return f"`{model.code(test)}`, where the `if` at line {up.lineno} does not run the write"
        child = up
    return None


def _within_owner(model: HazardFacts, node: ast.AST) -> Iterator[ast.AST]:
    for up in model.ancestors(node):
        if isinstance(up, OWNERS):
            return
        yield up


def _steady_subject(model: HazardFacts, func: Function, subject: ast.expr) -> bool:
    """``subject`` holds one string or int for the whole call of ``func``: a parameter with such a literal
    default (or annotated ``str``/``int``) that nothing in ``func`` binds again; or ``self.<attr>`` that the
    file writes only in its class's ``__init__`` (not ``func``), each time a literal or such a parameter of
    it."""
    def plain(value: Optional[ast.expr], owner: ast.AST, name: str) -> bool:
        if isinstance(value, ast.Constant):
            return type(value.value) in (str, int)
        if not (isinstance(value, ast.Name) and value.id == name or value is None):
            return False
        args = getattr(owner, "args", None)
        if not isinstance(args, ast.arguments):
            return False
        positional = [*args.posonlyargs, *args.args]
        defaults: Dict[str, Optional[ast.expr]] = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):], args.defaults))
        defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults)})
        param = next((a for a in (*positional, *args.kwonlyargs) if a.arg == name), None)
        default = defaults.get(name)
        return param is not None and (isinstance(param.annotation, ast.Name) and param.annotation.id in ("str", "int")
                                      or isinstance(default, ast.Constant) and type(default.value) in (str, int)) \
            and not any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
                        or isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names
                        or isinstance(n, ast.arg) and n.arg == name and n is not param for n in model.walk(owner))
    if isinstance(subject, ast.Name):
        return plain(None, func, subject.id)
    assert isinstance(subject, ast.Attribute)
    cls = model.enclosing_class(func)
    writes = model.attribute_writes(subject.attr)
    if cls is None or getattr(func, "name", "") == "__init__" or not writes:
        return False
    for w in writes:
        init = model.owner(w)
        assign = model.parent(w)
        if not (isinstance(w, ast.Attribute) and isinstance(w.value, ast.Name) and w.value.id == "self"
                and getattr(init, "name", "") == "__init__" and model.enclosing_class(init) is cls
                and isinstance(assign, ast.Assign) and assign.targets == [w]
                and plain(assign.value, init, getattr(assign.value, "id", ""))):
            return False
    return True


def slot_stored(model: HazardFacts, parent: Optional[ast.AST], load: ast.expr) -> Optional[ast.expr]:
    """``laterals[k] = v`` (``parent`` the subscript of the list's load ``load``): one target, one
    index (no slice: ``rows[1:3] = more`` changes the list's length): ``v``, the value the slot
    holds from then on; None for anything else."""
    if not (isinstance(parent, ast.Subscript) and parent.value is load and isinstance(parent.ctx, ast.Store)
            and not isinstance(parent.slice, (ast.Slice, ast.Tuple))):
        return None
    assign = model.parent(parent)
    if isinstance(assign, ast.Assign) and len(assign.targets) == 1 and assign.targets[0] is parent:
        return assign.value
    return None


def _loop_around(model: HazardFacts, stmt: Located, made: Span) -> Optional[ast.AST]:
    """The innermost loop around ``stmt`` that holds ``made`` too."""
    return next((up for up in model.ancestors(stmt) if isinstance(up, (ast.For, ast.AsyncFor, ast.While))
                 and model.range(up)[0] <= made[0] and made[1] <= model.range(up)[1]), None)


_RANKED = ("topk", "sort", "max", "min")


def _int_constant(node: ast.expr) -> Optional[int]:
    """``1``, ``-1``: the int a literal (negated or not) stands for; None for anything else."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_constant(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return None


def _values_and_indices(call: ast.Call, op: str, dim_at: int) -> bool:
    """``x.topk(k)``, ``x.sort()``, ``x.max(dim)``, ``torch.min(x, -1)``: a pair (values,
    indices); ``x.max(y)`` of another tensor, or ``x.max()``, is one tensor (unpacked, its rows)."""
    if op in ("topk", "sort"):
        return True
    return any(k.arg == "dim" for k in call.keywords) or (
        len(call.args) > dim_at and _int_constant(call.args[dim_at]) is not None)


def _carries_no_history(model: HazardFacts, node: ast.expr) -> bool:
    """``node`` is handed where no backward can reach its op: to a torch function whose result
    carries no gradient (``torch.isnan(std)``, ``torch.argmax(d)``), or set as the ``.data`` of
    a tensor (``self.scales.data = std``: the storage is taken, the history is not)."""
    parent = model.parent(node)
    if isinstance(parent, ast.Call) and any(a is node for a in parent.args):
        name = (model.torch_name(parent.func) or "").rsplit(".", 1)
        return len(name) == 2 and name[0] == "torch" and name[1] in _INDEX_ATTRIBUTES
    return isinstance(parent, ast.Assign) and parent.value is node and all(
        isinstance(t, ast.Attribute) and t.attr == "data" for t in parent.targets)


# Tensor methods that compute a value from their receiver and do nothing else (no hook, no backward,
# no write): a chain of them passes its receiver's history on to its result only
_PASSED_ON = frozenset(SHAPE_METHODS) | {"masked_fill", "min", "max", "median", "nanmedian", "clamp", "clamp_min",
                                         "clamp_max", "clip", "add", "sub", "mul", "div", "pow", "values"}


def _cut_chain(model: HazardFacts, node: ast.expr) -> Union[bool, ast.Name, None]:
    """Where ``node``'s value ends when it goes on only through an item of it (``d[i]``) and the methods
    of :data:`_PASSED_ON` (``d[i].masked_fill(m, inf)``, ``d.min(dim=1).values.median()``): True at an end
    no backward passes (``float(...)``/``int(...)``/``bool(...)``, a comparison, ``.argmin(...)`` and the
    others of ``_INDEX_ATTRIBUTES``), the name the chain's value is bound to (``row = ...``: its uses
    decide), None anywhere else (or where nothing is chained: the caller's other checks decide)."""
    start = node
    for _ in range(12):
        parent = model.parent(node)
        if isinstance(parent, ast.Compare) and node is not start:
            return True
        if isinstance(parent, ast.Call) and parent.args == [node] and not parent.keywords and node is not start \
                and model.qualified_names(parent.func) & {"builtins.float", "builtins.int", "builtins.bool"}:
            return True  # a Python number: no history
        if isinstance(parent, ast.Assign) and node is not start and parent.value is node and len(parent.targets) == 1 \
                and isinstance(parent.targets[0], ast.Name):
            return parent.targets[0]
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
            node = parent
            continue
        if not (isinstance(parent, ast.Attribute) and parent.value is node):
            return None
        if parent.attr in _INDEX_ATTRIBUTES and node is not start:
            return True
        call = model.parent(parent)
        if parent.attr == "values":
            node = parent
        elif parent.attr in _PASSED_ON and isinstance(call, ast.Call) and call.func is parent:
            node = call
        else:
            return None
    return None


def _carriers(model: HazardFacts, flow: Flow, key: str, made: Binding) -> Set[int]:
    """The bindings of ``key`` (their ids) that may hold the tensor ``made`` bound: ``made``, every
    binding but a plain assignment (a parameter, a loop target, ``+=``), and every assignment whose
    value reads ``key`` where such a binding reaches (``x = x.scatter_(...)``, ``x = x.view(-1)``).
    An assignment of another arm reading only its own binding (``d = torch.ones(n)``, then
    ``d = torch.softmax(d, -1)``) holds another tensor; so does one whose every read of ``key`` drops the
    history on the way (``boxes = boxes.detach().cpu().numpy()``: no backward runs through it)."""
    bindings = flow.bindings.get(key, [])
    found = {id(made)} | {id(b) for b in bindings if b.form != "assign" or b.value is None}
    grew = True
    while grew:
        grew = False
        for b in bindings:
            if id(b) in found or b.value is None or all(
                    _history_dropped(model, n, b.value) for n in ast.walk(b.value) if isinstance(n, ast.Name) and n.id == key):
                continue
            if any(id(r) in found for r in model.reaching(flow, key, b.stmt)):
                found.add(id(b))
                grew = True
    return found


# Steps whose result carries no history of their receiver (``consumed``'s history-dropping methods, the ones
# that read a tensor only): past one, no backward reaches what the receiver's ops saved.
_DROPPING_STEPS = frozenset({"detach", "item", "tolist", "numpy", "data", "argmax", "argmin", "argsort", "long",
                             "int", "bool", "byte", "short", "char", "nonzero", "isnan", "isinf", "isfinite", "size",
                             "dim", "numel", "shape"})


def _history_dropped(model: HazardFacts, load: ast.expr, top: ast.expr) -> bool:
    """From ``load`` up to ``top``, only attribute and method steps on the chain, one of which drops the
    history (``boxes.detach().cpu().numpy()``, ``x.data``, ``x.shape``)."""
    node: ast.AST = load
    while node is not top:
        parent = model.parent(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr in _DROPPING_STEPS:
                return True
            call = model.parent(parent)
            node = call if isinstance(call, ast.Call) and call.func is parent else parent
        else:
            return False
    return False


def _ranked_pair(model: HazardFacts, node: ast.expr) -> Optional[ast.Call]:
    """The call ranking ``node`` into a pair (values, indices): ``node.topk(k)``,
    ``node.sort()``, ``node.min(-1)``, ``torch.max(node, dim=1)``; None for any other use."""
    parent = model.parent(node)
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _RANKED:
        call = model.parent(parent)
        if isinstance(call, ast.Call) and call.func is parent and _values_and_indices(call, parent.attr, 0):
            return call
        return None
    if isinstance(parent, ast.Call) and parent.args[:1] == [node]:
        op = (model.torch_name(parent.func) or "").rsplit(".", 1)
        if len(op) == 2 and op[0] == "torch" and op[1] in _RANKED and _values_and_indices(parent, op[1], 1):
            return parent
    return None


def _ranked_use(model: HazardFacts, node: ast.expr) -> Union[bool, ast.Name, None]:
    """How a ranking of ``node`` is used: True when only its indices leave (``.indices``,
    ``[1]``, ``[-1]``: int64, no history), the Name bound to its values when unpacked
    (``v, i = node.min(-1)``), None when ``node`` is not ranked so or its values leave."""
    call = _ranked_pair(model, node)
    if call is None:
        return None
    taken = model.parent(call)
    if isinstance(taken, ast.Attribute) and taken.value is call:
        return taken.attr == "indices" or None
    if isinstance(taken, ast.Subscript) and taken.value is call and isinstance(taken.ctx, ast.Load):
        return _int_constant(taken.slice) in (1, -1) or None
    if isinstance(taken, ast.Assign) and taken.value is call and len(taken.targets) == 1 \
            and isinstance(taken.targets[0], (ast.Tuple, ast.List)) and len(taken.targets[0].elts) == 2 \
            and isinstance(taken.targets[0].elts[0], ast.Name):
        return taken.targets[0].elts[0]
    return None


class _HazardsPart:
    """A fact class wired by :class:`Hazards`: it reads the facts Hazards holds."""

    def __init__(self, hazards: "Hazards") -> None:
        # Weakly: the Hazards owning this part holds it, and a cycle between them would leave
        # the module's whole tree to the cyclic garbage collector when the analysis ends.
        self.hazards = weakref.proxy(hazards)
        self.constant_args = hazards.constant_args
        self.constants = hazards.constants
        self.floating = hazards.floating
        self.model = hazards.model


_GO_ON: Final = "go on"  # SavedFor.judge: no verdict, the other checks decide


class SavedFor(_HazardsPart):
    """For whose gradient a call saves the written tensor (``analysis.saved_for``): an op that
    saves it only for its other operands' gradient (``torch.matmul(x, c)``, ``F.linear(x, w)``,
    a helper saying so) saves nothing where those require no grad; a helper that saves it for
    its own gradient only (``abs``, ``** 2``) saves it only where it requires grad itself."""

    def users(self, op_node: ast.Call, index: int, op: str, node: ast.expr) -> Optional[List[ast.expr]]:
        """The operands whose gradient needs input ``index`` (``node``) of ``op_node`` saved; None: not known."""
        summary = self.model.summaries.of_call(op_node)
        if summary is not None:
            return summary.users_at(op_node, index)
        func = op_node.func
        method = isinstance(func, ast.Attribute) and (func.value is node or self.hazards.ops._is_method_call(op_node))
        if not method and self.model.torch_name(func) is None:
            return None
        return measured_users(op, index, op_node, method)

    def judge(self, op_node: ast.expr, index: int, op: str, node: ast.expr, key: str,
              line: int) -> Tuple[Union[Optional[Hazard], str], bool]:
        """A verdict on the save of ``node`` by ``op_node`` where it is made for other operands'
        gradient only (else ``_GO_ON``), and whether it is made for ``node``'s own gradient only."""
        if isinstance(op_node, ast.BinOp) and (op in ("*", "@", "%") or (op, index) in (("/", 0), ("**", 1))):
            other = op_node.right if index == 0 else op_node.left  # `x * self.decay`: saved for the other's gradient
            if self._buffer(other) and not self.constants.constant(other) \
                    and self.model.views.requirement.requires_grad(other, self.model.statement_of(op_node)) != "yes":
                return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if the buffer "
                                 f"`{self.model.code(other).strip()}` requires grad (a registered buffer is state, "
                                 "not trained)"), False
        users = self.users(op_node, index, op, node) if isinstance(op_node, ast.Call) else None
        if users is None:
            return _GO_ON, False
        if any(u is node for u in users):
            return _GO_ON, len(users) == 1
        at = self.model.statement_of(op_node)
        if all(self.model.kind(u) is Kind.SCALAR or self.constants.constant(u) for u in users):
            return None, False  # saved for the gradient of operands that require none: nothing is saved
        grad = next((u for u in users if self.model.views.requirement.requires_grad(u, at) == "yes"), None)
        if grad is not None:
            return Hazard(f"`{key}` was saved for backward by `{op}` at line {line} (for the gradient "
                          f"of `{self.model.code(grad).strip()}`, which requires grad)"), False
        if all(self.model.kind(u) is Kind.SCALAR or self.constant_args.constant(u) for u in users):
            return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if a caller elsewhere "
                             "passes a tensor that requires grad (the calls in this file pass constants)"), False
        if isinstance(op_node, ast.Call) and self.model.summaries.of_call(op_node) is None \
                and may_take_a_number(op, op_node) and not any(is_tensor(u, self.model) for u in users):
            # `torch.mul(x, w)`: `w` may be a Python number (`torch.matmul` would raise on one: a
            # tensor; a helper's summary does not say which: today's answer)
            return _possible(f"`{key}` is saved by `{op}` at line {line} if the operand it is saved for is a "
                             "tensor that requires grad, which the analysis cannot tell"), False
        return _GO_ON, False


    def _buffer(self, expr: ast.expr) -> bool:
        """``self.decay`` (or a part of it: ``self.decay[1:]``) where the class registers ``decay``
        with ``register_buffer`` and never with ``register_parameter``."""
        base = subscript_base(expr)
        if not (isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self"):
            return False
        cls = self.model.enclosing_class(base)
        return cls is not None and base.attr in self.model.class_buffers(cls) and not any(
            v is Kind.PARAMETER for v in self.model.class_attrs(cls).get(base.attr, []))


def _index_tensor(model: "HazardFacts", value: ast.expr) -> bool:
    piece = False
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
        piece, value = True, value.value  # `torch.nonzero(m, as_tuple=True)[0]`: a 1-d piece (not `argsort(x)[0]`, 0-d)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    torch_name = model.torch_name(func)
    name = torch_name.rsplit(".", 1)[-1] if torch_name else (func.attr if isinstance(func, ast.Attribute) else "")
    one_argument_where = name == "where" and len(value.args) == 1 and not value.keywords and torch_name is not None
    return name in ("nonzero", "argwhere") or one_argument_where or (not piece and name in ("argsort", "randperm"))


def _reaching_at(model: "HazardFacts", key: str, node: ast.expr) -> List[Binding]:
    return model.reaching(model.flow(model.owner(node)), key, model.statement_of(node))


def _one_index(model: "HazardFacts", piece: ast.expr) -> bool:
    """``piece`` is a tensor or a Python number (not a tuple, which may take two dimensions)."""
    return model.kind(piece) in (Kind.TENSOR, Kind.PARAMETER, Kind.SCALAR)


def _dead_on_none(model: "HazardFacts", binding: Binding, key: str, write: Located) -> bool:
    """``binding`` reaches the write only on a pass where ``N`` is None and ``N.attr`` raised first
    (:func:`~codemod.analysis.branches.dead_on_none`); the not-None branch rebinds ``key`` to the
    result of an operator or of a call that hands back no view of ``key`` nor ``key`` itself."""
    def fresh(value: ast.expr) -> bool:
        return isinstance(value, (ast.BinOp, ast.UnaryOp)) or isinstance(value, ast.Call) \
            and not _hands_back(model, value, key) and view_chain(model.views, value, key) is None
    return dead_on_none(binding.stmt, model.statement_of(write), key, model.ancestors, fresh)


def _plain_reaching(model: "HazardFacts", flow: Flow, key: str, stmt: Located) -> List[Binding]:
    """The bindings of ``key`` reaching ``stmt`` but in-place updates, less those on another arm of the
    innermost ``if`` holding both with no loop around (``branches.other_arm``): one pass runs one arm."""
    return [b for b in model.reaching(flow, key, stmt) if b.form != "aug" and not other_arm(b.stmt, stmt, model.ancestors)]


def _produced(hazards: "Hazards", write: Located, target: ast.expr, stmt: Located) -> Optional[Hazard]:
    """What the op that made ``target`` (no name holds it) saved of its output, unless no backward reads it;
    a new leaf that requires grad (``torch.zeros(n, requires_grad=True).normal_()``) is refused at the write
    itself, whatever reads the result."""
    new_leaf = isinstance(target, ast.Call) and any(
        k.arg == "requires_grad" and is_const(k.value, True) for k in target.keywords)
    return None if not new_leaf and output_unreached(hazards, write, target) \
        else hazards.producers._producer(target, stmt)


def output_unreached(hazards: "Hazards", write: Located, target: ast.expr) -> bool:
    """``p = lt.exp().masked_fill_(m, 0)`` then ``p = p.detach()``: ``target`` is a torch op's new
    tensor (not a view, not an in-place op's receiver handed back), which from the write on only the
    write's result holds, and that result reaches no backward (:func:`dead_result`): what the op
    saved of its output is never read."""
    if not (isinstance(write, ast.Call) and isinstance(target, ast.Call)):
        return False
    func, model = target.func, hazards.model
    name = model.torch_name(func)
    short = name.rsplit(".", 1)[-1] if name else func.attr if isinstance(func, ast.Attribute) else ""
    if not short or short.endswith("_") or short in VIEW_METHODS or short in VIEW_ATTRIBUTES:
        return False
    if name is not None:
        fresh = name.startswith("torch.") and model.summaries.of_call(target) is None
    else:
        fresh = isinstance(func, ast.Attribute) and hazards.ops._is_method_call(target)
    return fresh and dead_result(model, write, ends=_ends(hazards))


def _ends(hazards: "Hazards") -> Ends:
    """The ends :func:`dead_result` may ask: integral results, writes into a tensor no backward reaches, and
    helpers whose result is all that leaves their call."""
    return Ends(hazards.integral.integral, partial(_written_unreached, hazards), partial(_helper_stores_nothing, hazards))


def _helper_stores_nothing(hazards: "Hazards", call: ast.Call) -> bool:
    """``call`` runs a function of this file that stores nothing past its call and writes none of its
    arguments (:func:`stores_nothing`), or one of another file of the run whose own file saw it so (the
    project index's ``SummaryFact.stores_nothing``; an installed library's summary says nothing of it)."""
    targets = hazards.model.summaries.targets
    here = helper_of_file_stores_nothing(hazards.model, targets, call)
    if here is not None:
        return here
    target = targets.callee(call)
    index = hazards.model.calls.project
    fact = index.summary(target) if isinstance(target, str) and index is not None else None
    return fact is not None and fact.of == "function" and fact.stores_nothing  # (its own writes: stores_nothing's)


def _written_unreached(hazards: "Hazards", stmt: ast.AST, name: str) -> bool:
    """``trans[:, 1:] = 0.05 * trans[:, 1:] + trans[:, 1:] ** 2`` (or ``times *= t / times.max()``): the value
    goes into the tensor ``name`` holds there. Where every binding of ``name`` reaching ``stmt`` made that
    tensor in this function (:func:`_made_fresh`: no caller, attribute or other name holds it from before)
    and no read of it ever backpropagates (:meth:`Producers._never_backpropagated`: it only ends in
    ``torch.argmin(trans)``, ``.long()``, a comparison, or goes back into itself), no backward reaches
    the value's history either. Bindings already being asked are taken as unreached (the question is one
    of the whole set: every way out of it is checked); :class:`UnreachedSearch` bounds the work."""
    model, search = hazards.model, hazards.producers.unreached
    owner = model.owner(stmt)
    if not isinstance(owner, FUNCTIONS) or name_escapes(model, owner, name):
        return False
    flow = model.flow(owner)
    reaching = model.reaching(flow, name, cast(Located, stmt))
    target = written_name(stmt)  # (dead_result found it: `trans[:, 1:] = ...`, `times *= ...`)
    if target is None:
        return False
    if not reaching or not all(_made_fresh(hazards, flow, b) or b.form == "param" and model.handed_own_values(target)
                               for b in reaching):
        return False  # (a parameter: where every call of the file hands it a tensor of the caller's own, read no more)
    todo = [b for b in reaching if id(b) not in search.asked]
    if len(search.asked) + len(todo) > 6:
        return False  # (a bound on the work, not a fact)
    return search.ask(owner, id(stmt), name, [id(b) for b in todo], lambda: all(
        hazards.producers._never_backpropagated(flow, name, target, made=b) for b in todo))


class UnreachedSearch:
    """The state of :func:`_written_unreached`'s search, which asks of bindings written from each other
    (``b0[:, 1:] = b0[:, 1:] ** 2 + b1[:, 1:] * x``, ``b1[:, 1:] = ... b0 ...``) whether a backward reaches
    them. ``asked``: the bindings being asked (their ids), taken as unreached by the questions below.
    An answer depends on the write, the name and the bindings being asked only: it is kept (asked again
    along another path to the same set, it is not worked out again: without that, ``n`` buffers each
    written from the others cost the permutations of ``n``). ``BUDGET``: the answers one outermost question
    may work out; past it the question answers "cannot tell" (False: the write is not shown unreached), its
    answers are dropped, and its function's later questions answer so at once (``exhausted``): from then on
    the module proves nothing (:meth:`Hazards.explain`, ``SemanticModel.budget_spent``)."""

    BUDGET: Final = 4000

    def __init__(self) -> None:
        self.asked: Set[int] = set()
        self.known: Dict[Tuple[int, str, FrozenSet[int]], bool] = {}
        self.worked: List[Tuple[int, str, FrozenSet[int]]] = []  # answers the outermost question worked out
        self.exhausted: Set[ast.AST] = set()  # functions whose search ran out of budget

    def ask(self, owner: ast.AST, stmt: int, name: str, todo: List[int], answer: Callable[[], bool]) -> bool:
        """``answer()`` with ``todo`` taken as unreached too, or what it gave before for the same question."""
        outermost = not self.asked
        key = (stmt, name, frozenset(self.asked))
        if key in self.known:
            return self.known[key]
        if outermost:
            if owner in self.exhausted:
                return False
            self.worked = []
        if len(self.worked) >= self.BUDGET:
            return False  # (the outermost question's answers are all dropped below)
        self.worked.append(key)
        self.asked.update(todo)
        try:
            self.known[key] = found = answer()
        finally:
            self.asked.difference_update(todo)
        if outermost and len(self.worked) >= self.BUDGET:
            for worked in self.worked:
                self.known.pop(worked, None)
            self.exhausted.add(owner)
            return False
        return found


def _made_fresh(hazards: "Hazards", flow: Flow, binding: Binding, depth: int = 0) -> bool:
    """``binding`` holds a tensor its own statement made, which nothing else holds from before: a torch factory
    (``torch.zeros(n)``), a torch op that makes a new tensor (``requires_grad.makes_fresh``; of a method, on a
    tensor), or an in-place update (``t *= w``) of such a binding."""
    model, value = hazards.model, binding.value
    if binding.form == "aug" and depth < 3:
        before = [b for b in model.reaching(flow, binding.key, binding.stmt) if b is not binding]
        return bool(before) and all(_made_fresh(hazards, flow, b, depth + 1) for b in before)
    if binding.form not in ("assign", "ann") or value is None or binding.sources:
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and model.torch_name(value.func) is None:
        return model.kind(value.func.value) is Kind.TENSOR and hazards.ops._is_method_call(value) \
            and makes_fresh(model, value)
    return isinstance(value, ast.Call) and model.is_factory(value) and not any(k.arg == "out" for k in value.keywords) \
        or makes_fresh(model, value)


def unsure_view(consumers: "Consumers", node: ast.expr, found: Optional[Hazard]) -> Optional[Hazard]:
    """A save of ``node`` read through an index that is a tensor of unknown dtype and dims
    (``x[~masks]``, ``masks`` a parameter annotated ``Tensor``) is at most possible: only a 0-d
    integer tensor makes a view, any other tensor index a copy that shares nothing with ``node``."""
    if found is None or not found.proven:
        return found
    model, top = consumers.model, consumers._through_views(node)
    while node is not top:
        parent = model.parent(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if _copying_index(model, parent):
                return _through_index(model, found, parent.slice)
        if parent is None:
            break
        node = cast(ast.expr, parent)
    return found


def _through_index(model: "HazardFacts", found: Optional[Hazard], index: ast.expr) -> Optional[Hazard]:
    if found is None or not found.proven:
        return found
    return _possible(f"{found.reason}, if the index `{model.code(index).strip()}` makes a view "
                     "(ints, slices, `None` and `...` do, and a 0-d integer tensor; any other tensor index copies)")


# Methods whose result has at least as many dims as their receiver (a 1-d index stays one)
_DIMS_KEPT = frozenset({"flatten", "long", "int", "to", "cpu", "cuda", "contiguous", "clone", "detach"})


def _int_list(value: ast.expr) -> bool:
    """``ii = []``, ``ii = [0, 2]``: a list of ints (or none) indexes by copying. (Not a list
    holding slices or None, which torch reads as a tuple index: a view.)"""
    return isinstance(value, ast.List) and all(
        isinstance(e, ast.Constant) and type(e.value) is int for e in value.elts)


def _dims_kept(value: ast.expr) -> ast.expr:
    """``torch.nonzero(m).flatten()``, ``idx.long().to(dev)``: the index tensor under methods that
    keep its dims (:data:`_DIMS_KEPT`), so an index of 1-d or more stays one (a copying index)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _DIMS_KEPT:
        value = value.func.value
    return value


def tensor_indexed_view(model: "HazardFacts", flow: Flow, member: str, whole: Set[str], views: Set[str],
                        stmt: Located, depth: int = 0) -> Optional[ast.expr]:
    """``values = output[..., src]`` (``src`` a tensor of unknown dims): ``member`` is a view of the
    written tensor (``whole``: its name and the names bound to it; ``views``: its views) only if that
    index makes one, which only a 0-d integer tensor does; any other tensor index copies, and the
    copy shares nothing with what is written. The index (what :func:`unsure_view` asks of a save
    read through one in place) where every binding of ``member`` reaching ``stmt`` that comes from
    the written tensor (through views and indexing, or through another such view) passes through
    such an index; None where one may not."""
    found: Optional[ast.expr] = None
    for binding in model.reaching(flow, member, stmt) if depth < 8 else []:
        expr, index = element_bound(binding), None
        while expr is not None:
            if isinstance(expr, ast.Subscript):
                index = index or (expr.slice if _copying_index(model, expr) else None)
                expr = expr.value
            elif isinstance(expr, ast.Attribute) and expr.attr in VIEW_ATTRIBUTES:
                expr = expr.value
            elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) \
                    and expr.func.attr in VIEW_METHODS and model.torch_name(expr.func) is None:
                expr = expr.func.value
            else:
                break
        base = target_key(expr) if expr is not None else None
        if base is None or base == member or base not in (*whole, *views):
            continue  # not a view of the written tensor by this binding (`values = other[i]`)
        if index is None and base not in whole:  # (`rows = output[idx]`, `values = rows[0]`)
            index = tensor_indexed_view(model, flow, base, whole, views, stmt, depth + 1)
        if index is None:
            return None  # a binding that may view it through basic indexing (or `base` is the written tensor itself)
        found = found or index
    return found


def for_others_unshown(hazards: "Hazards", op_node: ast.expr, node: ast.expr) -> bool:
    """``node`` requires no grad as far as the analysis sees (``w = W1[:, i]``, ``W1`` a clone of
    ``weight.data``), so the op records a backward, and keeps ``node``, only where one of its
    other operands requires grad, and none is shown to (:meth:`Hazards.grad_shown`: a tensor
    attribute, ``L = cholesky(self.H)``, whose requirement is never seen is no evidence)."""
    model = hazards.model
    at = model.statement_of(op_node)
    torch_op = isinstance(op_node, ast.BinOp) or isinstance(op_node, ast.Call) and (
        model.torch_name(op_node.func) is not None
        or isinstance(op_node.func, ast.Attribute) and hazards.ops._is_method_call(op_node))
    if not torch_op:
        return False  # (a function of the file, `self.compute_return(r, d)`: its own ops' operands are not these)
    if not _product(model, op_node) and model.views.requirement.requires_grad(node, at) != "no":
        return False
    others = [o for o in hazards.grad_operands(op_node) if not within(node, o)]
    return not hazards.grad_shown(others, at)


_PRODUCTS = frozenset({"matmul", "mm", "bmm", "mv", "outer", "ger"})


def _product(model: "HazardFacts", op: ast.expr) -> bool:
    """``a @ b``, ``a.matmul(b)``, ``torch.mm(a, b)``: an operand is kept only for the other's
    gradient, so it is saved where another operand requires grad, whatever its own requirement."""
    if isinstance(op, ast.BinOp):
        return isinstance(op.op, ast.MatMult)
    if not isinstance(op, ast.Call) or not isinstance(op.func, ast.Attribute):
        return False
    name = model.torch_name(op.func)
    return (name or "").rsplit(".", 1)[-1] in _PRODUCTS if name is not None else op.func.attr in _PRODUCTS


# Scatters that refuse a source of another dtype than the tensor they write (measured, torch 2.13:
# "scatter(): Expected self.dtype to be equal to src.dtype", int32 into int64 and float64 into
# float32 alike).
_SAME_DTYPE_SCATTERS = frozenset({"scatter_", "scatter_add_", "scatter_reduce_"})


def _scatter_source_integral(hazards: "Hazards", node: Located) -> bool:
    """``w.scatter_reduce_(0, tgt, src, reduce="amin")`` where ``src`` is an integral tensor: the call
    runs only where ``w`` has ``src``'s dtype, so wherever the write happens ``w`` is integral (its dtype
    never changes in place) and nothing saved of it carries grad. ``src`` is shown integral by the dtype
    facts (``idx.long()``), or as a name used, with the same value, as the index operand of a scatter,
    ``gather`` or ``index_select`` run before on every path to the write (a statement of its own, earlier
    in a block around the write): those refuse any other index than an int32 or int64 tensor. A number
    (``scatter_(0, i, 1)``, the value form) or anything else shows nothing."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _SAME_DTYPE_SCATTERS and hazards.model.torch_name(node.func) is None):
        return False
    src = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "src"), None)
    if src is None or isinstance(src, ast.Starred) or spreads(node):
        return False
    if is_tensor(src, hazards.model) and hazards.integral.integral(src):
        return True
    return isinstance(src, ast.Name) and _indexed_before(hazards.model, src)


def _indexed_before(model: "HazardFacts", name: ast.Name) -> bool:
    """``name`` is, with the value it has here, the index operand of an op that refuses any but an
    integral one, in a call statement run before ``name``'s statement wherever that one runs."""
    stmt = model.statement_of(name)
    owner = model.owner(stmt)
    flow = model.flow(owner)
    here = {id(b) for b in model.reaching(flow, name.id, stmt)}
    if not here:
        return False
    up: Optional[ast.AST] = stmt
    while up is not None and up is not owner and not isinstance(up, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
        holder = model.parent(up)
        for block in statement_lists(holder) if holder is not None else []:
            if not any(s is up for s in block):
                continue
            for before in block[:[i for i, s in enumerate(block) if s is up][0]]:
                if not (isinstance(before, ast.Expr) and isinstance(before.value, ast.Call)):
                    continue
                call = before.value
                if any(isinstance(a, ast.Name) and a.id == name.id and index_operand(model, a)
                       for a in (*call.args, *(k.value for k in call.keywords))) \
                        and {id(b) for b in model.reaching(flow, name.id, before)} == here:
                    return True
        up = holder
    return False


def unreached(hazards: "Hazards", load: ast.expr, write: Located) -> bool:
    """No backward that runs after ``write`` reaches what the op reading ``load`` saved: a backward
    consumed its graph before (:func:`consumed_before`), or ran through it before and nothing else holds it
    (:func:`consumed_then_dead`), or its result is dropped (:func:`dead_result`), or a ``.numpy()`` of it
    refuses to run first wherever it saved anything (:func:`refused_numpy_before`)."""
    return dead_result(hazards.model, load, ends=_ends(hazards)) or consumed_before(hazards.model, load, write, *_steps(hazards)) \
        or consumed_then_dead(hazards.model, load, write) or refused_with_grad(hazards, load, write)


def refused_with_grad(hazards: "Hazards", load: ast.expr, write: Located) -> bool:
    """Where what the op reading ``load`` saved requires grad, a ``.numpy()`` of it refuses to run before
    ``write`` (:func:`refused_numpy_before`): the write is reached only where nothing was saved."""
    return refused_numpy_before(hazards.model, load, write, *_steps(hazards))


def _steps(hazards: "Hazards") -> Tuple[Callable[[ast.Call], bool], Callable[[ast.Call], bool]]:
    """What keeps an op's history as a first call (a function of the file storing nothing) and as a module."""
    return partial(_stores_nothing, hazards), lambda call: hazards.ops._module_of(call.func) is not None


def aborted_by_out_call(hazards: "Hazards", load: ast.expr, found: Optional[Hazard]) -> Optional[Hazard]:
    """``found`` (a save by the op reading ``load``) is possible at most where every path from that op on runs
    a torch call with ``out=`` on a tensor computed from the op's result (:func:`out_abort.abort_line`): such a
    call refuses, in the forward, an argument that requires grad, and the save counts only where the op's
    result requires grad; so no backward ever reads it (the program stops in the forward instead)."""
    if found is None or not found.proven:
        return found
    model = hazards.model
    stmt = model.statement_of(load)
    facts = OutFacts(model.parent, model.torch_name, model.summaries.targets.callee,
                     partial(_helper_stores_nothing, hazards), partial(_owned, hazards))
    line = abort_line(facts, load, stmt, model.owner(stmt)) if isinstance(stmt, ast.stmt) else None
    if line is None:
        return found
    return _possible(f"{found.reason}; but every path from there runs the `out=` call at line {line} on a tensor "
                     "computed from what that op returns, which PyTorch refuses in the forward where it requires "
                     "grad, so no backward reads the save")


def _owned(hazards: "Hazards", name: str, stmt: ast.stmt) -> bool:
    """Every binding of ``name`` reaching ``stmt`` made the tensor it holds there (:func:`_made_fresh`)."""
    model = hazards.model
    flow = model.flow(model.owner(stmt))
    reaching = model.reaching(flow, name, stmt)
    return bool(reaching) and all(_made_fresh(hazards, flow, b) for b in reaching)


def _stores_nothing(hazards: "Hazards", call: ast.Call) -> bool:
    """A function of the file that stores nothing past its call."""
    target = hazards.model.summaries.targets.callee(call)
    return isinstance(target, tuple) and keeps_nothing(hazards.model, target[0])


# In-place ops that refuse, in the forward, an input sharing memory with the tensor they write ("unsupported
# operation: some elements of the input tensor and the written-to tensor refer to a single memory location"),
# checked with torch 2.13 for the source/values argument being the written tensor itself. Not copy_, masked_scatter_,
# masked_fill_ or the pointwise ones (add_, mul_, lerp_, ...): they accept the written tensor itself as an input.
# Not index_reduce_ or scatter_reduce_ either, which refuse it too but save their own result: a second write of
# the tensor (the next call) spoils that, whatever the source is.
OVERLAP_REFUSED = frozenset({"index_copy_", "index_add_", "scatter_", "scatter_add_", "index_put_", "put_"})


def refused_overlap(model: "HazardFacts", flow: Flow, key: str, load: ast.expr, write: Located, target: ast.expr) -> bool:
    """``self.v.index_copy_(1, idx, self._v)`` where ``self._v`` (read at ``load``, an argument of the writing
    call itself) is the written tensor on some path (``self.v = self._v`` in an ``if`` arm): the save that the
    write would spoil is this call's own, and on the path where the two are one tensor the op refuses the
    overlap before it saves or writes anything (:data:`OVERLAP_REFUSED`). Only the same tensor (identity), never
    a view: two disjoint views of one base share a version counter but no memory, and the op runs."""
    if not (isinstance(write, ast.Call) and isinstance(write.func, ast.Attribute) and write.func.attr in OVERLAP_REFUSED
            and (any(a is load for a in write.args) or any(k.value is load for k in write.keywords))):
        return False
    written = target_key(target)
    if written is None:
        return False
    if key == written:
        return True
    identity, views = model.aliases(flow, written, model.range(model.statement_of(write))[0])
    return key in identity and key not in views


def turn_apart(model: "HazardFacts", flow: Flow, key: str, load: ast.expr, target: ast.expr,
               found: Optional[Hazard]) -> Optional[Hazard]:
    """``g.index_copy_(1, idx, g2_)`` in one arm of an ``if`` of a loop's body, ``g = g2_`` in the other, ``g2_``
    bound anew at the top of the body before that ``if`` on every turn, and ``g.mul_(m)`` later: the written
    name meets the saved one (``key``, read at ``load``) only through the other arm, which never runs in the
    turn that saves. The tensor saved in turn j is named by ``key`` alone until the next turn binds ``key`` again:
    each read of ``key`` that binding reaches is the saving statement (a torch call whose result is dropped), an
    in-place method on ``key`` whose result is dropped, or sits in the other arm. So the write meets it only if
    a later turn's binding makes the very same tensor again, which the analysis cannot see: possible, not
    proven."""
    if found is None or not found.proven or "." in key or target_key(target) in (None, key) \
            or "." in cast(str, target_key(target)) or isinstance(flow.owner, ast.Module) or key in flow.declared:
        return found
    stmt = model.statement_of(load)
    if not _dropped_torch_call(model, load):
        return found
    reaching = model.reaching(flow, key, stmt)
    loop = next((up for up in model.ancestors(stmt) if isinstance(up, (ast.For, ast.AsyncFor, ast.While, *OWNERS))), None)
    if len(reaching) != 1 or not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)):
        return found
    made = reaching[0]
    if made.form not in ("assign", "other") or made.sources or not isinstance(made.stmt, ast.Assign) \
            or len(made.stmt.targets) != 1 or made.stmt not in loop.body or not _new_each_time(model, made.stmt, key):
        return found
    split = next((s for s in loop.body if within(stmt, s)), None)
    if not isinstance(split, ast.If) or loop.body.index(split) <= loop.body.index(made.stmt) \
            or not split.orelse or branch(stmt, split) is None:
        return found
    side = branch(stmt, split)
    _, made_end = model.range(made.stmt)
    for pos, other in flow.loads.get(key, []):
        if other is load:
            continue
        if model.owner(other) is not flow.owner:
            return found  # (a closure reads it late)
        holder = next((s for s in loop.body if within(other, s)), None)
        if holder is not None and loop.body.index(holder) <= loop.body.index(made.stmt):
            if any(binds([s], key) or isinstance(s, ast.If) and always_binds(s, key)
                   for s in loop.body[:loop.body.index(holder)]):
                continue  # (a turn's first reads: bound again before them, never the last turn's tensor)
            return found
        if made not in model.reaching(flow, key, model.statement_of(other)):
            continue
        if within(other, split) and branch(other, split) not in (None, side):
            continue  # the other arm: never in the turn that saves
        if pos >= made_end and within(other, loop) and _dropped_torch_call(model, other):
            continue  # `g2_.mul_(m)`, `v.index_copy_(0, i, g2_)`: no other name for the tensor
        return found
    return _possible(f"{found.reason}; but the written `{target_key(target)}` holds `{key}` only through the other "
                     f"arm of the `if` at line {split.lineno}, which never runs in the turn that saves, and line "
                     f"{made.stmt.lineno} binds `{key}` anew each turn before it")


def _new_each_time(model: "HazardFacts", stmt: ast.Assign, key: str) -> bool:
    """``key = torch.where(m, a, b)`` (an op of ``requires_grad.makes_fresh``, or a helper whose summary returns
    an op's result), ``y, key, h = helper(...)`` (a module function of the file each of whose ``return``s gives,
    in that place, an op's result: ``summaries.walk_returned``): each run of ``stmt`` binds a tensor no other
    value shares (not a view: a view of a lasting tensor shares its version counter across turns)."""
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        if makes_fresh(model, value):
            return True
        summary = model.summaries.of_call(value) if isinstance(value, ast.Call) else None
        return summary is not None and summary.returns is Returns.FRESH and not summary.mutates
    if not (isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts)
            and isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return False
    slot = next(i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == key)
    helper = _module_function(model, value.func.id)
    if helper is None or helper.decorator_list:
        return False
    params = [a.arg for a in (*helper.args.posonlyargs, *helper.args.args, *helper.args.kwonlyargs)]
    returns = [r.value for r in model.walk(helper) if isinstance(r, ast.Return) and model.owner(r) is helper]
    return bool(returns) and all(
        isinstance(r, ast.Tuple) and len(r.elts) == len(target.elts) and not isinstance(r.elts[slot], ast.Starred)
        and walk_returned(model.summaries, helper, r.elts[slot], params, [])[0][0] is Returns.FRESH for r in returns)


def _dropped_torch_call(model: "HazardFacts", load: ast.expr) -> bool:
    """``load`` is an argument (or the receiver) of a torch function or an in-place tensor method (not
    ``set_``, which shares storage) called as a statement of its own: its result dropped, no name made."""
    stmt, call = model.statement_of(load), model.parent(load)
    if isinstance(call, ast.Attribute) and call.value is load:
        call = model.parent(call)
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.value is load):
            return False
    elif not (isinstance(call, ast.Call) and (load in call.args or any(k.value is load for k in call.keywords))):
        return False
    return isinstance(stmt, ast.Expr) and stmt.value is call and (
        isinstance(call.func, ast.Attribute) and call.func.attr in torch_api.INPLACE_METHODS and call.func.attr != "set_"
        or model.torch_name(call.func) is not None)


def inside_the_writer(hazards: "Hazards", load: ast.expr, write: Located, found: Optional[Hazard]) -> Optional[Hazard]:
    """``self.adjust(const, upper)`` where ``const`` may be ``upper`` (``const = upper`` on one
    path) and the helper saves ``const`` and writes ``upper``: the save runs inside the writing
    call, in its own order, and needs an input that requires grad. Where every argument the
    helper's summary says it saves is a constant here (nothing can make it require grad), the
    analysis cannot tell that the save happens at all: possible, not proven."""
    if found is None or not found.proven or not isinstance(write, ast.Call) or write.keywords \
            or not any(within(load, a) for a in write.args) or any(isinstance(a, ast.Starred) for a in write.args):
        return found
    summary = hazards.model.summaries.of_call(write)
    if summary is None:
        return found
    saved = [a for a, s in zip(write.args, summary.inputs) if s is not Saved.NO]
    if not saved or len(summary.inputs) < len(write.args) or not all(hazards.constants.constant(a) for a in saved):
        return found
    return _possible(f"{found.reason}, inside the call that writes it, if an input of the saving op requires "
                     "grad (the arguments it saves are constants here)")


class Consumers(_HazardsPart):
    """Saves made by the ops that read the written tensor before the write (an input saved), in order of execution."""

    def _known_tensor(self, node: Located, target: ast.expr) -> bool:
        """A proven hazard writes into a tensor: known to be one, or written by a tensor method."""
        base = _base(target)
        if is_tensor(base, self.model) or self._fed_to_a_module(base, node) or read_as_tensor(self.model, base, node) \
                or _slice_of_a_tensor(self.model, base, node):
            return True
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in torch_api.INPLACE_METHODS

    def _fed_to_a_module(self, base: ast.expr, write: Located) -> bool:
        """``x`` passed, before the write, to a torch module (``self.conv(x)``, ``self.conv(x.transpose(1, 2))``)
        or to a summarized callee that saves it (``self.ln_1(x)``: a summary proves a save of tensor
        operands only): a Python number there would have raised, so ``x`` is a tensor."""
        if not isinstance(base, ast.Name):
            return False
        flow = self.model.flow(self.model.owner(write))
        before = self.model.range(write)[0]
        for pos, load in flow.loads.get(base.id, []):
            passed: ast.expr = load
            while True:  # `x.transpose(1, 2)`, `x.permute(0, 2, 1).contiguous()`: a view of it is passed
                method = self.model.parent(passed)
                if not (isinstance(method, ast.Attribute) and method.attr in VIEW_METHODS):
                    break
                view = self.model.parent(method)
                if not (isinstance(view, ast.Call) and view.func is method):
                    break
                passed = view
            call = self.model.parent(passed)
            runs_first = pos < before or (isinstance(write, (ast.AugAssign, ast.Assign)) and within(load, write.value))
            if not runs_first or not isinstance(call, ast.Call) or call.args[:1] != [passed]:
                continue
            if self.hazards.ops._module_of(call.func) is not None:
                return True
            summary = self.model.summaries.of_call(call)
            if summary is not None and summary.inputs[:1] == (Saved.YES,):
                return True
        return False

    def _use_hazards(self, flow: Flow, key: str, since: Pos, at: Span, target: ast.expr,
                     rebound_in: Sequence[Pos], write: Located, integral: bool) -> Iterator[Optional[Hazard]]:
        """Saves of ``key`` by the ops that read it (see :meth:`_uses`); proven only for a
        floating tensor (``n -= r`` after ``x / n``: n may be a Python number the op never
        saved; ``mask &= m`` after ``x * mask``: saved only as a mask, if at all)."""
        tensor: Optional[bool] = None
        memo: List[bool] = []

        def floating() -> bool:  # asked only where it decides (a deep right-hand side costs)
            if not memo:
                memo.append(not integral and self.floating.written_floating(write))
            return memo[0]

        for found in self._uses(flow, key, since, at, target, rebound_in, write, floating):
            if found is not None and found.proven and not isinstance(found, IndexHazard):
                tensor = self._known_tensor(write, target) if tensor is None else tensor
                if not tensor or integral:
                    found = _possible(found.reason + (" (an integral or boolean tensor)" if integral else ""))
            yield found

    def _uses(self, flow: Flow, key: str, since: Pos, at: Span, target: ast.expr,
              rebound_in: Sequence[Pos], write: Located,
              floating: Callable[[], bool] = lambda: False) -> Iterator[Optional[Hazard]]:
        """A use of ``key`` as a saved input of an op after ``since``, up to the write at ``at`` (its own
        right-hand side first), or later in a loop around it not binding ``key`` again before the write."""
        start, end = at
        loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le
                 and not any(ls <= b <= start for b in rebound_in)]
        for pos, node in flow.loads.get(key, []):
            if node is target:
                continue  # the written tensor itself, as the in-place call's receiver
            before = since <= pos < end
            in_loop = any(ls <= pos <= le for ls, le in loops)
            if not (before or in_loop):
                continue
            if start <= pos < end and not in_loop and not self._runs_before(node, write):
                continue
            if not in_loop and self._other_branch(node, write):
                continue  # `if a: y = x.square()` / `elif b: x.abs_()`: one pass runs one of them
            if self._returns_before(node, write):
                continue  # `if first: return (q * x).sum()` / `q *= 2`: no path runs both
            if not before and pos >= end and self._rebound_after(flow, key, node, write):
                continue  # `h.mul_(2)` / `h = torch.sigmoid(h * w)`: the next turn writes the new `h`
            stmt = self.model.statement_of(node)
            if self.model.intended_reason(stmt, None) or unreached(self.hazards, node, write):
                continue  # `cost = f(w); cost.backward()` / `w.mul_(0.5)`: the backward freed what was saved
            if before and refused_overlap(self.model, flow, key, node, write, target):
                continue  # `self.v.index_copy_(1, idx, self._v)` where `self.v = self._v` on some path: refused there
            found = inside_the_writer(self.hazards, node, write, self._consumer(node, key, floating))
            found = turn_apart(self.model, flow, key, node, target, found)  # `g.index_copy_(.., g2_)` / else `g = g2_`
            found = aborted_by_out_call(self.hazards, node, found)  # `torch.cumsum(phi[:, 0] * w, 0, out=c)` after it
            yield found if before else from_a_later_turn(self.model, found, self.model.range(node), write)

    def _rebound_after(self, flow: Flow, key: str, load: ast.expr, write: Located) -> bool:
        """A statement of the loop's own body around ``write`` binds ``key`` again after it
        reads ``load`` (its right-hand side, or a later statement): the next turn's write
        modifies the new value, not the one the op at ``load`` saved."""
        loop = _loop_around(self.model, self.model.statement_of(write), self.model.range(load))
        at = self.model.range(load)[0]
        return loop is not None and any(
            b.form in ("assign", "ann") and self.model.parent(b.stmt) is loop and b.end > at
            for b in flow.bindings.get(key, []))

    def _runs_before(self, load: ast.expr, write: Located) -> bool:
        """Within the write's own statement, does the op reading ``load`` run before the write? An
        assignment's right-hand side does; an in-place call runs after its arguments and what precedes
        it, never with the other branch of a conditional expression (``x.mul_(g) if c else x * g``)."""
        if not isinstance(write, ast.Call):
            return True
        for up in self.model.ancestors(load):
            if isinstance(up, ast.IfExp):
                branches = [b for b in (up.body, up.orelse) if within(load, b) or within(write, b)]
                if len(branches) == 2 and not any(within(load, b) and within(write, b) for b in branches):
                    return False
            if up is write:
                return True  # an argument of the in-place call
        return self.model.range(load)[1] <= self.model.range(write)[0]

    def _returns_before(self, load: ast.expr, write: Located) -> bool:
        """Whether ``load`` is read by a ``return`` statement that does not hold ``write``: the
        function ends there, so no path runs the write after it (in a loop too), except a
        ``finally`` around the ``return`` that holds the write."""
        stmt = self.model.statement_of(load)
        if not isinstance(stmt, ast.Return) or within(write, stmt):
            return False
        return not any(isinstance(up, ast.Try) and any(within(write, s) for s in up.finalbody)
                       for up in self.model.ancestors(stmt))

    def _other_branch(self, load: ast.expr, write: Located) -> bool:
        """Whether ``load`` and ``write`` sit in different branches of one ``if``, or under
        ``if``s needing opposite values of one steady flag (``branches.flag_excluded``)."""
        for up in self.model.ancestors(write):
            if isinstance(up, ast.If) and up.orelse:
                here, there = branch(write, up), branch(load, up)
                if here and there and here != there:
                    return True
        return flag_excluded(load, write, self.model.ancestors)

    def _consumer(self, node: ast.expr, key: str, floating: Callable[[], bool] = lambda: False) -> Optional[Hazard]:
        """Does the op that reads ``node`` save it? (Views of it count as it; :func:`unsure_view`.)
        ``floating``: the write shows the tensor is floating (it would raise on an integral one)."""
        return unsure_view(self, node, self._consumer_of(node, key, floating))

    def _consumer_of(self, node: ast.expr, key: str, floating: Callable[[], bool]) -> Optional[Hazard]:
        node = self._through_views(node)
        parent = self.model.parent(node)
        line = node.lineno
        index: Optional[int] = None
        op_node: Union[ast.Call, ast.BinOp, None] = None
        if isinstance(parent, ast.Call) and parent.func is not node:
            plain = [a for a in parent.args if not isinstance(a, ast.Starred)]
            index = next((i for i, a in enumerate(plain) if a is node), None)
            if index is not None and isinstance(parent.func, ast.Attribute) and self.hazards.ops._is_method_call(parent):
                index += 1
            if index is not None and plain and isinstance(plain[0], ast.Constant) and isinstance(plain[0].value, str):
                index -= 1  # einsum("ij,jk->ik", a, b): the equation is no operand
            op_node = parent
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            call = self.model.parent(parent)
            if parent.attr in torch_api.INPLACE_METHODS:
                # another write into it (reported on its own); `x.sigmoid_()` also saves its result
                if isinstance(call, ast.Call) and call.func is parent and "output" in self.hazards.ops._inplace_saves(call, parent.attr) \
                        and not self.constants.constant(node):
                    own = all(self.model.kind(a) is Kind.SCALAR or self.constants.constant(a) for a in call_args(call))
                    if own and not self.hazards.grad_shown(self.hazards.grad_operands(call), self.model.statement_of(call)):
                        return _possible(f"`{key}` was saved for backward by `{self.model.code(parent).strip()}()` "
                                         f"at line {line} (its result), if it requires grad (nothing the analysis "
                                         "sees shows it does)")
                    return Hazard(f"`{key}` was saved for backward by `{self.model.code(parent).strip()}()` "
                                  f"at line {line} (its result, the tensor itself)")
                return None
            if isinstance(call, ast.Call) and call.func is parent:
                index, op_node = 0, call  # x.exp(): the receiver is input 0
        elif isinstance(parent, ast.BinOp):
            index, op_node = (0 if parent.left is node else 1), parent
        if (found_index := self._index_save(node, key)) is not None:
            return found_index
        if op_node is None or index is None:
            return None
        if isinstance(self.model.parent(op_node), ast.Compare):
            return None  # `abs(x) < eps`: only compared, so backward never reaches what the op saved
        found = _unseen_grad_op(self.model, op_node) or self.hazards.ops._op_of(op_node)
        if found is None:
            return None
        op, saved = found
        if saved == UNSEEN:
            if not is_tensor(node, self.model):
                return None
            return _possible(f"`{key}` is passed to `{op}` at line {line}, a call the analysis cannot see into")
        if f"input{index}" not in saved:
            return None
        verdict, own_only = self.hazards.saved_for.judge(op_node, index, op, node, key, line)
        if verdict != _GO_ON:
            return cast(Optional[Hazard], verdict)
        if isinstance(op_node, ast.BinOp) and (op in ("*", "@", "%") or (op, index) in (("/", 0), ("**", 1))):
            # x * c saves x only for c's gradient: nothing when c is a number or a constant
            other = op_node.right if index == 0 else op_node.left
            if self.constants.constant(other):
                return None
            if self.model.views.requirement.requires_grad(other, self.model.statement_of(op_node)) == "yes":
                # saved for the other operand's gradient, whatever its own dtype or provenance
                return Hazard(f"`{key}` was saved for backward by `{op}` at line {line} (for the gradient "
                              f"of `{self.model.code(other).strip()}`, which requires grad)")
            if self.constant_args.constant(other):
                return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if a caller elsewhere "
                                 "passes a tensor that requires grad (the calls in this file pass constants)")
            if not is_tensor(other, self.model):
                return _possible(f"`{key}` is saved by `{op}` at line {line} if the other operand is a "
                                 "tensor that requires grad, which the analysis cannot tell")
        elif self.constants.constant(op_node):
            return None  # nothing the op reads requires grad: it saves nothing
        elif self.constant_args.constant(op_node):
            return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if a caller elsewhere "
                             "passes a tensor that requires grad (the calls in this file pass constants)")
        if op_short(op) in INTEGRAL_OK and not floating_shown(self.model, self.floating, node, self.model.statement_of(op_node)) \
                and not (op_short(op) in _OWN_GRADIENT and floating()) and not _one_dtype_with_floating(self, op_node, node, op):
            return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if it is a floating "
                             f"tensor (`{op}` also takes integral ones: indices, masks)")
        if op in torch_api.MODULES_WITH_PARAMETERS and isinstance(op_node, ast.Call) \
                and may_be_frozen(self.model, op_node.func):
            return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if the module's "
                             "parameters require grad (the file switches `requires_grad` off on some)")
        if (own_only or _own_gradient(self, op_node, node, saved)) and not self.hazards.grad_shown(
                [node] if own_only else [op_node, *self.hazards.grad_operands(op_node)], self.model.statement_of(op_node)):
            return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if it requires grad "
                             f"(`{op}` saves it for its own gradient; nothing the analysis sees shows it requires grad)")
        if for_others_unshown(self.hazards, op_node, node):
            return _possible(f"`{key}` was saved for backward by `{op}` at line {line}, if another operand requires "
                             f"grad (`{key}` does not, so `{op}` records a backward only through them; nothing the "
                             "analysis sees shows one does)")
        return Hazard(f"`{key}` was saved for backward by `{op}` at line {line}")

    def _index_save(self, node: ast.expr, key: str) -> Optional[Hazard]:
        """An op that keeps ``node`` as its index, target or mask (:mod:`~codemod.analysis.index_saves`)."""
        reason = IndexSaves(self.model, self.hazards).saved(node, key)
        return None if reason is None else IndexHazard(reason)

    def _copying_index(self, sub: ast.Subscript) -> bool:
        """An index known to make a copy (advanced indexing): a list, a boolean tensor (a mask,
        0-d included), a comparison (a mask unless both sides are Python numbers), or a name
        bound only to comparisons or to what ``nonzero``/``argwhere``/``argsort``/``randperm``
        return (1-d or more; a 0-d index tensor would make a view)."""
        parts = [_uninverted(p) for p in (sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice])]
        for part in parts:
            if isinstance(part, (ast.List, ast.ListComp)) or boolean_tensor(self.model, part):
                return True  # a list, or a boolean mask (`out[out.abs() > 1]`, `out[clipped]`)
            if isinstance(part, ast.Compare) and all(isinstance(op, _MASK_COMPARISONS) for op in part.ops):
                return True  # `x[a != b]`: a mask (see below)
            if isinstance(part, ast.Call) and _index_tensor(self.model, part):
                return True  # `x[torch.where(m)]`, `x[torch.nonzero(m)]`: index tensors (advanced indexing copies)
            if isinstance(part, ast.Name):
                flow = self.model.flow(self.model.owner(sub))
                bound = [element_bound(b) for b in self.model.reaching(flow, part.id, self.model.statement_of(sub))]
                if bound and all(value is not None and (_int_list(value) or _index_tensor(self.model, _dims_kept(value)) or row_of_index_matrix(
                        self.model.torch_name, partial(_reaching_at, self.model), value, partial(_one_index, self.model))) for value in bound):
                    return True  # (`spk = torch.nonzero(m)[k]`: a row of hits, 1-d: `x[i, spk]` copies)
                if bound and all(isinstance(v, ast.Compare) and all(isinstance(op, _MASK_COMPARISONS) for op in v.ops)
                                 for v in bound):
                    # `mask = idx[0] != idx[1]`, the sides of unknown kind: a boolean tensor (a
                    # copy) or a Python bool (`x[True]`, a view no one indexes with); not shown
                    # a view, so no save through it is claimed
                    return True
        return False

    def _through_views(self, node: ast.expr) -> ast.expr:
        """``x[0]``, ``x.view(...)``, ``x.t()``: an op on the view reads (and may save) x (:func:`through_views`)."""
        return through_views(self.model, self._copying_index, node)


def _one_dtype_with_floating(consumers: "Consumers", op_node: ast.expr, node: ast.expr, op: str) -> bool:
    """An op that refuses operands of different dtypes (:data:`ONE_DTYPE`) with another operand
    shown floating: ``node`` is floating too (``einsum(q, S)``, ``S @ w`` with ``q``, ``w`` floating)."""
    at = consumers.model.statement_of(op_node)
    return op_short(op) in ONE_DTYPE and any(
        floating_shown(consumers.model, consumers.floating, o, at) for o in consumers.hazards.operands(op_node) if not within(node, o))


def _own_gradient(consumers: "Consumers", op_node: ast.expr, node: ast.expr, saved: Saves) -> bool:
    """The op saves ``node`` for ``node``'s own gradient only: its other operands are Python
    numbers or constants (``x ** 2``, ``2 / x``), or it saves no other input (``x.norm()``,
    ``x.logsumexp(-1)``, ``torch.clamp(x, lo, hi)``). Then the save matters only where the
    op's input requires grad."""
    if isinstance(op_node, ast.BinOp):
        other = op_node.right if within(node, op_node.left) else op_node.left
        return consumers.model.kind(other) is Kind.SCALAR or consumers.constants.constant(other)
    others = [o for o in consumers.hazards.operands(op_node) if not within(node, o)]
    if others and all(consumers.model.kind(o) is Kind.SCALAR or consumers.constants.constant(o) for o in others):
        return True  # `torch.maximum(x, torch.tensor(1.0))`: no other input requires grad, so x's own decides
    return not any(s.startswith("input") and s != "input0" for s in saved)


def through_views(model: "HazardFacts", copying_index: Callable[[ast.Subscript], bool], node: ast.expr) -> ast.expr:
    """What an op reading ``node`` reads of it: up through its views (``x[0]``, ``x.view(...)``,
    ``x.t()``, ``torch.diagonal(x)``, a helper of the file returning one) to the outermost."""
    while True:
        parent = model.parent(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if copying_index(parent):
                return node  # `x[idx]` with a list or 1-d index tensor copies: what saves it never sees x
            node = parent
            continue
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in VIEW_METHODS:
            call = model.parent(parent)
            if isinstance(call, ast.Call) and call.func is parent:
                node = call
                continue
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in ("T", "mT"):
            # (not `.data`: a tensor of its own version counter, so what saves it never sees x's writes)
            node = parent
            continue
        if isinstance(parent, ast.Call) and parent.func is not node and (  # `torch.diagonal(x, dim1=1, dim2=2)`,
                parent.args[:1] == [node] and (model.torch_name(parent.func) or "") in FUNCTION_VIEWS
                or _helper_view(model, parent, node)):  # `diagonal(x)` returning one
            node = parent
            continue
        return node


class FormerViews(_HazardsPart):
    """Views of the written tensor saved under a name bound again before the write::

        m = x[:, 0]
        m = m + self.attn(self.norm(m))   # the LayerNorm saved the view `m` of `x`
        x[:, 0] = m                       # raises at backward: the view shares x's version counter

    At the write ``m`` is no view of ``x`` any more (the family of ``x`` has no ``m``), but the
    tensor the op saved still is. Counted where the name was bound, once, to a view of the
    written tensor (``aliases`` as of that binding), the written name bound the same way from
    there to the write (no rebinding between), and an op saved the view before the name was bound
    again: a load of the name from its view binding up to its next binding (that binding's
    right-hand side included) that :meth:`Consumers._consumer` shows saved, not on another
    branch than the write nor read by a return before it, with grad on there."""

    def saved(self, flow: Flow, key: str, stmt: Located, target: ast.expr, write: Located,
              integral: bool) -> Iterator[Optional[Hazard]]:
        if integral or "." in key:
            return
        start, _ = self.model.range(stmt)
        reaching = {id(b) for b in self.model.reaching(flow, key, stmt) if b.form != "aug"}
        current = set().union(*self.model.aliases(flow, key, start))
        consumers = self.hazards.consumers
        for name, bindings in flow.bindings.items():
            if name == key or name in current or "." in name:
                continue
            for b in bindings:
                if b.form != "assign" or b.value is None or not b.end <= start or not _sure_view_of(self.model, b.value, key):
                    continue
                later = sorted((c for c in bindings if c.start >= b.end), key=lambda c: c.start)
                if not later or later[0].end > start or name not in self.model.aliases(flow, key, b.end)[1] \
                        or {id(k) for k in self.model.reaching(flow, key, b.stmt) if k.form != "aug"} != reaching:
                    continue
                for pos, load in flow.loads.get(name, []):
                    if not b.end <= pos < later[0].end or consumers._other_branch(load, write) \
                            or consumers._returns_before(load, write) \
                            or self.model.intended_reason(self.model.statement_of(load), None):
                        continue
                    found = consumers._consumer(load, name)
                    if found is not None and found.proven and not consumers._known_tensor(write, target):
                        found = _possible(found.reason)
                    if found is not None:
                        yield found._replace(reason=f"{found.reason}, a view of `{key}` there")


def _no_backward_from(producers: "Producers", flow: Flow, load: ast.expr, written: ast.expr, depth: int) -> bool:
    """One read of :meth:`_never_backpropagated`'s tensor leads no backward to it; else, what
    ``dead_result`` shows with :func:`_ends` (``t.to(torch.long)``, ``t.max(dim=0).indices``, a write of
    it back into a tensor no backward reaches: ``t[:, 1:] = t[:, 1:] ** 2``)."""
    node: ast.expr = load
    parent = producers.model.parent(node)
    if isinstance(parent, ast.Compare) or (isinstance(parent, ast.Subscript) and parent.value is node
                                           and isinstance(parent.ctx, ast.Store)):
        return True
    if isinstance(parent, ast.AugAssign) and parent.target is node:
        return True  # `t *= w`: a write into it, read by nothing else
    if producers._sampled_into_a_mask(node):
        return True
    if isinstance(parent, ast.Call) and producers.model.summaries.reads_only_metadata(parent, node):
        return True  # `max_value(dist)`, a helper reading only `t.dtype`: not the values
    if _carries_no_history(producers.model, node):
        return True  # `torch.isnan(std)`, `self.scales.data = std`
    while isinstance(parent, ast.UnaryOp) and isinstance(parent.op, (ast.USub, ast.UAdd)):
        node, parent = parent, producers.model.parent(parent)  # `(-dist).topk(k)`: ranked negated
    ranked = _ranked_use(producers.model, node)  # `x.min(-1)[1]`, `_, i = x.topk(k)`: integers leave
    ranked = _cut_chain(producers.model, node) if ranked is None else ranked  # `float(d.min(1).values.median())`
    if ranked is True or (isinstance(ranked, ast.Name)
                          and producers._never_backpropagated(flow, ranked.id, written, depth + 1)):
        return True
    if isinstance(parent, ast.Attribute) and parent.value is node and ranked is None:
        call = producers.model.parent(parent)
        if parent.attr in _INDEX_ATTRIBUTES:
            return True
        if parent.attr in torch_api.INPLACE_METHODS and isinstance(call, ast.Call) \
                and isinstance(producers.model.parent(call), ast.Expr):
            return True  # another write, its result (the tensor itself) left unused
    return dead_result(producers.model, load, ends=_ends(producers.hazards))


class Producers(_HazardsPart):
    """Saves made by the op that produced the written tensor (its output saved), and when backward never reads them."""

    def __init__(self, hazards: "Hazards") -> None:
        super().__init__(hazards)
        self.unreached = UnreachedSearch()  # `_written_unreached`'s search

    def _only_without_grad(self, binding: Binding, stmt: Located, key: str) -> bool:
        """``y = x.softmax(-1)`` reaches the write only through the branch of an ``if
        x.requires_grad:`` where x does not require grad (the other branch rebinds y): the op's
        input required no grad there, so it saved nothing."""
        value = binding.value
        if not isinstance(value, ast.Call):
            return False
        inputs = [a for a in value.args if not isinstance(a, ast.Starred)]
        if isinstance(value.func, ast.Attribute) and self.model.torch_name(value.func) is None:
            inputs.insert(0, value.func.value)
        grad_inputs = [a for a in inputs if not self.constants.constant(a)]
        if len(grad_inputs) != 1 or not isinstance(grad_inputs[0], ast.Name):
            return False
        source = grad_inputs[0].id
        parent = self.model.parent(binding.stmt)
        own = cast(ast.stmt, binding.stmt)
        block = next((b for b in statement_lists(parent) if own in b), []) if parent is not None else []
        end = self.model.range(stmt)[0]
        for test in block[block.index(own) + 1:] if block else []:
            if self.model.range(test)[0] >= end:
                break
            if not isinstance(test, ast.If) or not test.orelse:
                continue
            grad_test = requires_grad_test(test.test, source)
            if grad_test is None:
                continue
            rebinding = test.body if grad_test else test.orelse  # the branch where `source` requires grad
            if binds(rebinding, key):
                return True
        return False

    def _never_backpropagated(self, flow: Flow, key: str, written: ast.expr, depth: int = 0,
                              made: Optional[Binding] = None) -> bool:
        """Every read of ``key`` (but the writes into it) is compared, sized, or turned into
        indices (``topk``/``sort``/``max`` values that are themselves only so used): backward
        never reaches the op that made it, so what that op saved is never read. ``made``: the
        binding of that op's output; reads that only other tensors' bindings reach are no uses
        (:func:`_carriers`)."""
        here = self.model.owner(written)
        carriers = _carriers(self.model, flow, key, made) if made is not None else set()
        loads = [n for _, n in flow.loads.get(key, []) if n is not written and (
            made is None or self.model.owner(n) is not here  # (a closure's read: kept)
            or any(id(b) in carriers for b in self.model.reaching(flow, key, self.model.statement_of(n))))]
        if not loads or depth > 2:
            return not loads and depth > 0  # `_, idx = x.topk(k)`: the values dropped, never read
        loads = [n for n in loads if self.model.owner(n) is here  # a nested function's own `key` is another name
                 or key not in self.model.flow(self.model.owner(n)).bindings]
        return all(_no_backward_from(self, flow, load, written, depth) for load in loads)

    def _sampled_into_a_mask(self, node: ast.expr) -> bool:
        """``torch.bernoulli(p).bool()`` (or ``p.bernoulli()``, then ``.bool()``, ``.long()``, a
        comparison): the sample is made discrete, so backward never runs into ``p``'s op."""
        parent = self.model.parent(node)
        sample: Optional[ast.AST] = None
        if isinstance(parent, ast.Call) and parent.args[:1] == [node] and (
                (self.model.torch_name(parent.func) or "").rsplit(".", 1)[-1] == "bernoulli"
                or self._bernoulli_helper(parent)):
            sample = parent
        elif isinstance(parent, ast.Attribute) and parent.value is node and parent.attr == "bernoulli":
            call = self.model.parent(parent)
            sample = call if isinstance(call, ast.Call) and call.func is parent else None
        if sample is None:
            return False
        after = self.model.parent(sample)
        if isinstance(after, ast.Compare):
            return True
        return isinstance(after, ast.Attribute) and after.attr in ("bool", "long", "int", "byte", "short") \
            and isinstance(self.model.parent(after), ast.Call)

    def _bernoulli_helper(self, call: ast.Call) -> bool:
        """``bernoulli(probs)`` of a function in scope whose every return is
        ``torch.bernoulli(<its first parameter>, ...)`` (pyro's Rejector.rsample)."""
        if not isinstance(call.func, ast.Name):
            return False
        flow = self.model.flow(self.model.owner(call))
        defs = [b.stmt for b in flow.bindings.get(call.func.id, []) if b.form == "def"]
        if len(defs) != 1 or not isinstance(defs[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        func = defs[0]
        first = [*func.args.posonlyargs, *func.args.args][:1]
        returns = [n for n in self.model.walk(func) if isinstance(n, ast.Return) and self.model.owner(n) is func]
        return bool(first) and bool(returns) and all(
            isinstance(r.value, ast.Call) and r.value.args[:1] and isinstance(r.value.args[0], ast.Name)
            and r.value.args[0].id == first[0].arg
            and (self.model.torch_name(r.value.func) or "").rsplit(".", 1)[-1] == "bernoulli" for r in returns)

    def switched_leaf(self, arg: ast.expr, at: ast.Call) -> bool:
        """``arg`` is ``t.requires_grad_()`` (or a name whose one reaching binding is) of a
        tensor ``t`` that requires no grad (``torch.randn(4, 3)``, ``x.detach()``): a leaf that
        requires grad. Of ``(w * 2)``, which already requires grad, it makes no leaf. Not where
        the function switches the name's requires_grad elsewhere (``x.requires_grad_(False)``)."""
        value: Optional[ast.expr] = arg
        if isinstance(arg, ast.Name):
            owner = self.model.owner(at)
            reaching = self.model.reaching(self.model.flow(owner), arg.id, self.model.statement_of(at))
            value = reaching[0].value if len(reaching) == 1 and reaching[0].form == "assign" else None
            if any(isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == arg.id
                   and (n.attr == "detach_" or n.attr == "requires_grad_" and n is not getattr(value, "func", None)
                        or n.attr == "requires_grad" and not isinstance(n.ctx, ast.Load)) for n in ast.walk(owner)):
                return False  # `x.requires_grad_(False)`, `x.detach_()`: switched off, maybe before the call
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and value.func.attr == "requires_grad_" and creates_leaf(value) and self.constants.constant(value.func.value)

    def _producer(self, expr: ast.expr, stmt: Located, name: str = "",
                  floating: Callable[[], bool] = lambda: False, leaf: bool = True) -> Optional[Hazard]:
        """The expression's value is the output of an op that saves its output (or, where ``leaf``, a leaf).
        ``floating``: the write into it shows it is floating (it would raise on an integral one)."""
        what = f"`{name}`" if name else "the tensor"
        same = identity_argument(expr, self.model.torch_name, self.model.qualified_names)
        if same is not None:  # `torch.jit._unwrap_optional(torch.sigmoid(x))` is the sigmoid's output
            return self._producer(same, stmt, name, floating, leaf)
        if leaf and isinstance(expr, ast.Call) and any(k.arg == "requires_grad" and is_const(k.value, True) for k in expr.keywords):
            return Hazard(f"{what} is a leaf that requires grad: autograd forbids writing into it in place")
        found = _unseen_grad_op(self.model, expr) or self.hazards.ops._op_of(expr)
        if found is None:
            return None
        op, saved = found
        line = stmt.lineno
        if saved == UNSEEN:
            if not is_tensor(expr, self.model):
                return None  # only a tensor we know of is assumed saved by what we cannot see
            return _possible(f"{what} comes from `{op}` at line {line}, a call the analysis cannot see into")
        if "output" in saved:
            if self.constants.constant(expr):
                return None  # nothing on the path requires grad: nothing was saved
            reason = f"{what} is the output of `{op}` at line {line}, which autograd saves for backward"
            if self.model.grad.made_in_inference(expr):  # the same tier: only what PyTorch refuses differs
                reason = (f"{what} is an inference tensor (the output of `{op}` at line {line}, under "
                          "`torch.inference_mode()`), which PyTorch refuses to modify in place outside inference mode")
            if op_short(op) in INTEGRAL_OK and not floating_shown(self.model, self.floating, expr, stmt) and not floating():
                return _possible(f"{reason}, if it is a floating tensor (`{op}` also takes integral ones, "
                                 "which it saves without a gradient)")
            if self.constant_args.constant(expr):
                return _possible(f"{reason}, if a caller elsewhere passes a tensor that requires grad "
                                 "(the calls in this file pass constants)")
            if not self.hazards.grad_shown([expr, *self.hazards.grad_operands(expr)], stmt):
                return _possible(f"{reason}, if its input requires grad (nothing the analysis sees shows it does)")
            return Hazard(reason)
        if "output?" in saved and not self.constants.constant(expr):
            return _possible(f"{what} is the output of `{op}` at line {line}, which autograd saves for backward "
                             "if the exponent is a tensor (the analysis cannot tell; a number saves only the base)")
        return None

    def listed(self, target: ast.Subscript, write: Located) -> Optional[Tuple[List[ast.expr], ast.stmt]]:
        """``laterals[i - 1] op= v`` where ``laterals`` is a list this function built, once,
        as ``[conv(x) for conv in self.convs]`` or ``[a, b]``, and reads only by its elements
        (``laterals[i]``, ``len(laterals)``, writes into elements in place) up to the write:
        the expressions its elements come from, and the statement that built it."""
        if not isinstance(target.value, ast.Name) or isinstance(target.slice, (ast.Slice, ast.Tuple)):
            return None  # (`rows[1:3] += more` extends a list)
        name = target.value.id
        owner = self.model.owner(write)
        flow = self.model.flow(owner)
        stmt = self.model.statement_of(write)
        bindings = flow.bindings.get(name, [])
        reaching = self.model.reaching(flow, name, stmt)
        if len(bindings) != 1 or len(reaching) != 1 or reaching[0] is not bindings[0] or name in flow.declared \
                or bindings[0].form != "assign" or not isinstance(bindings[0].stmt, ast.Assign):
            return None
        value = bindings[0].value
        if isinstance(value, ast.ListComp) and len(value.generators) == 1 and not value.generators[0].ifs:
            elements = [value.elt]
        elif isinstance(value, ast.List) and value.elts and not any(isinstance(e, ast.Starred) for e in value.elts):
            elements = list(value.elts)
        else:
            return None
        for _, load in flow.loads.get(name, []):
            parent = self.model.parent(load)
            appended = self._appended(parent) or slot_stored(self.model, parent, load)
            if appended is not None:  # `laterals.append(self.top(x))`, `laterals[i] = self.smooth(...)`
                if not (isinstance(parent, ast.Subscript) and self._after(load, stmt, flow)):
                    elements.append(appended)  # one more value an element may hold at the write
                continue
            if isinstance(parent, ast.Subscript) and parent.value is load:
                if isinstance(parent.ctx, ast.Load) or isinstance(self.model.parent(parent), ast.AugAssign):
                    continue
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len" \
                    and parent.args == [load]:
                continue
            if isinstance(parent, (ast.comprehension, ast.For)) and parent.iter is load:
                continue  # `for level in levels`: each element, as it is
            if self._after(load, stmt, flow):
                continue  # read after the write, outside a loop around both
            return None
        if any(isinstance(e, ast.Constant) or self.model.kind(e) in (Kind.SCALAR, Kind.OTHER) for e in elements):
            return None  # `widths = [0, 0, 0]`: numbers
        return elements, cast(ast.stmt, bindings[0].stmt)

    def _after(self, load: ast.expr, stmt: Located, flow: Flow) -> bool:
        """``load`` runs after the statement ``stmt``, outside any loop around both."""
        start, end = self.model.range(stmt)
        at = self.model.range(load)[0]
        return at >= end and not any(ls <= start <= le and ls <= at <= le for ls, le in flow.loops)

    def _appended(self, parent: Optional[ast.AST]) -> Optional[ast.expr]:
        """``laterals.append(v)`` as a statement of its own (``parent`` is ``laterals.append``): ``v``."""
        call = self.model.parent(parent) if isinstance(parent, ast.Attribute) and parent.attr == "append" else None
        if not (isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1 and not call.keywords
                and not isinstance(call.args[0], ast.Starred) and isinstance(self.model.parent(call), ast.Expr)):
            return None
        return call.args[0]

    def elements_unheld(self, target: ast.Subscript, write: Located) -> bool:
        """No element of the list (see :meth:`listed`) is held elsewhere when the write runs:
        every read of one before it (or in a loop around it) is an operand of an operator, of a
        torch function, of a call of the file's code that returns a fresh tensor and mutates
        nothing, or an attribute (``.shape``): rebinding the slot hides the write from no one."""
        name = cast(ast.Name, target.value).id
        flow = self.model.flow(self.model.owner(write))
        stmt = self.model.statement_of(write)
        start, end = self.model.range(stmt)
        for pos, load in flow.loads.get(name, []):
            if pos >= end and not any(ls <= start <= le and ls <= pos <= le for ls, le in flow.loops):
                continue
            element = self.model.parent(load)
            if isinstance(element, (ast.comprehension, ast.For)):
                return False  # the loop's variable holds an element
            if not isinstance(element, ast.Subscript) or element is target or isinstance(element.ctx, ast.Store):
                continue  # `len(rows)`, the write itself, or a store into a slot (it holds no element)
            parent = self.model.parent(element)
            if isinstance(parent, (ast.BinOp, ast.Attribute)) or isinstance(parent, ast.AugAssign) and parent.value is element:
                continue  # an operand (`hs[i] += hs[i - 1]`), or `.shape`
            if isinstance(parent, ast.Call) and parent.func is not element and element in parent.args:
                if self.model.torch_name(parent.func) is not None:
                    continue
                summary = self.model.summaries.of_call(parent)
                if summary is not None and summary.returns is Returns.FRESH and not summary.mutates:
                    continue
            return False
        return True

    def _every(self, listed: Tuple[List[ast.expr], ast.stmt], name: str) -> Optional[Hazard]:
        """A list's element written at an index: proven where each value it may hold is saved (one
        value: as its producer says, at the statement that built the list)."""
        if len(listed[0]) == 1:
            return self._producer(listed[0][0], listed[1], name)
        found = [self._producer(e, self.model.statement_of(e), name) for e in listed[0]]
        if all(f is not None and f.proven for f in found):
            return found[0]
        return next((f for f in found if f is not None), None) and _possible(
            "an element of the list is saved for backward, if the index reaches it")

    def _unpacked(self, binding: Binding, name: str) -> Optional[Hazard]:
        """``evals, evecs = torch.linalg.eigh(A)``: ``name`` is an output of a tuple-returning
        op that its backward saves (``OUTPUTS_SAVED``, measured), or of a user function or module
        whose every return is a tuple whose piece there autograd saved (``Summary.pieces``)."""
        stmt = binding.stmt
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)
                and isinstance(stmt.value, ast.Call)):
            return None
        names = [target_key(e) if not isinstance(e, ast.Starred) else None for e in stmt.targets[0].elts]
        if None in names or names.count(name) != 1:
            return None
        op = self.model.torch_name(stmt.value.func)
        if op is None:  # `a, b = self.block(x, y)`: a piece of the tuple a user function or module returns
            summary = self.model.summaries.of_call(stmt.value)
            if summary is None or len(summary.pieces) != len(names) or summary.pieces[names.index(name)] is not Saved.YES:
                return None
            op = summary.name
        elif names.index(name) not in torch_api.OUTPUTS_SAVED.get(op, ()):
            return None
        if self.constants.constant(stmt.value):
            return None  # nothing on the path requires grad: nothing was saved
        reason = (f"`{name}` is output {names.index(name)} of `{op}` at line {stmt.lineno}, which autograd "
                  "saves for backward")
        if self.constant_args.constant(stmt.value):
            return _possible(f"{reason}, if a caller elsewhere passes a tensor that requires grad "
                             "(the calls in this file pass constants)")
        if not self.hazards.grad_shown([stmt.value, *self.hazards.grad_operands(stmt.value)], stmt):
            return _possible(f"{reason}, if its input requires grad (nothing the analysis sees shows it does)")
        return Hazard(reason)


def _unpacked_piece(hazards: "Hazards", flow: Flow, binding: Binding, member: str, target: ast.expr) -> Optional[Hazard]:
    """What autograd saved of ``member`` where ``binding`` unpacks it (``Producers._unpacked``); a
    piece of a user call's tuple (``a, b = pair(x, y)``) that backward never reaches proves nothing:
    the op that saved it has a node of its own, which only a read of ``a`` would run."""
    found = hazards.producers._unpacked(binding, member)
    stmt = binding.stmt
    if found is not None and found.proven and isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call) \
            and hazards.model.torch_name(stmt.value.func) is None \
            and hazards.producers._never_backpropagated(flow, member, target, made=binding):
        return None
    return found

class ModuleHazards(_HazardsPart):
    """Hazards of an ``inplace=True`` module: found at the calls of the module, or from the layer before it in a chain."""

    def explain_module(self, call: ast.Call) -> Optional[Hazard]:
        """Why building this ``inplace=True`` module makes a conflict at one of its calls; at
        most possible where the file sets a module's flag after it is built (``summaries.flag_set_after``)."""
        found = self._explain_built(call)
        changed = flag_set_after(self.model.summaries.chains)
        if found is not None and found.tier is not Tier.POSSIBLE and changed is not None:
            return _possible(f"{found.reason}, unless the `inplace` flag set at line {getattr(changed, 'lineno', 0)} "
                             "turns it off")
        return found

    def explain_switched_on(self, write: ast.Attribute) -> Optional[Hazard]:
        """``self.drop.inplace = True`` in ``__init__``, after ``self.drop = nn.Dropout(p)``:
        the module runs in place at every call, as if built with ``inplace=True``, where the file
        shows it alone (``summaries.switched_on``); None otherwise (its calls then stay as
        :meth:`explain_module` says)."""
        built = switched_on(self.model, write)
        return self._explain_built(built) if built is not None else None

    def _explain_built(self, call: ast.Call) -> Optional[Hazard]:
        chains = self.model.summaries.chains
        if chains.runs_in_place(call) is False:
            return None  # `inplace=` is False wherever it is built (Block(inplace=False), a default)
        builder = chains.factories.builder_of(call)
        if builder is not None:  # `return nn.Dropout2d(p, inplace=True) if ... else ...` of `self.__dropout()`
            guards = chains.factories.guards(call, builder)  # `if kind == "2d": return nn.Dropout2d(...)`
            sites = [c for c in chains.factories.calls_of(builder)
                     if not any(chains.factories.excludes(g, c) for g in guards)]
            if not sites:
                return _possible(f"no call of `{builder.name}` that builds it is visible, so it may write into "
                                 "a saved tensor")
            found = best(self._explain_placed(site, call) for site in sites)
            if found is None and self._called_elsewhere(builder):
                return _possible(f"`{builder.name}`, which returns it, may be called from other files, where its "
                                 "calls cannot be followed")
            return Hazard(f"it is returned by `{builder.name}` and {found.reason}", found.tier) if found else None
        return self._explain_placed(call, call)

    def _called_elsewhere(self, func: Function) -> bool:
        return called_elsewhere(self.model, func)

    def _explain_placed(self, call: ast.Call, built: ast.Call) -> Optional[Hazard]:
        """Where the module ``built`` builds lands: ``call`` (``built`` itself, or a call of the
        builder returning it) in a chain, called at once, or bound to a name whose calls say."""
        chains = self.model.summaries.chains
        around = chains.around(call)  # nn.Sequential(...) or a list literal of layers
        if around is not None and (around[2] or around[1] > 0):
            reason = self._sequential_reason(around[0], around[1], around[2])
            if around[2] and reason is not None and not reason.proven and self._fed_by_caller(around[0], around[1]):
                followed = self._sequential_calls(cast(ast.Call, self.model.parent(call)))
                if followed is not None and followed.proven:
                    return followed
            return reason
        parent = self.model.parent(call)
        if isinstance(parent, ast.Call) and parent.func is call and parent.args:
            return self.hazards.explain(parent, parent.args[0])  # nn.ReLU(inplace=True)(x)
        assign = parent
        key = target_key(assign.targets[0]) if isinstance(assign, ast.Assign) and len(assign.targets) == 1 else None
        appended = key is None and chains.runs_in_place(built)
        if appended:
            key = self._first_appended(call)
        if key is None:
            return _possible("its calls cannot be followed (it is not bound to a name), so it may write into a saved tensor")
        scope = self.model.enclosing_class(call) if key.startswith("self.") else self.model.owner(call)
        if scope is None:
            return _possible(f"its calls cannot be followed (`{key}` is set outside a class), so it may write into "
                             "a saved tensor")
        calls = self._calls_with_arguments(scope, key)
        if not calls:
            return _possible(f"no call of `{key}` is visible, so it may write into a saved tensor")
        if appended and self._members_changed(key, scope):
            return _possible(f"the members of `{key}` are changed after it is built, so its first layer may not be "
                             "this one")
        found = best(self._module_sites(key, calls))
        replaced = self._replaced(key[5:]) if found is not None and found.proven and key.startswith("self.") \
            and key.count(".") == 1 else None
        if found is not None and replaced is not None:
            return _possible(f"{found.reason}, unless `{key}` is replaced (line {getattr(replaced, 'lineno', 0)}) "
                             "before it runs")
        return found

    def _replaced(self, attr: str) -> Optional[ast.AST]:
        """The first place in the file that may replace what ``self.<attr>`` holds from outside
        its class's own ``self.<attr> = ...`` (any receiver but ``self``: ``net.act =
        nn.ReLU()``), or by name (``setattr(net, "act", m)``, ``add_module``/``register_module``,
        a computed name, the ``_modules`` table): the calls may then run another module."""
        for write in self.model.attribute_writes(attr):
            node = write.value if isinstance(write, ast.Subscript) else write
            if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"):
                return write
        found = [call for word, named in (("setattr", ast.Name), ("add_module", ast.Attribute),
                                          ("register_module", ast.Attribute))
                 for call in self._calls_naming(word, named, 1 if word == "setattr" else 0, attr)]
        if found:  # the first in the walk's order (its line goes into the reason)
            order = {call: at for at, call in enumerate(self.model.source.walked(ast.Call))}
            return min(found, key=order.__getitem__)
        writes = self.model.attribute_writes("_modules")
        return writes[0] if writes else None

    def _calls_naming(self, word: str, named: type, at: int, attr: str) -> List[ast.Call]:
        """The calls of ``word`` (a bare name or a method, as ``named`` says) whose argument ``at``
        names ``attr`` or a name not written out (found from the module's mentions of ``word``)."""
        found = []
        for mention in self.model.mentions(word):
            call = self.model.parent(mention)
            if not (isinstance(mention, named) and isinstance(call, ast.Call) and call.func is mention) \
                    or len(call.args) <= at or at == 0 and self._container_member(mention):
                continue
            name = call.args[at]
            if not (isinstance(name, ast.Constant) and isinstance(name.value, str)) or name.value == attr:
                found.append(call)
        return found

    _CONTAINERS = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential",
                             "torch.nn.ModuleList", "torch.nn.modules.container.ModuleList",
                             "torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict"})

    def _container_member(self, func: ast.expr) -> bool:
        """``self.body.add_module(name, m)`` where every value the class gives ``self.body`` is
        a torch container (``nn.Sequential()``): it names a member of that container, which is
        no instance of a user class, so it replaces no user module's attribute."""
        receiver = func.value if isinstance(func, ast.Attribute) else None
        if not (isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name)
                and receiver.value.id == "self"):
            return False
        cls = self.model.enclosing_class(func)
        values = self.model.class_attrs(cls).get(receiver.attr, []) if cls is not None else []
        return bool(values) and all(
            isinstance(v, ast.Call) and isinstance(v.func, (ast.Name, ast.Attribute))
            and self.model.torch_name(v.func) in self._CONTAINERS for v in values)

    def _calls_with_arguments(self, scope: ast.AST, key: str) -> List[ast.Call]:
        """The calls of ``key`` in ``scope`` that pass something; for ``self.<attr>`` set in a
        class, also those in the file's subclasses of it that do not set it themselves (a base
        class builds ``self.drop``, a subclass's method calls it)."""
        scopes = [scope]
        if isinstance(scope, ast.ClassDef) and key.startswith("self.") and key.count(".") == 1:
            scopes += self._subclasses_keeping(scope, key[5:])
        return [c for s in scopes for c in self.model.calls_in(s).get(key, []) if c.args or c.keywords]

    def _subclasses_keeping(self, base: ast.ClassDef, attr: str) -> List[ast.ClassDef]:
        """The file's top-level classes derived from ``base`` (a few levels down) that inherit
        its ``self.<attr>`` (no class on the way sets it again)."""
        found: List[ast.ClassDef] = []
        parents = {base.name}
        for _ in range(4):
            new = [c for c in self.model.module.body if isinstance(c, ast.ClassDef) and c not in found
                   and c is not base and any(isinstance(b, ast.Name) and b.id in parents for b in c.bases)
                   and attr not in self.model.class_attrs(c)]
            if not new:
                break
            found += new
            parents = {c.name for c in new}
        return found

    def _fed_by_caller(self, layers: Sequence[ast.expr], index: int) -> bool:
        """Whether the layer at ``index`` receives the chain's own input unchanged."""
        return self.model.summaries.chains.feeder(list(layers), index).kind == "caller"

    def _sequential_calls(self, sequential: ast.Call) -> Optional[Hazard]:
        """``self.head = nn.Sequential(nn.ReLU(inplace=True), ...)``: its first layer writes
        into what ``self.head(h)`` is given, so the calls of ``self.head`` in its class (or of
        a local name in its function) say whether that was saved, as for a lone module."""
        assign = self.model.parent(sequential)
        if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and assign.value is sequential):
            return None
        key = target_key(assign.targets[0])
        if key is None:
            return None
        scope = self.model.enclosing_class(sequential) if key.startswith("self.") else self.model.owner(sequential)
        if scope is None:
            return None
        if self._members_changed(key, scope):
            return None
        calls = self._calls_with_arguments(scope, key)
        return best(self._module_sites(key, calls)) if calls else None

    _MEMBER_CHANGES = frozenset({"insert", "append", "extend", "pop", "add_module", "register_module",
                                 "__setitem__", "__delitem__", "apply"})

    def _members_changed(self, key: str, scope: ast.AST) -> bool:
        """Whether the container ``key`` names (``self.head``, a local ``net``) may hold other
        members than it was built with: an item stored or deleted (``self.head[0] = m``,
        ``x.head._modules["0"] = m``), a member's attribute set (``self.head[0].inplace = False``)
        or a changing method called (``self.head.insert(0, m)``), by any receiver in the file
        for an attribute: the first layer read from its construction is then not known.

        Read up from each mention of its last part (``<x>.head`` anywhere for ``self.head``, the
        name ``net`` in ``scope`` for a local) that the indexing walk listed, through what is
        taken of it (attributes, items, calls), instead of walking the module again."""
        name = key.split(".")[-1]
        attribute = key.startswith("self.")
        parent = self.model.parent
        for mention in self.model.mentions(name):
            if attribute != isinstance(mention, ast.Attribute):
                continue
            if not attribute and scope is not self.model.module and scope not in self.model.ancestors(mention):
                continue
            node: ast.AST = mention
            up = parent(node)
            while isinstance(up, (ast.Attribute, ast.Subscript)) and up.value is node \
                    or isinstance(up, ast.Call) and up.func is node:
                if isinstance(up, (ast.Attribute, ast.Subscript)) and not isinstance(up.ctx, ast.Load):
                    return True  # stored or deleted: an item, an attribute (of a member)
                if isinstance(up, ast.Attribute) and up.attr in self._MEMBER_CHANGES:
                    call = parent(up)
                    if isinstance(call, ast.Call) and call.func is up:
                        return True  # a changing method called on it
                node, up = up, parent(up)
        return False

    def _first_appended(self, layer: ast.Call) -> Optional[str]:
        """``layers.append(nn.ReLU(inplace=True))``, the first statement (in source order) to
        touch ``layers = []``, and later ``self.net = nn.Sequential(*layers)``: the layer is the
        first member of ``self.net`` (on the first turn of a loop it is in), so it writes into
        what ``self.net(x)`` is given. Returns "self.net"."""
        append = self.model.parent(layer)
        if not (isinstance(append, ast.Call) and append.args == [layer] and not append.keywords
                and isinstance(append.func, ast.Attribute) and append.func.attr == "append"
                and isinstance(append.func.value, ast.Name)
                and isinstance(self.model.parent(append), ast.Expr)):
            return None
        name = append.func.value.id
        flow = self.model.flow(self.model.owner(layer))
        bindings = flow.bindings.get(name, [])
        if not (len(bindings) == 1 and bindings[0].form == "assign" and isinstance(bindings[0].value, ast.List)
                and not bindings[0].value.elts) or name in flow.declared:
            return None
        loads = sorted(flow.loads.get(name, []), key=lambda use: use[0])
        if not loads or loads[0][1] is not append.func.value:
            return None  # something touches the list before this append
        found: Optional[str] = None
        for _, load in loads[1:]:
            starred, chain = self.model.parent(load), None
            if isinstance(starred, ast.Starred):
                chain = self.model.parent(starred)
            if not (isinstance(chain, ast.Call) and chain.args == [starred] and not chain.keywords
                    and self.model.torch_name(chain.func) in ("torch.nn.Sequential",
                                                              "torch.nn.modules.container.Sequential")):
                continue
            assign = self.model.parent(chain)
            if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and assign.value is chain):
                return None
            key = target_key(assign.targets[0])
            if key is None or found is not None:
                return None  # built twice: which one is called cannot be told
            found = key
        return found

    def _module_sites(self, key: str, calls: Sequence[ast.Call]) -> Iterator[Optional[Hazard]]:
        for site in calls:
            arg = site.args[0] if site.args else site.keywords[0].value
            found = self.hazards.explain(site, arg)
            if found:
                yield Hazard(f"`{key}(...)` at line {site.lineno} writes into its input: {found.reason}", found.tier)

    def _sequential_reason(self, layers: Sequence[ast.expr], index: int, whole: bool) -> Optional[Hazard]:
        feeder = self.model.summaries.chains.feeder(list(layers), index)
        line = feeder.layer.lineno if feeder.layer is not None else 0
        if feeder.kind == "caller":
            if whole:
                return _possible("it is the first layer of an nn.Sequential: its input comes from the caller")
            return _possible("it follows the layers before its list, which the analysis cannot follow")
        if feeder.kind == "saved":
            how = "which ran in place and saved its result" if feeder.in_place else "whose output autograd saves"
            return Hazard(f"it follows `{feeder.name}` (line {line}), {how} for backward")
        if feeder.kind == "unseen":
            if feeder.name:
                return _possible(f"it follows `{feeder.name}` (line {line}), which the analysis has no data for")
            return _possible("it follows a layer the analysis cannot see into")
        return None



def _outside_saves_alike(model: SummaryFacts, cls: ast.ClassDef, attr: str) -> bool:
    """Every write of ``<x>.<attr>`` other than the class's own ``self.<attr> = ...`` binds a torch
    module built there (``unit.skip = nn.Conv2d(4, 4, 1)``), and it and every value the class gives
    the attribute save alike: what a call of it saves is then known whichever it holds. False for a
    ``setattr``, a deletion, an augmented write, or any other value."""
    if model.calls_in(model.module).get("setattr"):
        return False
    names = [model.torch_name(v.func) if isinstance(v, ast.Call) else None
             for v in model.class_attrs(cls).get(attr, [])]
    for node in model.attribute_writes(attr):
        stmt = model.statement_of(node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
                and isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue  # (the class's own, or another class's `self.<attr>`: set_from_outside judged those)
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1 and stmt.targets[0] is node and isinstance(stmt.value, ast.Call)):
            return False
        names.append(model.torch_name(stmt.value.func))
    found = set()
    for name in names:
        if not name or not name.startswith("torch.nn.") or not name.rsplit(".", 1)[-1][:1].isupper():
            return False
        found.add(saves(f"torch.nn.{name.rsplit('.', 1)[-1]}"))
    return len(found) == 1

class OpSaves(_HazardsPart):
    """Which op an expression runs and what that op saves for backward (measured data, by operand kind)."""

    def _is_method_call(self, call: ast.Call) -> bool:
        """Whether ``call`` (of an attribute: callers check) calls a method of a tensor."""
        func = cast(ast.Attribute, call.func)
        return self.model.torch_name(func) is None and self.model.kind(func.value) in (Kind.TENSOR, Kind.PARAMETER, Kind.UNKNOWN) \
            and not self._module_of(func) and self.model.summaries.targets.callee(call) is None \
            and not self.model.summaries.targets.alternatives(call)

    def _op_of(self, expr: ast.expr) -> Optional[Op]:
        """The op ``expr`` runs (what it saves: a tuple from OP_SAVES, or UNSEEN); None when
        the expression is no op at all (a name, a literal)."""
        if isinstance(expr, ast.BinOp):
            operator = _OPERATORS.get(type(expr.op))
            if operator is None:
                return None
            op, symbol = operator
            return Op(symbol, self._binary_saves(op, expr.left, expr.right))
        if isinstance(expr, ast.UnaryOp):
            return Op("unary", ())
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        if any(k.arg == "out" for k in expr.keywords):
            return Op(self.model.code(func).strip(), ())  # `out=` ops record no graph (or raise)
        name = self.model.torch_name(func)
        if identity_argument(expr, self.model.torch_name, self.model.qualified_names) is not None:
            return Op(self.model.code(func).strip(), ())  # hands its argument back: no graph of its own
        if name is not None:
            short = name.rsplit(".", 1)[-1]
            if short in ("max", "min") and self._of_two_tensors(expr, None):
                return Op(name, saves(f"{short}imum"))  # torch.max(a, b): torch.maximum, saves both
            if short in ("max", "min") and (len(expr.args) > 1 or any(k.arg == "dim" for k in expr.keywords)):
                return Op(name, saves(f"{short}_dim"))  # torch.max(x, dim): saves the indices only
            if short == "einsum" and len(expr.args) == 2 and not expr.keywords \
                    and not isinstance(expr.args[1], (ast.Starred, ast.List, ast.Tuple)):
                return Op(name, ())  # one operand (`ijj->i`): permute, diagonal and sum, nothing saved
            if short in _BINARY and saves(name) == UNSEEN:
                operands = self._operands(expr, short, None)
                if operands is not None:
                    return Op(name, self._binary_saves(short, *operands))
            nn_class = name.startswith("torch.nn.") and name[len("torch.nn."):][:1].isupper()
            if nn_class and short not in _NOT_MODULES:
                return Op(name, ())  # `nn.Linear(n, width)` builds a module: its sizes are no inputs
            if (known := form_saves(self.model, expr, name) or saves(name)) != UNSEEN:  # (op_forms: F.pad's modes...)
                return Op(name, known)
            if short == "as_tensor" or self.model.is_factory(expr) or short in _PYTHON_VALUED and name == f"torch.{short}":
                return Op(name, ())  # a fresh tensor (as_tensor: data coming in, as before), or a Python value
            short = short[:-1] if short.endswith("_") else short
            if nn_class:
                return Op(name, UNSEEN)  # `nn.Parameter(w)`: a new leaf of the tensor it is handed
            return Op(name, _by_short_name(name, short))
        summary = self.model.summaries.of_call(expr)  # a user function or module, a Sequential
        if summary is not None:
            return Op(summary.label, UNSEEN if summary.saves is None else summary.saves)
        found = self._module_op(func) or _super_layer_op(self.model, expr)  # (`super().forward(x)` of a torch layer's subclass)
        if found is not None:
            return found
        if isinstance(func, ast.Call):  # `nn.Softplus()(x)`: a torch module built and called at once
            built = self.model.torch_name(func.func) or ""
            if built.startswith("torch.nn.") and built.rsplit(".", 1)[-1][:1].isupper():
                module = f"torch.nn.{built.rsplit('.', 1)[-1]}"
                return Op(module, saves(module))
        if isinstance(func, ast.Attribute) and (func.attr in VIEW_METHODS or func.attr.startswith("new_")):
            return Op(func.attr, ())  # a view (saves nothing) or a fresh tensor
        if isinstance(func, ast.Attribute) and func.attr in _CONTAINER_METHODS \
                and self.model.kind(func.value) is Kind.OTHER:
            return Op(func.attr, ())  # `rows.append(row)`: a list holds the tensor, it saves nothing
        if isinstance(func, ast.Attribute) and (is_tensor(func.value, self.model) or (
                tensor_only(func.attr) and not self.model.qualified_names(func)  # not `math.sqrt`
                and self.model.kind(func.value) not in (Kind.SCALAR, Kind.OTHER, Kind.MODULE)
                and not instance_parameter(self.model, func.value))):
            method = func.attr
            if method.endswith("_"):
                measured = self._inplace_saves(expr, method)
                return Op(f"{self.model.code(func).strip()}()", measured if measured != UNSEEN else saves(method[:-1]))
            if method in VIEW_METHODS or method in ("clone", "detach", "contiguous", "to", "float", "double", "half"):
                return Op(method, ())
            if method in ("size", "dim", "numel", "item", "tolist"):
                return None
            if method in ("max", "min") and self._of_two_tensors(expr, func.value):
                return Op(method, saves(f"{method}imum"))  # a.max(b): torch.maximum, saves both
            if method in ("max", "min") and (len(expr.args) > 0 or any(k.arg == "dim" for k in expr.keywords)):
                return Op(method, saves(f"{method}_dim"))  # values and indices: saves the indices only
            if method in _BINARY:
                operands = self._operands(expr, method, func.value)
                if operands is not None:
                    return Op(method, self._binary_saves(method, *operands))
            return Op(method, saves(method))
        bound = partial_of_torch(self.model, func)
        if bound is not None and op_short(bound) not in _BINARY:  # `self.softmax = partial(torch.softmax, dim=-1)`
            bound_saves = saves(bound) if saves(bound) != UNSEEN else saves(bound.rsplit(".", 1)[-1])
            if bound_saves != UNSEEN and set(bound_saves) <= {"output"}:  # what it saves does not hang on the places
                return Op(f"{bound}`, bound as `{self.model.code(func).strip()}", bound_saves)
        passed = self._passed_function(func) if isinstance(func, ast.Name) else None
        if passed is not None:  # `op(a, b)` where every call hands in `op=torch.mul`
            short = passed.rsplit(".", 1)[-1]
            label = f"{passed}`, handed in as `{self.model.code(func).strip()}"  # (by every call in this file)
            operands = self._operands(expr, short, None) if short in _BINARY else None
            if operands is not None:
                return Op(label, self._binary_saves(short, *operands))
            return Op(label, saves(passed) if saves(passed) != UNSEEN else saves(short))
        kind = self.model.kind(expr)
        if kind in (Kind.SCALAR, Kind.OTHER):
            return None
        return Op(self.model.code(func).strip(), UNSEEN)

    def _passed_function(self, func: ast.Name) -> Optional[str]:
        """The torch function a parameter called as a function holds: a module-level function's
        parameter for which every call of the function in the file (the function's name used
        for nothing else) passes the same torch function, by keyword or place, or leaves the
        default that is that function (``reduce(*xs, op=torch.mul)``)."""
        owner = self.model.owner(func)
        if not isinstance(owner, FUNCTIONS) or self.model.parent(owner) is not self.model.module:
            return None
        flow = self.model.flow(owner)
        reaching = self.model.reaching(flow, func.id, self.model.statement_of(func))
        if len(reaching) != 1 or reaching[0].form != "param":
            return None
        args = owner.args
        plain = [a.arg for a in (*args.posonlyargs, *args.args)]
        position = plain.index(func.id) if func.id in plain else None
        default = self.model.kinds.params._default_of(cast(ast.arg, reaching[0].stmt))
        sites = self.model.calls_in(self.model.module).get(owner.name, [])
        if not sites or self.model.kinds.params._name_uses().get(owner.name, 0) != len(sites):
            return None
        found: Set[str] = set()
        for site in sites:
            value = next((k.value for k in site.keywords if k.arg == func.id), None)
            if value is None and any(k.arg is None for k in site.keywords):
                return None  # `**kwargs` may hold it
            if value is None and position is not None:
                if any(isinstance(a, ast.Starred) for a in site.args[:position + 1]):
                    return None
                value = site.args[position] if position < len(site.args) else None
            value = value if value is not None else default
            name = self.model.torch_name(value) if value is not None else None
            if name is None or not name.rsplit(".", 1)[-1][:1].islower():
                return None  # not a torch function (a module class, a lambda, a user function)
            found.add(name)
        return found.pop() if len(found) == 1 else None

    def _of_two_tensors(self, call: ast.Call, receiver: Optional[ast.expr]) -> bool:
        """``torch.max(a, b)`` / ``a.max(b)`` (``other=b``) with ``b`` known to be a tensor: the
        elementwise form (``torch.maximum``), not a reduction along a dimension."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return False
        given = ([receiver] if receiver is not None else []) + list(call.args)
        other = given[1] if len(given) == 2 and not call.keywords else next(
            (k.value for k in call.keywords if k.arg == "other"), None) if len(given) == 1 else None
        return other is not None and self.model.kind(other) in (Kind.TENSOR, Kind.PARAMETER)

    def _inplace_saves(self, call: ast.Call, method: str) -> Saves:
        """What ``x.<method>(...)`` saves; ``x.pow_(-0.5)`` by a Python number saves nothing of
        its result (the tensor form ``x.pow_(e)`` does; checked by tests/test_precision24.py)."""
        if method[:-1] in _BINARY and len(call.args) == 1 and not call.keywords \
                and self.model.kind(call.args[0]) is Kind.SCALAR:
            return ()
        return saves(method)

    def _binary_saves(self, op: str, left: ast.expr, right: ast.expr) -> Saves:
        """What ``left <op> right`` saves: measured apart for a Python number on either side
        (``x ** 2`` saves ``x`` only, ``x ** e`` with a tensor ``e`` saves its result too). Where
        the other operand's kind is unknown, a save only the tensor form makes (pow's result)
        is marked "output?": possible, never proven."""
        lk, rk = self.model.kind(left), self.model.kind(right)
        entry = f"r{op}_scalar" if lk is Kind.SCALAR else f"{op}_scalar" if rk is Kind.SCALAR else op
        found = saves(entry)
        if found == UNSEEN:
            return saves(op)
        if entry == op and op in _BINARY:
            scalar = saves(f"{op}_scalar") if rk is not Kind.TENSOR and rk is not Kind.PARAMETER else UNSEEN
            rscalar = saves(f"r{op}_scalar") if lk is not Kind.TENSOR and lk is not Kind.PARAMETER else UNSEEN
            if "output" in found and any(s != UNSEEN and "output" not in s for s in (scalar, rscalar)):
                found = tuple("output?" if s == "output" else s for s in found)
        return found

    @staticmethod
    def _operands(call: ast.Call, op: str, receiver: Optional[ast.expr]) -> Optional[Tuple[ast.expr, ast.expr]]:
        """The two operands of ``a.pow(b)`` (``receiver`` ``a``) or ``torch.pow(a, b)`` (also
        by keyword: ``exponent=``, ``other=``, ``input=``, ``self=``); None for other forms."""
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        names = ("exponent", "other")
        given: List[Optional[ast.expr]] = [receiver] if receiver is not None else []
        given += list(call.args)
        if receiver is None and len(given) < 1:
            given.append(next((k.value for k in call.keywords if k.arg in ("input", "self")), None))
        if len(given) < 2:
            given.append(next((k.value for k in call.keywords if k.arg in names), None))
        if len(given) != 2 or given[0] is None or given[1] is None:
            return None
        return given[0], given[1]

    def _module_of(self, func: ast.expr) -> Optional[str]:
        """``self.fc`` built from ``nn.Linear(...)`` -> "torch.nn.Linear"."""
        found = self._module_op(func)
        return found.name if found is not None else None

    def _module_op(self, func: ast.expr) -> Optional[Op]:
        """The torch module ``func`` holds and what calling it saves: ``self.fc`` built from
        ``nn.Linear(...)``; ``self.act`` built by ``getattr(nn, act)()``, ``ACTS[name]()`` or
        ``get_act(name)`` (``summaries.BuiltLayers``: what every module it may be saves, else
        UNSEEN)."""
        key = target_key(func)
        if key is None:
            return None
        values: Sequence[Optional[AttrValue]]
        cls: Optional[ast.ClassDef] = None
        if key.startswith("self.") and key.count(".") == 1:
            cls = self.model.enclosing_class(func)
            if cls is not None and set_from_outside(self.model, cls, key[5:]) \
                    and not _outside_saves_alike(self.model, cls, key[5:]):
                return None  # (`m.agg.act = nn.Identity()` after construction: not what __init__ set)
            values = self.model.class_attrs(cls).get(key[5:], []) if cls is not None else []
            final = self.model.summaries.chains.decided.final(cast(ast.Attribute, func)) if len(values) > 1 else None
            values = values if final is None else final  # what __init__ leaves it, where that is decided
        elif key.startswith("self.") and key.count(".") == 2:  # `self.ae.embedding`: a member's module
            targets = self.model.summaries.targets
            member = targets.member_class(func, key)
            found = targets.member_values(member, key.split(".")[2]) if member is not None else None
            names = {self.model.torch_name(v.func) if isinstance(v, ast.Call) else None for v in found or []}
            if len(names) != 1 or None in names:
                return None  # every value one torch module, or nothing is said
            values = cast(List[AttrValue], found)
        else:
            owner = self.model.owner(func)
            values = [b.value for b in self.model.flow(owner).bindings.get(key, []) if b.form == "assign"]
        for value in values:
            while isinstance(value, ast.IfExp):  # `nn.ReLU() if act_cfg is not None else None`
                way = self.model.summaries.chains.decided.test(value.test)
                if way is None:
                    break
                value = value.body if way else value.orelse
            if isinstance(value, ast.Call):
                name = self.model.torch_name(value.func)
                if name and name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper():
                    module = f"torch.nn.{name.rsplit('.', 1)[-1]}"
                    return Op(module, saves(module))
                built = self.model.summaries.chains.built.saves(value) if len(values) == 1 else None
                if built is not None:
                    return Op(built[0], UNSEEN if built[1] is None else built[1])
            if (isinstance(value, ast.Name) or isinstance(value, ast.Call) and isinstance(value.func, ast.Name)) \
                    and key.startswith("self.") and key.count(".") == 1 and cls is not None \
                    and not set_from_outside(self.model, cls, key[5:]):
                passed = self._module_passed(value, cls, key[5:])
                if passed is not None:
                    return passed
        return None

    def _module_passed(self, name: ast.expr, cls: ast.ClassDef, attr: str) -> Optional[Op]:
        """``self.act = act`` in ``__init__(self, ..., act=nn.ReLU())``: what every construction
        of the class passes for ``act`` (``analysis.injected``: parameters handed on followed,
        its default where one passes none; None where a caller may be unseen), each a torch module
        built there or a torch function (``act=torch.tanh``): their save where they all save
        the same, else nothing is said."""
        # (`self.act = make_act()`: what each factory handed in builds)
        found = passed_values(self.model, self.model.summaries.chains, cls, attr, [name])
        ops = {self._torch_callable(e) for e in found or ()}
        if not ops or None in ops or len({cast(Op, op).saves for op in ops}) != 1:
            return None
        names = sorted(cast(Op, op).name for op in ops)
        return Op(" or ".join(names), cast(Op, next(iter(ops))).saves)

    def _torch_callable(self, expr: ast.expr) -> Optional[Op]:
        """``nn.ReLU()`` -> the module and its save; ``torch.tanh`` / ``F.gelu`` (a function of one
        tensor, not a binary op) -> the function and its save; None: anything else or unmeasured.
        From another file (``injected.Foreign``), the same, as the index names them."""
        foreign = expr if isinstance(expr, injected.Foreign) else None
        if foreign is not None and foreign.kind == "torch-new" or isinstance(expr, ast.Call):
            built = foreign.name if foreign is not None else self.model.torch_name(cast(ast.Call, expr).func)
            short = (built or "").rsplit(".", 1)[-1]
            if built is None or not built.startswith("torch.nn.") or not short[:1].isupper():
                return None
            name = f"torch.nn.{short}"
            found = saves(name)
        elif foreign is not None and foreign.kind == "torch-def" or isinstance(expr, (ast.Name, ast.Attribute)):
            name = foreign.name if foreign is not None else self.model.torch_name(expr) or ""
            short = name.rsplit(".", 1)[-1]
            if not name.startswith("torch.") or not short[:1].islower() or short in _BINARY or short.endswith("_"):
                return None
            found = saves(name) if saves(name) != UNSEEN else saves(short)
        else:
            return None
        return Op(name, found) if found != UNSEEN else None


def _super_layer_op(model: "HazardFacts", call: ast.Call) -> Optional[Op]:
    """``super().forward(x)`` in a subclass of a torch layer (``super_forward.super_torch_layer``):
    the layer's own op, saving what it saves; unknown where the save is for the weight's gradient
    and the file may freeze it (``self.weight.requires_grad_(False)``: ``F.linear`` then saves
    nothing of its input)."""
    layer = super_torch_layer(model, call)
    if layer is None or saves(layer) == UNSEEN:
        return None
    weight = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr="weight", ctx=ast.Load())
    frozen = layer in torch_api.MODULES_WITH_PARAMETERS and may_be_frozen(model, weight)
    return Op(f"{layer}.forward", UNSEEN if frozen else saves(layer))


_PARTIAL = frozenset({"functools.partial"})


class CarriedState(_HazardsPart):
    """Recurrent state (:mod:`analysis.carried`): the write updates a tensor the function got from
    its caller, saves after the write on every call and hands back; a loop of the caller passes
    what the call handed back to the next call, whose write then modifies what the previous call
    saved (``y, state = step(x[t], state)`` with ``state += k; y = q @ state`` inside)."""

    def handed_back(self, func: Function, flow: Flow, key: str, write: Located) -> Iterator[Optional[Hazard]]:
        entry = carried.entry(self.model, flow, key, write)
        back = carried.returned_path(self.model, func, key) if entry is not None else None
        end = self.model.range(write)[1]
        if entry is None or back is None or any(b.form != "aug" and b.start >= end for b in flow.bindings.get(key, [])):
            return  # (bound again after the write: what is handed back is another tensor)
        saved = self._saved_after(func, flow, key, write)
        if saved is None:
            return
        for call, loop, state in self._feeding(func, entry, back, 0):
            reason = (f"`{key}` is the state the call at line {call.lineno} hands back and its loop (line "
                      f"{loop.lineno}) passes to the next call, after {saved.reason} in the previous call")
            once = self.model.summaries.targets.loops.may_run_once(loop)
            dropped = not carried.kept_each_turn(self.model, call, loop, state)  # (`y` of the last turn only)
            yield Hazard(reason) if saved.proven and not once and not dropped else _possible(
                reason + (", if the loop runs twice" if once else "")
                + (", if what the previous call returned is kept until backward" if dropped else ""))

    def _feeding(self, func: Function, entry: carried.Entry, back: carried.Path,
                 depth: int) -> Iterator[Tuple[ast.Call, ast.stmt, str]]:
        """The calls (with grad on) whose loop passes back to ``func``'s parameter what the previous
        call handed back, directly or through wrappers that hand it back too (two at most), each
        with its loop and the name the loop passes back."""
        if len(back) < len(entry.path) or back[len(back) - len(entry.path):] != entry.path:
            return
        for call, arg in self._passing(func, entry.param):
            if self.model.intended_reason(self.model.statement_of(call), None):
                continue
            loop = carried.fed_back(self.model, call, arg, back[:len(back) - len(entry.path)])
            if loop is not None:
                yield call, loop, cast(ast.Name, arg).id  # (`fed_back` takes a name only)
                continue
            outer = carried.wrapper(self.model, call, arg, entry.path, back) if depth < 2 else None
            if outer is not None:
                yield from self._feeding(outer.func, outer.entry, outer.back, depth + 1)

    def _saved_after(self, func: Function, flow: Flow, key: str, write: Located) -> Optional[Hazard]:
        """A save of ``key`` after the write, on every call (a proven one where there is one); ``key``
        is not bound again after the write (:meth:`handed_back`)."""
        first: Optional[Hazard] = None
        end = self.model.range(write)[1]
        for pos, node in flow.loads.get(key, []):
            if pos < end or not carried.straight_line(self.model, func, write, node) \
                    or self.model.intended_reason(self.model.statement_of(node), None):
                continue
            found = self.hazards.consumers._consumer(node, key, lambda: self.floating.written_floating(write))
            if found is not None and (found.proven or first is None):
                first = found
            if first is not None and first.proven:
                break
        return first

    def _passing(self, func: Function, param: str) -> Iterator[Tuple[ast.Call, ast.expr]]:
        """The calls of ``func`` in this file with the argument each passes for ``param``."""
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if plain[:1] and plain[0] in ("self", "cls") and isinstance(self.model.parent(func), ast.ClassDef):
            plain = plain[1:]
        index = plain.index(param) if param in plain else None
        for call in [*self.hazards._calls_of(func), *self._instance_calls(func)]:
            arg = next((k.value for k in call.keywords if k.arg == param), None)
            if arg is None and index is not None and index < len(call.args) \
                    and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
                arg = call.args[index]
            if arg is not None:
                yield call, arg

    def _instance_calls(self, func: Function) -> List[ast.Call]:
        """``cell.step(x, h)`` where ``cell`` is bound, in the calling function, only to
        constructions of the class (of this file) that defines ``func`` (not its ``forward``, whose
        calls :meth:`Hazards._calls_of` finds)."""
        cls = self.model.parent(func)
        if not isinstance(cls, ast.ClassDef) or func.name == "forward" or cls not in self.model.module.body:
            return []
        found = []
        for key, calls in self.model.calls_in(self.model.module).items():
            if key is None or key.count(".") != 1 or key.startswith("self.") or not key.endswith(f".{func.name}"):
                continue
            for call in calls:
                base = key.split(".")[0]
                bound = self.model.flow(self.model.owner(call)).bindings.get(base, [])
                if bound and all(b.form == "assign" and isinstance(b.value, ast.Call) and isinstance(b.value.func, ast.Name)
                                 and b.value.func.id == cls.name for b in bound):
                    found.append(call)
        return found


Flag = Tuple[Function, str, Optional[int]]  # a function, its flag parameter, the flag's position (after `self`)


def flag_parameter(model: "HazardFacts", flag: ast.expr) -> Optional[Flag]:
    """``flag`` (``inplace`` of ``F.dropout(x, inplace=inplace)``) is a parameter of the function
    around it with the default False that the function never binds again
    (``branches.steady_flag``): the function, the name and its position among the parameters a
    call's arguments meet (after ``self``; None where keyword-only)."""
    func = model.owner(flag)
    if not isinstance(flag, ast.Name) or not isinstance(func, FUNCTIONS) or not steady_flag(func, flag.id):
        return None
    if not is_const(default_of(func, flag.id), False):
        return None
    plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if plain[:1] and plain[0] in ("self", "cls") and isinstance(model.parent(func), ast.ClassDef):
        plain = plain[1:]
    return func, flag.id, plain.index(flag.id) if flag.id in plain else None


def instance_parameter(model: "HazardFacts", expr: ast.expr) -> bool:
    """``self`` (or ``cls``) of a method: ``self.relu(x)`` calls a method or submodule of
    the class, not the tensor op ``relu``. Not the first parameter of a ``@staticmethod``: a plain
    argument (torchpq's ``cos_sim(a, b)``: ``a.norm(dim=0)`` is the tensor's)."""
    func: ast.AST = model.owner(expr)
    while isinstance(func, ast.Lambda):
        func = model.owner(func)
    if not (isinstance(expr, ast.Name) and isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
            and isinstance(model.parent(func), ast.ClassDef)) or static_method(func):
        return False
    first = [*func.args.posonlyargs, *func.args.args][:1]
    return bool(first) and first[0].arg == expr.id


def static_method(func: Function) -> bool:
    """``func`` is decorated ``@staticmethod`` (by that name): its first parameter is no instance."""
    return any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)


def flag_route(model: "HazardFacts", func: Function, call: ast.Call, needs: AbstractSet[str]) -> Optional[Set[str]]:
    """Whether ``call`` of ``func`` may run a write that needs the flags ``needs`` of ``func`` true
    (``branches.needed_flags``: ``if inplace: a.div_(n)``): None where it leaves one of them false
    (``branches.flags_left_off``: ``self.sim(data, c)`` keeps ``inplace=False``), so no path through it reaches
    the write; else the flags of the function around the call it passes on (``inplace=inplace``), which the
    callers of that function must pass in their turn."""
    if not needs:
        return set()
    bound = isinstance(model.parent(func), ast.ClassDef)
    if flags_left_off(call, func, needs, bound):
        return None
    caller = model.owner(call)
    passed = [passed_for(call, name, flag_position(func, name, bound)) for name in needs]
    return {p.id for p in passed if isinstance(p, ast.Name) and isinstance(caller, FUNCTIONS) and off_flag(caller, p.id)}


def explain_routed(hazards: "Hazards", call: ast.Call, arg: ast.expr, route: Set[str]) -> Optional[Hazard]:
    """:meth:`Hazards.explain` of ``arg`` handed to ``call``, asking the callers of the function around the call
    only where they pass the flags of ``route`` (:func:`flag_route`)."""
    caller = hazards.model.owner(call)
    if not route or not isinstance(caller, FUNCTIONS):
        return hazards.explain(call, arg)
    before = hazards.guards.get(caller)
    hazards.guards[caller] = route | (before or set())
    try:
        return hazards.explain(call, arg)
    finally:
        if before is None:
            del hazards.guards[caller]
        else:
            hazards.guards[caller] = before


def flag_left_off(call: ast.Call, flag: Flag) -> bool:
    """``call`` (spreading nothing) passes nothing or a literal False for the flag: it keeps the default."""
    passed = passed_for(call, flag[1], flag[2])
    return not spreads(call) and (passed is None or is_const(passed, False))


def flag_left_off_there(model: "HazardFacts", fact: CallFact, flag: Flag) -> bool:
    """:func:`flag_left_off` for a call in another file, as its ``CallFact.args_values`` show it
    (``Cls.m(obj, x)`` passes the instance first: its positions are not the flag's)."""
    shown = fact.bound or not isinstance(model.parent(flag[0]), ast.ClassDef)
    passed = [(literal, value) for key, literal, value in fact.args_values
              if key in ("*", "**", flag[1]) or key.isdigit() and (not shown or key == str(flag[2]))]
    return fact.called and all(literal and value is False for literal, value in passed)


def flag_off_at_every_call(hazards: "Hazards", flag: Flag) -> bool:
    """Every call of the flag's function in view keeps the default False (:func:`flag_left_off`):
    in this file (``Hazards._calls_of``; one at least) and in the run's other files. None of
    them runs the op in place; only a call out of view could (funasr's
    ``FairseqDropout.forward(x, inplace: bool = False)``, called as ``self.dropout_module(w)``)."""
    model = hazards.model
    calls = hazards._calls_of(flag[0])
    if not all(flag_left_off(call, flag) for call in calls):
        return False
    project, qualname = model.calls.project, model.calls.qualname(flag[0])
    if project is not None and qualname is not None:
        module = qualname.rsplit(".", 2 if isinstance(model.parent(flag[0]), ast.ClassDef) else 1)[0]
        if not all(flag_left_off_there(model, fact, flag) for fact in project.calls_saving(qualname, module)):
            return False
    return bool(calls)


def explain_flagged(hazards: "Hazards", node: Located, target: ast.expr, flag: Flag) -> Optional[Hazard]:
    """:meth:`Hazards.explain` for a write that runs in place only where ``flag`` (a parameter
    defaulting to False: ``F.dropout(x, inplace=inplace)``) is passed: the callers that keep the
    default (:func:`flag_left_off`) run it out of place, so what they hand in is not asked."""
    flagged = hazards.flagged
    if flag[0] in flagged:
        return hazards.explain(node, target)
    flagged[flag[0]] = flag
    try:
        return hazards.explain(node, target)
    finally:
        del flagged[flag[0]]


def called_elsewhere(model: "HazardFacts", func: Function) -> bool:
    """A top-level function code the file does not show may call: the file is checked alone
    (any file may import it), or another module of the run imports it (a builder's modules are
    then used where neither the hazard nor a fix's safety can follow them)."""
    index, module = model.calls.project, model.calls.module_name
    if model.parent(func) is not model.module:
        return False
    return index is None or not module or index.imported_elsewhere(f"{module}.{func.name}", module)


def partial_of_torch(model: "HazardFacts", func: ast.expr) -> Optional[str]:
    """The torch function a called name or ``self.<attr>`` holds when its one binding is
    ``functools.partial(torch.f, ...)`` (a name bound once where it is called; an attribute the
    module sets once, in the calling method's class): ``f`` runs on the call's arguments after
    the bound ones. None otherwise."""
    value: Optional[ast.expr] = None
    if isinstance(func, ast.Name):
        reaching = model.reaching(model.flow(model.owner(func)), func.id, model.statement_of(func))
        value = reaching[0].value if len(reaching) == 1 and reaching[0].form == "assign" else None
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        cls = model.enclosing_class(func)
        values = model.class_attrs(cls).get(func.attr, []) if cls is not None else []
        if len(values) == 1 and len(model.attribute_writes(func.attr)) == 1 and isinstance(values[0], ast.expr):
            value = values[0]
    if not (isinstance(value, ast.Call) and value.args and not isinstance(value.args[0], ast.Starred)
            and model.qualified_names(value.func) & _PARTIAL):
        return None
    name = model.torch_name(value.args[0])
    return name if name is not None and name.rsplit(".", 1)[-1][:1].islower() else None
