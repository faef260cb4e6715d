"""Views PyTorch refuses to modify in place: the third error family.

PyTorch raises at the write itself (not at ``backward()``) when an in-place op modifies

- an output of a function that returns several views (``chunk``, ``split``, ``unbind``,
  iterating a tensor: ``torch_api.MULTI_VIEW_METHODS``), or a view of one (``q.transpose(1,
  2)``, ``p[0]``): "Output 0 of SplitBackward0 is a view and is being modified inplace. This view
  is the output of a function that returns multiple views...";
- a view created under ``no_grad``, written with grad on: "A view was created in no_grad mode
  and is being modified inplace with grad mode enabled";
- a view returned by a custom ``autograd.Function`` (its ``forward`` returns an input, or a view
  of one): "... This view was created inside a custom Function ...";

as long as something involved requires grad (the viewed tensor, or the value written). This
module follows a written name back to where its view was made (:meth:`Views.origin`), and says
whether a tensor requires grad (:meth:`Views.requires_grad`: yes, no or unknown) so that the
rule can tell a proven error from a possible one. Facts about which ops make views come from
torch (``torch_api.py``); reshapes that copy some layouts keep a chain possible, not proven.
"""

from __future__ import annotations

import ast
import weakref
from typing import Callable, Dict, Final, Iterable, List, Literal, NamedTuple, Optional, Sequence, Set, Tuple, TypeGuard, cast

from codemod import torch_api
from codemod.analysis.binder import Binder, Binding, Flow
from codemod.analysis.builders import parametric_builder
from codemod.analysis.calls import instance_calls_count, passes_tensor
from codemod.analysis.branches import exclusive_until, within
from codemod.analysis.classes import Calls as CallTable, Classes
from codemod.analysis.grad_mode import GradMode
from codemod.analysis.handed_in import TreeFlows, called_values, constructed_values
from codemod.analysis.holders import read_after
from codemod.analysis.injected import Foreign
from codemod.analysis.kinds import PARAMETER_CLASSES as _PARAMETER, TENSORISH, Kind
from codemod.analysis.names import Names
from codemod.analysis.project import SummaryFact
from codemod.analysis.requires_grad import (
    list_appends,
    SHAPE_METHODS,
    differentiable_operands,
    may_be_frozen,
    on_every_way_between,
    switched_on_between,
    written_into,
)
from codemod.analysis.dataflow import Dataflow
from codemod.analysis.syntax import (
    BODIES,
    FUNCTIONS,
    Function,
    OWNERS,
    Located,
    Pos,
    bound_names,
    call_args,
    default_of,
    first_arg,
    is_const,
    iterable_of,
    passed_for,
    positional,
    span,
    spreads,
    target_key,
)
from codemod.analysis.tensor_kind import JOINING, TensorKinds
from codemod.analysis.tree import Tree
from codemod.analysis.view_steps import ReshapeSplits, einops_splits_only

ViewKind = Literal["multi-output", "no-grad", "custom-function"]
RequiresGrad = Literal["yes", "no", "unknown"]

_MULTI = set(torch_api.MULTI_VIEW_METHODS) - {"__iter__"}
_ALWAYS = set(torch_api.VIEW_METHODS_ALWAYS)
_SOMETIMES = set(torch_api.VIEW_METHODS_SOMETIMES)
_ITERATION_IS_UNBIND = "__iter__" in torch_api.MULTI_VIEW_METHODS


def _parameter_rg(call: ast.Call) -> RequiresGrad:
    """``nn.Parameter(t)``: "yes"; ``nn.Parameter(t, requires_grad=False)`` (or ``(t, False)``):
    "no"; a flag the analysis cannot read: unknown."""
    flags = [k.value for k in call.keywords if k.arg == "requires_grad"] + list(call.args[1:2])
    if all(is_const(f, True) for f in flags):
        return "yes"
    return "no" if any(is_const(f, False) for f in flags) else "unknown"


class _FrozenFacts(NamedTuple):
    """The facts :func:`may_be_frozen` reads, from the parts Views holds."""

    module: ast.Module
    parent: Callable[[ast.AST], Optional[ast.AST]]
    attribute_writes: Callable[[str], List[ast.expr]]
    calls_in: Callable[[ast.AST], CallTable]


_NO_GRAD = {"torch.no_grad", "torch.set_grad_enabled", "torch.autograd.grad_mode.no_grad",
            "torch.autograd.no_grad"}
# Ops whose result requires grad when an input does (besides views): what autograd records.
_DIFFERENTIABLE = (
    {k for k in torch_api.OP_SAVES if "." not in k and not k.endswith("_scalar")} - {"argmax", "argmin"}
) | _ALWAYS | _SOMETIMES | _MULTI | {
    "clone", "float", "double", "half", "bfloat16", "to", "type_as", "exp", "softmax", "matmul", "mul",
    "add", "sub", "div", "clamp", "sum", "mean", "cat", "stack", "where", "index_select", "gather",
}
# Torch functions not in the measured table whose result is differentiable in their (floating)
# tensor inputs: composites of measured ops (``normalize`` is a norm, a clamp and a division),
# layers' functional forms and losses. What each saves stays unknown (UNSEEN); this only says a
# value computed by one from an argument is still computed from that argument.
_DIFFERENTIABLE_COMPOSITES = {
    "normalize", "cosine_similarity", "pairwise_distance", "cdist", "dist",
    "pad", "interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle", "fold", "flip", "roll",
    "repeat_interleave", "diag", "trace", "outer", "cumprod", "take_along_dim",
    "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "linear", "bilinear", "conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "grid_sample", "affine_grid",
    "batch_norm", "group_norm", "instance_norm", "rms_norm", "local_response_norm",
    "glu", "logsigmoid", "softmin", "softsign", "tanhshrink",
    "arcsin", "acos", "arccos", "erfinv", "atan2", "hypot", "logaddexp", "lerp", "addcmul", "addcdiv",
    "baddbmm", "minimum", "maximum", "fmin", "fmax", "clamp_min", "clamp_max",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "cosine_embedding_loss", "triplet_margin_loss",
}
_NOT_DIFFERENTIABLE = {"detach", "argmax", "argmin", "long", "int", "bool", "byte", "sign", "round",
                       "floor", "ceil", "eq", "ne", "lt", "gt", "le", "ge", "isnan", "isinf", "numel",
                       "size", "dim", "item", "tolist", "nonzero"}


def _differentiable(short: str) -> bool:
    """A torch function (by its last name) whose result is differentiable in its inputs."""
    return short in _DIFFERENTIABLE or short in _DIFFERENTIABLE_COMPOSITES


class ViewOrigin(NamedTuple):
    """Where a written tensor's refused view was made."""

    kind: ViewKind
    creation: ast.expr  # the call (``x.chunk(3)``, ``F.apply(x)``) or view made under no_grad
    base: Optional[ast.expr]  # the tensor viewed: its later readers would see an in-place write
    certain: bool  # False when a step may copy instead (``reshape`` of a strided view)
    sharers: Tuple[str, ...]  # other names holding the same memory (the base, chain, container)


class Views:
    """Refused views (:meth:`origin`) and whether tensors require grad (:meth:`requires_grad`)."""

    def __init__(self, tree: Tree, binder: Binder, names: Names, classes: Classes, dataflow: Dataflow,
                 kinds: TensorKinds, grad: GradMode) -> None:
        self.tree = tree
        self.binder = binder
        self.names = names
        self.classes = classes
        self.dataflow = dataflow
        self.kinds = kinds
        self.grad = grad
        self._origins: Dict[Tuple[int, int], Optional[ViewOrigin]] = {}
        self._asking: Set[Tuple[int, int]] = set()  # cycles through loops
        self._view_keys: Dict[int, List[str]] = {}  # id(owner) -> names some binding makes a refused view
        self.requirement = GradRequirement(self)
        self.trained = TrainedClasses(self)
        self.inputs = InputFlow(self)
        self.later = LaterReads(self)
        self.making = ViewMaking(self)
        self.returned = ReturnedViews(self)
        self.reshapes = ReshapeSplits(tree, binder, dataflow)

    # ------------------------------------------------------------------ origins
    def origin(self, target: ast.expr, stmt: Located) -> Optional[ViewOrigin]:
        """The refused view ``target`` (a name, or part of one: ``v[0]``) is at ``stmt``, if any:
        also an element of a name holding a multi-view call's outputs (``v1 = x.unbind()``,
        then ``v1[0].mul_(2)``), unless the statement replaces that element (``v1[0] = y``)."""
        replaced = isinstance(stmt, ast.Assign) and any(t is target for t in stmt.targets)
        while isinstance(target, ast.Subscript):
            if isinstance(target.value, ast.Name) and not isinstance(target.slice, (ast.Slice, ast.Tuple)) \
                    and not replaced:  # a tuple's index (`rows[i]`) picks one element
                element = self._element_origin(target.value, stmt)
                if element is not None:
                    return element
            replaced = False
            target = target.value
        if not isinstance(target, ast.Name):
            return None
        return self._expr(target, stmt)

    def value_origin(self, value: ast.expr, at: Located) -> Optional[ViewOrigin]:
        """The refused view the expression ``value`` (evaluated at ``at``) is, if any: a view of
        one (``t.reshape(-1)`` of a ``chunk`` output) is the same view for PyTorch."""
        return self._expr(value, at)

    def holds_outputs(self, name: ast.Name, at: Located) -> bool:
        """``name`` holds a multi-view call's outputs (``rows = x.unbind()``): a tuple, whose
        elements are the views (no tensor to copy or rebind)."""
        return self._element_origin(name, at) is not None

    def refused(self, target: ast.expr, stmt: Located, operands: Sequence[ast.expr] = ()) -> Optional[ViewOrigin]:
        """The origin of ``target`` unless PyTorch is known to allow the write: neither the
        tensor viewed nor a value written requires grad (a fresh buffer split into parts)."""
        origin = self.origin(target, stmt)
        if origin is None:
            return None
        if self.base_requires_grad(origin) == "no" and all(self.requirement.requires_grad(o, stmt) == "no" for o in operands):
            return None
        return origin

    def cloned_just_before(self, target: ast.expr, stmt: Located) -> bool:
        """``x = x.clone()`` is the statement right before ``stmt`` in its block, and ``stmt``
        writes ``x`` (or part of it): the write goes into a private copy, which nothing saved."""
        while isinstance(target, ast.Subscript):
            target = target.value
        key = target_key(target)
        parent = self.tree.parent(stmt)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                i = next(k for k, s in enumerate(block) if s is stmt)
                prev = block[i - 1] if i else None
                return (key is not None and isinstance(prev, ast.Assign) and len(prev.targets) == 1
                        and target_key(prev.targets[0]) == key and isinstance(prev.value, ast.Call)
                        and isinstance(prev.value.func, ast.Attribute) and prev.value.func.attr == "clone"
                        and not prev.value.args and not prev.value.keywords
                        and target_key(prev.value.func.value) == key)
        return False

    def viewed_by(self, target: ast.expr, stmt: Located, operands: Sequence[ast.expr] = (),
                  allowed_too: bool = False) -> Optional[Tuple[str, ViewOrigin]]:
        """A name bound to a refused view of ``target`` (``a`` of ``a, b = h.chunk(2)``, or a
        view of ``h`` taken under ``no_grad``) that is read after the in-place write to
        ``target`` at ``stmt``: PyTorch raises at that read ("... its base or another view of
        its base has been modified inplace"), unless neither the tensor nor a value written
        (``operands``) can require grad (``allowed_too``: even then, for fixes that would hide
        the write from the view). The first such name, with its view's origin."""
        while isinstance(target, ast.Subscript):
            target = target.value
        if not isinstance(target, ast.Name):
            return None
        flow = self.binder.flow(self.tree.owner(stmt))
        start = span(stmt)[0]
        for key in self._keys_bound_to_views(flow):
            if key == target.id or not any(b.end <= start for b in flow.bindings[key]):
                continue
            bindings = self._plain_bindings(key, stmt)
            if not bindings or not self.later.read_after(key, stmt):
                continue
            origins = [self._binding_origin(b, key) for b in bindings]
            if all(o is not None and o.kind != "custom-function" and o.certain and o.base is not None
                   and target_key(o.base) == target.id for o in origins):
                origin = origins[0]
                assert origin is not None
                if self._rebound_between(flow, target.id, origin, stmt):
                    continue  # `x = x[keep]` since the view was made: the write goes to another tensor
                if not allowed_too and self.base_requires_grad(origin) == "no" and all(
                        self.requirement.requires_grad(o, stmt) == "no" for o in operands):
                    return None  # nothing requires grad: PyTorch allows it
                return key, origin
        return None

    def _rebound_between(self, flow: Flow, key: str, origin: ViewOrigin, stmt: Located) -> bool:
        """Whether ``key`` is bound again between the statement that made the view and ``stmt``."""
        made_end = span(self.tree.statement_of(origin.creation))[1]
        start = span(stmt)[0]
        return any(made_end <= b.start and b.end <= start and b.form != "aug" for b in flow.bindings.get(key, []))

    def _keys_bound_to_views(self, flow: Flow) -> List[str]:
        """The names of ``flow`` that some binding makes a refused view: the only ones
        :meth:`viewed_by` can report (asked for every in-place write: the screen keeps it cheap)."""
        found = self._view_keys.get(id(flow.owner))
        if found is None:
            found = self._view_keys[id(flow.owner)] = [
                key for key, bindings in flow.bindings.items()
                if any(self._binding_origin(b, key) is not None for b in bindings)]
        return found

    def base_requires_grad(self, origin: ViewOrigin) -> RequiresGrad:
        """Whether the tensor ``origin`` views requires grad, where the view was made."""
        if origin.base is None:
            return "unknown"
        made = self.tree.statement_of(origin.creation)
        return self.requirement.requires_grad(origin.base, made)

    def _expr(self, expr: ast.expr, at: Located) -> Optional[ViewOrigin]:
        key = (id(expr), id(at))
        if key in self._origins:
            return self._origins[key]
        if key in self._asking:
            return None
        self._asking.add(key)
        try:
            found = self._expr_origin(expr, at)
        finally:
            self._asking.discard(key)
        self._origins[key] = found
        return found

    def _expr_origin(self, expr: ast.expr, at: Located) -> Optional[ViewOrigin]:
        if isinstance(expr, ast.Name):
            return self._name_origin(expr, at)
        if isinstance(expr, ast.Subscript):
            if not _basic_index(expr.slice):
                return None  # advanced indexing copies
            element = self._element_origin(expr.value, at)
            if element is not None:
                return element
            return self._expr(expr.value, at)
        if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
            return self._expr(expr.value, at)
        if isinstance(expr, ast.Call):
            return _call_origin(self, expr, at)
        return None

    def _element_origin(self, container: ast.expr, at: Located) -> Optional[ViewOrigin]:
        """An element of ``container`` (``parts[0]``, ``for p in parts``) when it holds the
        outputs of a multi-view call: the call itself, or a name bound to it."""
        base = self.making.multi_view_base(container)
        if base is not None:
            return ViewOrigin(self.making._multi_kind(container), container, base, True, _keys(base))
        if isinstance(container, ast.Name):
            bindings = self._plain_bindings(container.id, at)
            if len(bindings) == 1 and bindings[0].value is not None:
                value = bindings[0].value
                base = self.making.multi_view_base(value)
                if base is not None:
                    return ViewOrigin(self.making._multi_kind(value), value, base, True,
                                      _keys(base) + (container.id,))
        return None  # `t[0]` of a tensor is a plain view: the caller follows `t`

    def _name_origin(self, name: ast.Name, at: Located) -> Optional[ViewOrigin]:
        bindings = self._plain_bindings(name.id, at)
        if not bindings:
            return None
        found: List[ViewOrigin] = []
        made: List[Binding] = []
        plain: List[Binding] = []
        for b in bindings:
            origin = self._binding_origin(b, name.id)
            if origin is None:
                plain.append(b)
                continue
            found.append(origin)
            made.append(b)
        if plain and not (found and all(o.kind in ("multi-output", "custom-function") for o in found)
                          and self._branches_only(made, plain, at)):
            return None  # one way in is not a refused view: nothing is proven
        first = found[0]
        sharers = tuple(dict.fromkeys(k for o in found for k in o.sharers))
        return first._replace(certain=all(o.certain for o in found), sharers=sharers)

    def _plain_bindings(self, key: str, at: Located) -> List[Binding]:
        """The bindings of ``key`` that reach ``at``, in-place updates left out (they keep
        the object); inside a loop that binds ``key``, the loop's own binding."""
        flow = self.binder.flow(self.tree.owner(at))
        found = [b for b in self.dataflow.reaching(flow, key, at) if b.form != "aug"]
        if found:
            return found
        for anc in self.tree.ancestors(at):
            if isinstance(anc, OWNERS):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)) and key in bound_names(anc.target):
                return [b for b in flow.bindings.get(key, []) if b.stmt is anc][:1]
        return []

    def _binding_origin(self, b: Binding, key: str) -> Optional[ViewOrigin]:
        stmt = b.stmt
        if b.form in ("assign", "ann") and b.value is not None:
            if self.making._made_without_grad(stmt):
                viewed = self.making._viewed(b.value)
                if viewed is not None:
                    certain = not _sometimes_view(b.value)
                    return ViewOrigin("no-grad", b.value, viewed, certain, _keys(viewed))
            inner = self._expr(b.value, stmt)
            if inner is None:
                return None
            return inner._replace(sharers=inner.sharers + _keys(b.value))
        if isinstance(stmt, ast.Assign) and b.form == "other":
            return self._unpacked_origin(stmt, key)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            iterable = iterable_of(stmt, key)
            if iterable is None:
                return None
            element = self._element_origin(iterable, stmt)
            if element is not None:
                return element
            if _ITERATION_IS_UNBIND and (self.kinds.kind(iterable) in TENSORISH
                                         or passed_tensors(self.requirement, iterable, stmt)) \
                    and not narrowed_away(self.tree, self.names, stmt, iterable):
                kind: ViewKind = "no-grad" if self.making._made_without_grad(stmt) else "multi-output"
                return ViewOrigin(kind, iterable, iterable, True, _keys(iterable))
        return None

    def _branches_only(self, made: List[Binding], plain: List[Binding], at: Located) -> bool:
        """Each binding making a multi-output view (or a custom Function's) and each other
        binding reaching ``at`` are unpackings or assignments on different branches of one
        ``if`` (``q, k, v = self.in_proj_qkv(x)`` on one, ``q = self.in_proj_q(x)`` on
        another), or the view's sits in a branch of an ``if`` after the other in its block
        (``s = self.lin(x)`` / ``if c: s = tag(s)``, the branch overriding it); and no path
        from the view's runs the other before ``at`` (``branches.exclusive_until``): the path
        through the view's branch writes into it, a real error wherever that branch runs."""
        ancestors = self.tree.ancestors
        return all(b.form in ("assign", "other") for b in made + plain) and all(
            exclusive_until(m.stmt, p.stmt, at, ancestors) for m in made for p in plain)

    def _returned_multi_view(self, value: ast.expr) -> Optional[ast.Call]:
        """``self.in_proj_qkv(x)`` where that method of the class returns only multi-view calls
        (``return self._in_proj(x).chunk(3, dim=-1)``): the first of them."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                and isinstance(value.func.value, ast.Name) and value.func.value.id == "self"):
            return None
        cls = self.tree.enclosing_class(value)
        methods = [f for f in (cls.body if cls is not None else []) if isinstance(f, FUNCTIONS) and f.name == value.func.attr]
        if len(methods) != 1:
            return None
        returns = [n for n in self.tree.walk(methods[0]) if isinstance(n, ast.Return) and self.tree.owner(n) is methods[0]]
        calls = [r.value for r in returns if isinstance(r.value, ast.Call) and self.making.multi_view_base(r.value) is not None]
        return calls[0] if returns and len(calls) == len(returns) else None

    def _unpacked_origin(self, stmt: ast.Assign, key: str) -> Optional[ViewOrigin]:
        """``q, k, v = x.chunk(3)``: ``key`` unpacked from a multi-view call."""
        for target in stmt.targets:
            if isinstance(target, (ast.Tuple, ast.List)) and any(
                    isinstance(e, ast.Name) and e.id == key for e in target.elts):
                if any(isinstance(e, ast.Starred) for e in target.elts):
                    return None
                base = self.making.multi_view_base(stmt.value)
                if base is None:
                    element = _mapped_element(self, stmt.value, stmt, target.elts.index(
                        next(e for e in target.elts if isinstance(e, ast.Name) and e.id == key)))
                    if element is not None:  # `q, k, v = map(lambda t: <view of t>, (q, k, v))`
                        return element
                mapped = _mapped_views(self, stmt.value, stmt) if base is None else None
                if mapped is not None:  # `q, k = map(lambda t: t.transpose(1, 2), qk.chunk(2, -1))`
                    parts, certain = mapped
                    base = cast(ast.expr, self.making.multi_view_base(parts))
                    return ViewOrigin(self.making._multi_kind(parts), parts, base, certain, _keys(base))
                if base is None:
                    made = self._returned_multi_view(stmt.value)
                    base = self.making.multi_view_base(made) if made is not None else None
                    if made is None or base is None:
                        return _unpacked_tensor(self, stmt)
                    return ViewOrigin(self.making._multi_kind(made), made, base, True, ())
                return ViewOrigin(self.making._multi_kind(stmt.value), stmt.value, base, True, _keys(base))
        return None


def _mapped_views(views: "Views", value: ast.expr, at: Located) -> Optional[Tuple[ast.Call, bool]]:
    """``map(lambda t: <view of t>, parts)`` or ``[<view of t> for t in parts]`` (a
    generator too) where ``parts`` is a multi-view call (or a name bound once to one): each
    item is a view of one of its outputs, refused in place as they are. The call, and
    whether every step is a view for sure (``reshape``, einops: where no copy is needed)."""
    mapped = _mapping(views, value)
    if mapped is None:
        return None
    param, item, parts = mapped
    if isinstance(parts, ast.Name):
        bound = views._plain_bindings(parts.id, at)
        parts = bound[0].value if len(bound) == 1 and bound[0].form == "assign" and bound[0].value is not None else parts
    if not isinstance(parts, ast.Call) or views.making.multi_view_base(parts) is None:
        return None
    certain = _view_chain(views, item, param)
    return (parts, certain) if certain is not None else None


def _call_origin(views: "Views", expr: ast.Call, at: Located) -> Optional[ViewOrigin]:
    """The refused view a call gives: a view step of one (``t.transpose(1, 2)``,
    ``torch.reshape(t, s)``, einops), a custom Function's view, what a function of the file
    returns (its own refused view, or a view of the argument it is passed)."""
    same = views.names.identity_argument(expr)
    if same is not None:
        return views._expr(same, at)  # `torch.jit._unwrap_optional(h)` is `h`
    step = view_step(views, expr, at)
    if step is not None:
        inner = views._expr(step[0], at)
        return inner._replace(certain=False) if inner is not None and not step[1] else inner
    if views.making.custom_function_view(expr):
        base = first_arg(expr)
        return ViewOrigin("custom-function", expr, base, True, _keys(base))
    found = views.returned.view_origin(expr)
    if found is None:
        through = views.returned.through(expr)
        inner = views._expr(through[0], at) if through is not None else None
        if inner is not None and through is not None:
            return inner._replace(certain=inner.certain and through[1])
    return found


def _unpacked_tensor(views: "Views", stmt: ast.Assign) -> Optional[ViewOrigin]:
    """``q, k, v = qkv`` of a tensor: unpacking iterates it (``Tensor.__iter__`` is
    ``unbind(0)``), so the names are outputs of a multi-view op, as a loop's variable is."""
    value = stmt.value
    if not _ITERATION_IS_UNBIND or isinstance(value, (ast.Tuple, ast.List, ast.Starred)):
        return None
    if not (views.kinds.kind(value) in TENSORISH or passed_tensors(views.requirement, value, stmt)) \
            or narrowed_away(views.tree, views.names, stmt, value):
        return None
    kind: ViewKind = "no-grad" if views.making._made_without_grad(stmt) else "multi-output"
    return ViewOrigin(kind, value, value, True, _keys(value))


def _mapping(views: "Views", value: ast.expr) -> Optional[Tuple[str, ast.expr, ast.expr]]:
    """``map(lambda t: item, parts)`` or ``[item for t in parts]`` (a generator too): the
    parameter, the item and the parts."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "map" \
            and "builtins.map" in views.names.qualified_names(value.func) and len(value.args) == 2 \
            and not value.keywords and isinstance(value.args[0], ast.Lambda):
        lam = value.args[0].args
        if lam.posonlyargs or len(lam.args) != 1 or lam.vararg or lam.kwonlyargs or lam.kwarg or lam.defaults:
            return None
        return lam.args[0].arg, value.args[0].body, value.args[1]
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)) and len(value.generators) == 1 \
            and not value.generators[0].ifs and not value.generators[0].is_async \
            and isinstance(value.generators[0].target, ast.Name):
        return value.generators[0].target.id, value.elt, value.generators[0].iter
    return None


def _mapped_element(views: "Views", value: ast.expr, at: Located, index: int) -> Optional[ViewOrigin]:
    """Item ``index`` of ``map(lambda t: <view of t>, (q, k, v))`` (or a comprehension) over a
    tuple or list written out, where that element (``q``) is a refused view: a view of it,
    refused as it is (``q, k, v = x.chunk(3)`` the statement before)."""
    mapped = _mapping(views, value)
    if mapped is None:
        return None
    param, item, parts = mapped
    target = at.targets[0] if isinstance(at, ast.Assign) and len(at.targets) == 1 else None
    if not isinstance(parts, (ast.Tuple, ast.List)) or not isinstance(target, (ast.Tuple, ast.List)) \
            or len(parts.elts) != len(target.elts) or any(isinstance(e, ast.Starred) for e in parts.elts):
        return None
    certain = _view_chain(views, item, param)
    origin = views._expr(parts.elts[index], at) if certain is not None else None
    if origin is None or origin.kind != "multi-output":
        return None
    return origin._replace(certain=origin.certain and bool(certain))


def view_step(views: "Views", expr: ast.Call, at: Located) -> Optional[Tuple[ast.expr, bool]]:
    """The tensor ``expr`` is one view step of, and whether the step is a view for sure: a view
    method (``t.transpose(1, 2)``; ``reshape`` where it splits one dimension of ``t``'s unpacked
    shape, else may copy; ``contiguous``, ``flatten`` may copy), torch's function of the same name
    (``torch.reshape(t, shape)``), einops' ``rearrange(t, pattern)`` (sure where the pattern only
    splits and reorders). None where it is no such step."""
    func = expr.func
    name = views.names.torch_name(func)
    if name is not None:
        short = name[len("torch."):] if name.startswith("torch.") else ""
        if short not in _ALWAYS | _SOMETIMES or not expr.args or isinstance(expr.args[0], ast.Starred):
            return None
        tensor, shape = expr.args[0], expr.args[1:]
    elif isinstance(func, ast.Attribute) and func.attr in _ALWAYS | _SOMETIMES:
        short, tensor, shape = func.attr, func.value, expr.args
    elif views.names.qualified_names(func) & {"einops.rearrange"} and expr.args \
            and not isinstance(expr.args[0], (ast.List, ast.Tuple, ast.Starred)):
        pattern = expr.args[1] if len(expr.args) > 1 else next(
            (k.value for k in expr.keywords if k.arg == "pattern"), None)
        sure = isinstance(pattern, ast.Constant) and isinstance(pattern.value, str) \
            and einops_splits_only(pattern.value)
        return expr.args[0], sure  # a split, a permute (a merge may copy)
    else:
        return None
    if short in _ALWAYS:
        return tensor, True
    if short == "reshape" and not expr.keywords:
        return tensor, views.reshapes.splits_one(tensor, shape, at)
    return tensor, False


def _view_chain(views: "Views", expr: ast.expr, param: str) -> Optional[bool]:
    """Whether ``expr`` is views of ``param`` all the way down (``t.view(...).transpose(1,
    2)``, ``t[..., 0]``, einops' ``rearrange(t, ...)``, a function of the file handing back a
    view of its argument: ``to_heads(t, h)``): True when each step is a view for sure, False
    when one may copy (``reshape``, einops merging axes); None when it is not such a chain."""
    certain = True
    at = views.tree.statement_of(expr)
    for _ in range(12):
        if isinstance(expr, ast.Name):
            return certain if expr.id == param else None
        step = _step_down(views, expr, at)
        if step is None:
            return None
        expr, certain = step[0], certain and step[1]
    return None


def view_chain(views: "Views", value: ast.expr, key: str) -> Optional[bool]:
    """``value`` is views of ``key`` all the way down: True for sure, False where a step may copy,
    None where it is no such chain (an operator's result, a call of an op that is no view)."""
    return _view_chain(views, value, key)


def view_of_itself(views: "Views", value: ast.expr, key: str) -> bool:
    """``value`` is the tensor ``key`` holds, or a view of it for sure, through each step
    (``x[:, :1]``, ``x.unsqueeze(0)``, ``x.view(b, -1)``, a function of the file handing back its
    argument or a view of it: ``as_batch(x)``): ``x = value`` keeps the storage and the version
    counter of the tensor ``x`` held. Not a step that may copy (``reshape`` merging dimensions,
    ``x[[0, 1]]``, ``x.float()``)."""
    return _view_chain(views, value, key) is True


def _step_down(views: "Views", expr: ast.expr, at: Located) -> Optional[Tuple[ast.expr, bool]]:
    """One step down a chain of views: what ``expr`` views (``t.T``, ``t[..., 0]``, a view
    call, a function of the file handing back a view of its argument) and whether it is a view
    for sure; None where ``expr`` is no such step."""
    if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
        return expr.value, True
    if isinstance(expr, ast.Subscript) and _basic_index(expr.slice):
        return expr.value, True
    if isinstance(expr, ast.Call):
        return view_step(views, expr, at) or views.returned.through(expr)
    return None


_TENSOR_CLASSES = frozenset({"torch.Tensor"}) | _PARAMETER


def narrowed_away(tree: Tree, names: Names, stmt: ast.stmt, iterable: ast.expr) -> bool:
    """``stmt`` runs only where ``isinstance(y, C)`` holds of the name iterated, with a class of
    ``C`` (or of its tuple) other than torch's tensor classes (``TensorList``, ``list``): there ``y``
    may be a container whose iteration hands out what it holds, not unbind views of a tensor (a
    class that subclasses ``torch.Tensor`` would still unbind: not known, so not proven)."""
    key = target_key(iterable)
    if key is None:
        return False
    node: ast.AST = stmt
    for up in tree.ancestors(stmt):
        if isinstance(up, OWNERS):
            return False
        test = up.test if isinstance(up, ast.If) and any(s is node for s in up.body) else None
        node = up
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
                and len(test.args) == 2 and target_key(test.args[0]) == key):
            continue
        classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
        if any(names.torch_name(c) not in _TENSOR_CLASSES for c in classes):
            return True
    return False


class _ViewsPart:
    """A fact class wired by :class:`Views`: it reads the facts Views holds."""

    def __init__(self, views: "Views") -> None:
        # Weakly: the Views owning this part holds it, and a cycle between them would leave
        # the module's whole tree to the cyclic garbage collector when the analysis ends.
        self.views = weakref.proxy(views)
        self.binder = views.binder
        self.classes = views.classes
        self.dataflow = views.dataflow
        self.grad = views.grad
        self.kinds = views.kinds
        self.names = views.names
        self.tree = views.tree

    def _bound_locally(self, name: ast.Name) -> bool:
        """A local of a function around ``name`` (a parameter, a variable) has its name: not the module's."""
        owner = self.tree.owner(name)
        while not isinstance(owner, ast.Module):
            if name.id in self.binder.flow(owner, nested=False).bindings:
                return True
            owner = self.tree.owner(owner)
        return False


class ViewMaking(_ViewsPart):
    """How a view was made: by a multi-output view op, under no_grad, or by a custom autograd Function returning its input."""

    def _multi_kind(self, call: ast.AST) -> ViewKind:
        return "no-grad" if self._made_without_grad(call) else "multi-output"

    def multi_view_base(self, expr: ast.expr) -> Optional[ast.expr]:
        """The tensor a multi-view call splits (``x`` of ``x.chunk(3)``, ``torch.split(x, 2)``),
        also through a call of the file's own function that returns such a call of one of its
        parameters (``halves(x)`` of ``def halves(h): return h.chunk(2)``): the argument passed."""
        base = self.direct_multi_view_base(expr)
        if base is None and isinstance(expr, ast.Call):
            base = self.views.returned.multi_view_argument(expr)
        return base

    def direct_multi_view_base(self, expr: ast.expr) -> Optional[ast.expr]:
        """The tensor a multi-view op of torch splits, where ``expr`` calls one itself."""
        if not isinstance(expr, ast.Call):
            return None
        func = expr.func
        name = self.names.torch_name(func)
        if name is not None:
            return first_arg(expr) if name in torch_api.MULTI_VIEW_FUNCTIONS else None
        if isinstance(func, ast.Attribute) and func.attr in _MULTI:
            kind = self.kinds.kind(func.value)
            if kind in TENSORISH or (func.attr != "split" and kind is Kind.UNKNOWN):
                return func.value  # `line.split(",")` is a string's, not a tensor's
        return None

    def _viewed(self, value: ast.expr) -> Optional[ast.expr]:
        """The tensor ``value`` is a view of (a basic index or a view method), if it is one."""
        if isinstance(value, ast.Subscript) and _basic_index(value.slice):
            inner = value.value
        elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in (_ALWAYS | _SOMETIMES) - {"detach", "contiguous"}:
            inner = value.func.value
        elif isinstance(value, ast.Attribute) and value.attr in ("T", "mT"):
            inner = value.value
        else:
            return None
        if self.kinds.kind(inner) not in TENSORISH:
            return None  # `batch[0]` of a list is no view
        return inner

    def _made_without_grad(self, node: ast.AST) -> bool:
        """``node`` runs inside ``with torch.no_grad():`` (or ``set_grad_enabled(False)``) of
        its own function: views made there are refused writes with grad on."""
        for anc in self.tree.ancestors(node):
            if isinstance(anc, (ast.With, ast.AsyncWith)):
                state = self.grad.with_grad_state(anc)
                if state is not None:
                    return not state and any(self._no_grad_item(i.context_expr) for i in anc.items)
            if isinstance(anc, FUNCTIONS):
                return False
        return False

    def _no_grad_item(self, expr: ast.expr) -> bool:
        callee = expr.func if isinstance(expr, ast.Call) else expr
        return self.names.torch_name(callee) in _NO_GRAD

    def custom_function_view(self, call: ast.Call) -> bool:
        """``MyFn.apply(x)`` where ``MyFn`` (an ``autograd.Function`` of this module) returns an
        input, or a view of one, or a view for sure of a tensor it made (``flat.view(shape)``)
        from ``forward``: PyTorch marks the output a refused view. Not where ``forward`` marks
        an output non-differentiable."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "apply" and isinstance(func.value, ast.Name)):
            return False
        cls = next((s for s in self.tree.module.body
                    if isinstance(s, ast.ClassDef) and s.name == func.value.id), None)
        if cls is None or not any((target_key(b) or "").endswith("Function") for b in cls.bases):
            return False
        forward = next((s for s in cls.body if isinstance(s, FUNCTIONS) and s.name == "forward"), None)
        if forward is None:
            return False
        if any(isinstance(n, ast.Attribute) and n.attr == "mark_non_differentiable" for n in ast.walk(forward)):
            return False  # an output that requires no grad: PyTorch may allow the write (not measured)
        inputs = {a.arg for a in forward.args.args} - {"ctx", "self", "cls"}
        returns = [n for n in ast.walk(forward) if isinstance(n, ast.Return)]
        return bool(returns) and all(r.value is not None and (_view_of_input(r.value, inputs)
                                                              or _view_made_in(r.value, forward)) for r in returns)


class LaterReads(_ViewsPart):
    """Who reads a view's base (or its other views) after a write into the view: what decides whether a fix is safe."""

    def overlapping_view_read_after(self, name: ast.Name, stmt: Located, origin: ViewOrigin) -> Optional[str]:
        """Another name bound to a view of the tensor ``origin`` views (``u = h[0:2]`` beside
        ``v = h[0]``), read after the write to ``name`` at ``stmt``: in place it would have seen
        the write, a copy hides it. The outputs of one multi-view call are disjoint: they are
        bound by unpacking or indexing, not by a view of the tensor, and do not count."""
        base = target_key(origin.base) if origin.base is not None else None
        if not base:
            return None
        flow = self.binder.flow(self.tree.owner(stmt))
        for key in flow.bindings:
            if key in (name.id, base) or not self.read_after(key, stmt):
                continue
            for b in self.views._plain_bindings(key, stmt):
                if b.form in ("assign", "ann") and b.value is not None and self._view_root(b.value) == base:
                    return key
        return None

    def views_made_with_it(self, origin: ViewOrigin) -> Optional[Tuple[ast.AST, List[ast.Assign]]]:
        """The ``with torch.no_grad():`` block that made the view ``origin``, and every binding
        in it of a name to a view of the same tensor, or of a view bound there (``row = h[0]``,
        ``top = h[0:2]``, ``col = row[1:]``), in order: what must be detached for PyTorch's
        "both inside no_grad" meaning (a write into one of them reaches the others' memory, and
        PyTorch refuses any of them to be read with grad on after it). None where the view is
        not such a binding, or where the block views the tensor in a way a ``.detach()`` cannot
        follow (``a, b = h.chunk(2)``, ``for r in h``, an annotated or augmented binding)."""
        if origin.kind != "no-grad" or origin.base is None:
            return None
        base = target_key(origin.base)
        made = self.tree.statement_of(origin.creation)
        if not base or not _single_name_assign(made) or made.value is not origin.creation:
            return None
        block = next((a for a in self.tree.ancestors(made) if isinstance(a, (ast.With, ast.AsyncWith))
                      and self.grad.with_grad_state(a) is not None), None)
        if block is None:
            return None
        roots, found = {base}, []
        for node in _statements(block.body):
            if _single_name_assign(node):
                if self._view_root(node.value) in roots:
                    found.append(node)
                    roots.add(cast(ast.Name, node.targets[0]).id)
                    continue
            value: Optional[ast.expr] = None
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                value = node.value
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                value = node.iter
            if value is None:
                continue
            keys = {target_key(value), self._view_root(value)}
            viewed = self.views.making.multi_view_base(value)
            if viewed is not None:
                keys.add(target_key(viewed))
            if keys & roots:
                return None  # `a, b = h.chunk(2)`, `for r in h`, `v: Tensor = h[0]`: not followed
        return (block, found) if any(n is made for n in found) else None

    def _view_root(self, value: ast.expr) -> Optional[str]:
        """The name ``value`` is a view of, through a chain of views (``h[0].t()`` -> ``h``)."""
        inner = self.views.making._viewed(value)
        while inner is not None:
            deeper = self.views.making._viewed(inner)
            if deeper is None:
                return target_key(inner)
            inner = deeper
        return None

    def read_with_grad_after(self, name: ast.Name, stmt: Located, origin: ViewOrigin) -> Optional[ast.Name]:
        """A use with grad on, after ``stmt``, of the view ``name`` written there under
        ``no_grad`` (or of another output of the same multi-view call, or the container holding
        them): PyTorch allows the write but raises at that use ("... is a view and its base or
        another view of its base has been modified inplace"). The first such use in the
        function, where the same binding still holds; a use that only reads metadata
        (``.shape``, ``.detach()``, a comparison) does not count."""
        made = self.tree.statement_of(origin.creation)
        keys = {name.id: self.views._plain_bindings(name.id, stmt)}
        if isinstance(made, ast.Assign):
            for target in made.targets:
                if isinstance(target, (ast.Tuple, ast.List)):
                    for e in target.elts:
                        if isinstance(e, ast.Name) and e.id not in keys:
                            keys[e.id] = [b for b in self.binder.flow(self.tree.owner(made)).bindings.get(e.id, [])
                                          if b.stmt is made]
        for key in set(origin.sharers) - set(_keys(origin.base)) - set(keys):
            keys[key] = self.views._plain_bindings(key, stmt)
        flow = self.binder.flow(self.tree.owner(stmt))
        _, end = span(stmt)
        turns = self._later_turns(stmt, made)
        found: List[Tuple[Pos, ast.Name]] = []
        for key, bindings in keys.items():
            if not bindings:
                continue
            for pos, node in flow.loads.get(key, []):
                if not isinstance(node, ast.Name) or self.tree.owner(node) is not flow.owner:
                    continue
                if pos < end and not any(start <= pos < stop for start, stop in turns):
                    continue
                at = self.tree.statement_of(node)
                if [id(b) for b in self.views._plain_bindings(key, at)] != [id(b) for b in bindings]:
                    continue  # rebound in between: another tensor
                if self.grad.intended_reason(node, None) is None and self._used_by_autograd(node, at):
                    found.append((pos, node))
        return min(found, key=lambda f: f[0])[1] if found else None

    def _later_turns(self, stmt: Located, made: Located) -> List[Tuple[Pos, Pos]]:
        """The bodies of the loops around ``stmt`` (in its function) that do not also make the
        view (``made``): code there before ``stmt`` runs again after it, on the next turn (a
        ``for`` loop's head is read once; a ``while`` loop's test every turn)."""
        found: List[Tuple[Pos, Pos]] = []
        made_at = span(made)[0]
        for anc in self.tree.ancestors(stmt):
            if isinstance(anc, OWNERS):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor, ast.While)):
                start, stop = span(anc)
                if start <= made_at < stop:
                    break  # a fresh view every turn
                first = anc.test if isinstance(anc, ast.While) else anc.body[0]
                found.append((span(first)[0], stop))
        return found

    def _used_by_autograd(self, node: ast.Name, at: Located) -> bool:
        """``node`` feeds an op autograd records (arithmetic, a view, a differentiable method or
        torch function, a module with parameters): the op asks for the view's history."""
        parent = self.tree.parent(node)
        if isinstance(parent, ast.BinOp) or (isinstance(parent, ast.UnaryOp) and not isinstance(parent.op, ast.Not)):
            return True
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return True
        if isinstance(parent, ast.Attribute) and parent.value is node:
            if parent.attr in ("T", "mT"):
                return True
            call = self.tree.parent(parent)
            return isinstance(call, ast.Call) and call.func is parent and parent.attr not in _NOT_DIFFERENTIABLE \
                and (parent.attr in _DIFFERENTIABLE or parent.attr in torch_api.INPLACE_METHODS)
        if isinstance(parent, ast.Call) and node in parent.args:
            torch_name = self.names.torch_name(parent.func)
            if torch_name is not None:
                return _differentiable(torch_name.rsplit(".", 1)[-1])
            return self.views.requirement._parametric_module(parent.func, at)
        return False

    def read_after(self, key: str, stmt: Located) -> bool:
        """Whether ``key`` (or an attribute chain on it) may be read after ``stmt``: later in
        its body, anywhere in the body of a loop around it (a ``for`` loop's iterable is read
        once, before the first turn: not counted), or in a nested function."""
        return read_after(self.tree, self.binder.flow(self.tree.owner(stmt)), key, stmt, loop_heads=False)


class ReturnedViews(_ViewsPart):
    """Views a call of the file's own function gives its caller, read off the callee's returns:
    ``a, b = halves(x)`` of ``def halves(h): return h.chunk(2, dim=1)`` are outputs of a
    multi-view op of ``x`` for PyTorch, as if the caller had called ``chunk`` itself; ``h =
    scale_grad(y)`` of ``def scale_grad(x): return ScaleGrad.apply(x)`` is the custom
    Function's view of ``y``. The tensor viewed is what the caller passes, so whether it
    requires grad, and who reads it afterwards, are the caller's facts."""

    def __init__(self, views: "Views") -> None:
        super().__init__(views)
        self._extended: Optional[Set[str]] = None  # the names of the module's base classes, once
        self._asking: Set[int] = set()  # callees being read (recursion)

    def extended(self) -> Set[str]:
        """The names of the classes the module's classes extend (``own_callee``: their methods may be overridden)."""
        if self._extended is None:
            self._extended = {b.id for c in self.tree.nodes(ast.ClassDef)
                              for b in cast(ast.ClassDef, c).bases if isinstance(b, ast.Name)}
        return self._extended

    def multi_view_argument(self, call: ast.Call) -> Optional[ast.expr]:
        """What ``call`` passes for the parameter every ``return`` of its callee splits with a
        multi-view op (``return h.chunk(2)``, ``return torch.split(h, n)``), with grad on there
        and the parameter not rebound before; None where one return is anything else."""
        found = self._returns(call)
        if found is None:
            return self._imported_split(call)
        func, returns = found
        params: Set[str] = set()
        for r in returns:
            base = self.views.making.direct_multi_view_base(cast(ast.expr, r.value))
            param = self._parameter(base, r) if base is not None else None
            if param is None:
                return None
            params.add(param)
        return self._passed(call, func, params.pop()) if len(params) == 1 else None

    def view_origin(self, call: ast.Call) -> Optional[ViewOrigin]:
        """The refused view ``call`` gives, where every ``return`` of its callee is one of the
        same kind (``return ScaleGrad.apply(x, s)``, ``return h.chunk(2)[0]``), made with grad
        on: the caller's call is where it is made, the tensor viewed the argument the caller
        passes for the parameter viewed (unknown where the callee views anything else)."""
        found = self._returns(call)
        if found is None or id(call) in self._asking:
            return None
        func, returns = found
        returns = [r for r in returns if not _ruled_out(self.views, func, call, r)]
        if not returns:
            return None
        self._asking.add(id(call))
        try:
            origins = [self.views._expr(cast(ast.expr, r.value), r) for r in returns]
        finally:
            self._asking.discard(id(call))
        kinds = {o.kind for o in origins if o is not None}
        if any(o is None for o in origins) or len(kinds) != 1 or "no-grad" in kinds:
            return None
        params = {self._parameter(o.base, r) if o is not None and o.base is not None else None
                  for o, r in zip(origins, returns)}
        param = params.pop() if len(params) == 1 else None
        base = self._passed(call, func, param) if param is not None else None
        certain = all(o is not None and o.certain for o in origins)
        return ViewOrigin(kinds.pop(), call, base, certain, _keys(base))

    def through(self, call: ast.Call) -> Optional[Tuple[ast.expr, bool]]:
        """What ``call`` passes for the parameter every ``return`` of its callee that the call
        can reach is a chain of views of (``def split_heads(x, h): b, n, d = x.shape; return
        x.view(b, n, h, d // h).transpose(1, 2)``), and whether each step is a view for sure:
        the result is a view of the caller's tensor, refused in place where that tensor is a
        refused view. Returns under ``if pattern == 'b n (h d) -> ...':`` that the call's constant
        argument for ``pattern`` rules out are left out (a stand-in dispatching on its pattern).
        None where a reachable return is anything else."""
        found = self._returns(call)
        if found is None or id(call) in self._asking:
            return None
        func, returns = found
        reachable = [r for r in returns if not _ruled_out(self.views, func, call, r)]
        self._asking.add(id(call))
        try:
            chains = [self._chain(cast(ast.expr, r.value), r) for r in reachable]
        finally:
            self._asking.discard(id(call))
        params = {c[0] for c in chains if c is not None}
        if not chains or any(c is None for c in chains) or len(params) != 1:
            return None
        passed = self._passed(call, func, params.pop())
        if passed is None or isinstance(passed, ast.Starred):
            return None
        return passed, all(c is not None and c[1] for c in chains)

    def _chain(self, expr: ast.expr, at: Located, depth: int = 0) -> Optional[Tuple[str, bool]]:
        """The parameter ``expr`` (returned at ``at``) is views of, through names bound once in
        the callee (``split = torch.reshape(x, shape)``; ``return split``), or on each of the
        paths reaching the name (``if t.dim() == 3: t = t.unsqueeze(0)``; ``return t``: the
        parameter itself or a view of it), and whether every step is a view for sure."""
        certain = True
        where: Located = at
        for _ in range(16):
            if isinstance(expr, ast.Name):
                bindings = self.views._plain_bindings(expr.id, where)
                if bindings and all(b.form == "param" for b in bindings):
                    return expr.id, certain
                if len(bindings) > 1:
                    joined = self._joined(bindings, expr.id, depth)
                    return None if joined is None else (joined[0], certain and joined[1])
                if len(bindings) != 1 or bindings[0].form != "assign" or bindings[0].value is None:
                    return None
                expr, where = bindings[0].value, bindings[0].stmt
                continue
            step = _step_down(self.views, expr, where)
            if step is None:
                return None
            expr, certain = step[0], certain and step[1]
        return None

    def _joined(self, bindings: List[Binding], name: str, depth: int) -> Optional[Tuple[str, bool]]:
        """The one parameter every binding of ``name`` reaching a read is views of (the
        parameter ``name`` itself, or a chain of views of it), and whether every step is a view
        for sure; None where a binding is anything else or the bindings view different ones."""
        if depth > 3:
            return None
        found: List[Tuple[str, bool]] = []
        for b in bindings:
            if b.form == "param":
                found.append((name, True))
                continue
            if b.form != "assign" or b.value is None:
                return None
            chain = self._chain(b.value, b.stmt, depth + 1)
            if chain is None:
                return None
            found.append(chain)
        params = {f[0] for f in found}
        return (params.pop(), all(f[1] for f in found)) if len(params) == 1 else None

    def _imported_split(self, call: ast.Call) -> Optional[ast.expr]:
        """``halves(x)`` / ``utils.halves(x)`` of a function of another file of the run whose
        summary (the project index) says it returns a multi-view op's outputs splitting one of
        its parameters: what the call passes for it (by position)."""
        calls = self.grad.calls
        project = calls.project if calls is not None else None
        func = call.func
        head = func if isinstance(func, ast.Name) else func.value if isinstance(func, ast.Attribute) else None
        if calls is None or project is None or spreads(call) or not isinstance(head, ast.Name):
            return None
        imported = project.imported(calls.module_name, head.id)
        if imported is None or self._bound_locally(head):
            return None
        fact = project.summary(imported if func is head else f"{imported}.{cast(ast.Attribute, func).attr}")
        if fact is None or fact.of != "function" or fact.returns != "multi-view" or fact.returned_input is None:
            return None
        args = positional(call)
        return args[fact.returned_input] if fact.returned_input < len(args) else None

    def _returns(self, call: ast.Call) -> Optional[Tuple[Function, List[ast.Return]]]:
        """The callee of ``call`` (the file's own, shown alone: ``own_callee``) and its returns,
        where each returns a value, none runs with grad off, and it yields nothing."""
        if spreads(call):
            return None
        func = own_callee(self.views, call, self.extended())
        if func is None:
            return None
        returns = [n for n in self.tree.walk(func) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await))
                   and self.tree.owner(n) is func]
        if not returns or any(not isinstance(r, ast.Return) or r.value is None or self.grad.intended_reason(r, None)
                              for r in returns):
            return None
        return func, cast(List[ast.Return], returns)

    def _parameter(self, base: ast.expr, at: ast.Return) -> Optional[str]:
        """``base`` is a parameter of the function holding ``at``, as it was passed (every binding
        reaching there is the parameter's)."""
        if not isinstance(base, ast.Name):
            return None
        bindings = self.views._plain_bindings(base.id, at)
        return base.id if bindings and all(b.form == "param" for b in bindings) else None

    def _passed(self, call: ast.Call, func: Function, param: str) -> Optional[ast.expr]:
        method = isinstance(self.tree.parent(func), ast.ClassDef)
        plain = _passed_parameters(func, method)
        return passed_for(call, param, plain.index(param) if param in plain else None)


def after_writes(requirement: "GradRequirement", key: str, b: Binding, at: Located, seen: Set[int],
                 answer: RequiresGrad) -> RequiresGrad:
    """``key``'s requirement at ``at``, ``answer`` at its binding ``b``, after the writes into it:
    "yes" once a write of what requires grad ran on every way there; "no" only if no write after
    ``b`` may bring in what requires grad (``xr = torch.rand(n)``, then ``xr[:2] = x / g``, ``g``'s
    grad unseen: unknown)."""
    if answer != "yes" and written_with_grad(requirement, key, b, at, seen):
        return "yes"
    if answer == "no" and written_maybe_with_grad(requirement, key, b, seen):
        return "unknown"
    return answer


def written_with_grad(requirement: "GradRequirement", key: str, b: Binding, at: Located, seen: Set[int]) -> bool:
    """``buf = x.new_zeros(n)`` then, on every way to ``at`` and with grad on, ``buf[i] = y``
    or ``buf.copy_(y)`` with ``y`` requiring grad: the write recorded ``buf``'s tensor in the
    graph, so it requires grad from there on (a tensor binding only: a list's item is not)."""
    if b.value is None or requirement.kinds.kind(b.value) not in TENSORISH:
        return False
    for stmt in on_every_way_between(requirement.tree, b.stmt, at):
        values = written_into(stmt, key)
        if values and not requirement.grad.intended_reason(stmt, None) \
                and any(requirement._rg(v, stmt, seen) == "yes" for v in values):
            return True
    return False


def written_maybe_with_grad(requirement: "GradRequirement", key: str, b: Binding, seen: Set[int]) -> bool:
    """Somewhere after ``b`` in its function (a loop may bring a later line round again),
    ``key[i] = v`` or ``key.copy_(v)`` with ``v`` not shown to require no grad: from there on
    ``key``'s tensor may require grad, so "no" would claim what the analysis does not see."""
    tree = requirement.tree
    owner = tree.owner(b.stmt)
    if not isinstance(owner, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    start = getattr(b.stmt, "end_lineno", None) or b.stmt.lineno
    statements = requirement.statements.get(owner)
    if statements is None:  # (once per function: asked at each step of a question)
        statements = requirement.statements[owner] = [
            stmt for stmt in ast.walk(owner)
            if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.Expr)) and tree.owner(stmt) is owner]
    return any(stmt.lineno > start and any(requirement._rg(v, stmt, seen) != "no" for v in written_into(stmt, key))
               for stmt in statements)


def returned_rg(requirement: "GradRequirement", call: ast.Call, seen: Set[int]) -> RequiresGrad:
    """A call of a function of the file (``helper(x)``) or a method of the caller's class
    (``self.features(x)``): "yes" where every value it returns does, with grad on there
    (``return self.fc(x)``); else unknown."""
    tree = requirement.tree
    callee = own_callee(requirement.views, call, requirement.views.returned.extended())
    if callee is None or len(seen) > 40:
        return "unknown"
    returns = [n for n in tree.walk(callee) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
               and tree.owner(n) is callee]
    if not returns or any(not isinstance(r, ast.Return) or r.value is None or requirement.grad.intended_reason(r, None)
                          for r in returns):
        return "unknown"
    return "yes" if all(requirement._rg(cast(ast.expr, r.value), r, seen) == "yes" for r in returns) else "unknown"


class GradRequirement(_ViewsPart):
    """Whether an expression requires grad (yes, no, or unknown), from its leaves, parameters and the ops that made it."""

    BUDGET: Final = 50000  # the steps one outermost question may take (:meth:`_rg`)

    def __init__(self, views: "Views") -> None:
        super().__init__(views)
        # What each parameter is passed, and each function's callers, computed once: helpers
        # handing an argument down a chain were otherwise walked once per path (exponential).
        self._passed: Dict[Tuple[int, str], RequiresGrad] = {}
        self._running: Dict[int, List[ast.Call]] = {}
        self._uses: Optional[Tuple[Dict[str, int], Dict[str, int]]] = None
        self._instances: Optional[Dict[str, List[ast.Call]]] = None  # class name -> calls of its instances
        self._stored: Dict[str, int] = {}  # the names the module assigns (Name targets): how often, with _uses
        self._steps: Optional[int] = None  # the steps of the outermost question being answered
        self.exhausted: Set[ast.AST] = set()  # functions where a question ran out of steps
        self.statements: Dict[ast.AST, List[ast.stmt]] = {}  # a function's own assignments and expression statements

    def _use_counts(self) -> Tuple[Dict[str, int], Dict[str, int]]:
        """How often the module loads each name and reads each attribute name: one walk of the
        module, not one per function asked about (that was quadratic in the functions)."""
        if self._uses is None:
            names: Dict[str, int] = {}
            attrs: Dict[str, int] = {}
            stored: Dict[str, int] = {}
            for n in self.tree.source.walked(ast.Name):  # names and attributes, in one list
                if isinstance(n, ast.Name):
                    if isinstance(n.ctx, ast.Load):
                        names[n.id] = names.get(n.id, 0) + 1
                    else:
                        stored[n.id] = stored.get(n.id, 0) + 1
                elif isinstance(n, ast.Attribute):
                    attrs[n.attr] = attrs.get(n.attr, 0) + 1
            self._uses = (names, attrs)
            self._stored = stored
        return self._uses

    def requires_grad(self, expr: ast.expr, at: Located) -> RequiresGrad:
        """Whether ``expr`` (evaluated at ``at``) requires grad: "yes" only where the analysis
        sees a parameter or a tensor made with ``requires_grad=True`` flow into it through
        differentiable ops with grad on; "no" for constants and fresh tensors made without it."""
        return self._rg(expr, at, set())

    def _rg(self, expr: ast.expr, at: Located, seen: Set[int]) -> RequiresGrad:
        """:meth:`requires_grad` on the way of one question (``seen``: the expressions on it). The steps of
        the outermost question are counted: past ``BUDGET`` every answer is "unknown", and so is every later
        question in that function (buffers written from each other, ``b0[:, 1:] = b1[:, 1:] * x`` and back,
        were otherwise asked along every path); ``exhausted`` says where, and from then on the module proves
        nothing (``SemanticModel.budget_spent``)."""
        if self._steps is None:
            owner = self.tree.owner(at)
            if owner in self.exhausted:
                return "unknown"
            self._steps = 0
            try:
                return self._rg(expr, at, seen)
            finally:
                if self._steps > self.BUDGET:
                    self.exhausted.add(owner)
                self._steps = None
        self._steps += 1
        if id(expr) in seen or self._steps > self.BUDGET:
            return "unknown"
        seen = seen | {id(expr)}
        if isinstance(expr, ast.Constant):
            return "no"
        if isinstance(expr, ast.Name):
            return self._name_rg(expr, at, seen)
        if isinstance(expr, ast.Attribute):
            if expr.attr in ("data", "grad"):
                return "no"  # outside autograd
            if expr.attr in ("T", "mT", "H", "mH", "real", "imag"):
                return self._rg(expr.value, at, seen)  # a view: as its base
            if self._parameter_attribute(expr):
                return "yes"
            return "no" if self.kinds.held_number(expr) else "unknown"
        if isinstance(expr, ast.BinOp):
            return _any(self._rg(e, at, seen) for e in (expr.left, expr.right))
        if isinstance(expr, ast.UnaryOp):
            return "no" if isinstance(expr.op, ast.Not) else self._rg(expr.operand, at, seen)
        if isinstance(expr, ast.Subscript):
            if self._parameter_table(expr.value, at):
                return "yes"  # params["weight_hh_l0"] of params = dict(rnn.named_parameters())
            base = self.views.making.multi_view_base(expr.value)
            return self._rg(base if base is not None else expr.value, at, seen)
        if isinstance(expr, ast.IfExp):
            return _all(self._rg(e, at, seen) for e in (expr.body, expr.orelse))
        if isinstance(expr, ast.Call):
            return self._call_rg(expr, at, seen)
        if isinstance(expr, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in expr.elts):
            # `torch.stack((a, b))`: "no" when no element requires grad (a "yes" is not drawn from it)
            return "no" if _any(self._rg(e, at, seen) for e in expr.elts) == "no" else "unknown"
        return "unknown"

    def _call_rg(self, call: ast.Call, at: Located, seen: Set[int]) -> RequiresGrad:
        if self.views.making._made_without_grad(call):
            return "no"
        func = call.func
        same = self.names.identity_argument(call)
        if same is not None:
            return self._rg(same, at, seen)  # `torch.jit._unwrap_optional(h)` is `h`
        name = self.names.torch_name(func)
        if name in _PARAMETER:
            return _parameter_rg(call)
        if self.kinds.calls.is_factory(call):
            return "yes" if any(k.arg == "requires_grad" and is_const(k.value, True) for k in call.keywords) else "no"
        if name is not None:
            short = name.rsplit(".", 1)[-1]
            if short in _NOT_DIFFERENTIABLE:
                return "no"
            if short in JOINING and call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
                # torch.cat([h, pad]): the result requires grad where one piece does
                return _any(self._rg(e, at, seen) for e in call.args[0].elts if not isinstance(e, ast.Starred))
            if _differentiable(short) or name in torch_api.MULTI_VIEW_FUNCTIONS:
                return _any(self._rg(a, at, seen) for a in call_args(call))
            return "unknown"
        if self.names.qualified_names(func) & _EINOPS_PASSING:
            # einops rearranges what it is given: no grad of its own; "no" only (einops is not read)
            return "no" if _any(self._rg(a, at, seen) for a in call.args[:1]) == "no" else "unknown"
        if self._parametric_module(func, at):
            return "yes"
        if self.kinds.kind(func) is Kind.MODULE and call.args \
                and _any(self._rg(a, at, seen) for a in call.args if not isinstance(a, ast.Starred)) == "yes":
            return "yes"  # a torch module without parameters (`self.log_softmax(x)`) given what requires grad
        if isinstance(func, ast.Attribute):
            if func.attr in _NOT_DIFFERENTIABLE:
                return "no"
            if func.attr == "requires_grad_":
                return "no" if call.args and is_const(call.args[0], False) else "yes"
            if func.attr in _DIFFERENTIABLE or func.attr in torch_api.INPLACE_METHODS:
                return _any(self._rg(a, at, seen) for a in [func.value, *call_args(call)])
            if func.attr == "apply" and self.views.making.custom_function_view(call):
                return _any(self._rg(a, at, seen) for a in call_args(call))
        return returned_rg(self, call, seen)

    def _name_rg(self, name: ast.Name, at: Located, seen: Set[int]) -> RequiresGrad:
        answers: List[RequiresGrad] = []
        for b in self.views._plain_bindings(name.id, at):
            if b.form != "param" and switched_on_between(self.tree, name.id, b.stmt, at) is not None:
                answers.append("yes")  # `t.requires_grad = True` after `t` was bound, before `at`
            elif b.form in ("assign", "ann") and isinstance(b.value, ast.List):
                answers.append(filled_list_rg(self, name.id, b, seen))  # `outs = []`, `outs.append(y)`
            elif b.form in ("assign", "ann") and b.value is not None:
                answer: RequiresGrad = "no" if self.views.making._made_without_grad(b.stmt) \
                    and not isinstance(b.value, ast.Name) else self._rg(b.value, b.stmt, seen)
                answers.append(after_writes(self, name.id, b, at, seen, answer))
            elif isinstance(b.stmt, ast.Assign) and b.form == "other":
                base = self.views.making.multi_view_base(b.stmt.value)
                answers.append(self._rg(base, b.stmt, seen) if base is not None else "unknown")
            elif isinstance(b.stmt, (ast.For, ast.AsyncFor)):
                iterable = iterable_of(b.stmt, name.id)
                if iterable is None:
                    answers.append("unknown")
                    continue
                base = self.views.making.multi_view_base(iterable)
                if base is None and isinstance(iterable, ast.Name):
                    bound = self.views._plain_bindings(iterable.id, b.stmt)
                    if len(bound) == 1 and bound[0].value is not None:
                        base = self.views.making.multi_view_base(bound[0].value)
                if base is None and self.kinds.kind(iterable) in TENSORISH:
                    base = iterable
                answers.append(self._rg(base, b.stmt, seen) if base is not None else "unknown")
            elif b.form == "param":
                answers.append(self._passed_rg(b, name.id, seen))
            else:
                answers.append("unknown")
        return _all(answers) if answers else "unknown"

    def _passed_rg(self, b: Binding, key: str, seen: Set[int]) -> RequiresGrad:
        """A parameter requires grad where every call of its function that this module shows
        passes a value that does (a loss helper given a model's output, a block's ``forward``
        given the previous layer's): "yes" then, as far as the file's calls show. Asked again
        while it is being answered (calls that lead back to it), it is "unknown"."""
        memo = (id(b.stmt), key)
        if memo not in self._passed:
            self._passed[memo] = "unknown"
            self._passed[memo] = self._passed_now(b, key, seen)
        return self._passed[memo]

    def _passed_now(self, b: Binding, key: str, seen: Set[int]) -> RequiresGrad:
        func = self.tree.owner(b.stmt)
        if not isinstance(func, FUNCTIONS) or len(seen) > 40:
            return "unknown"
        method = isinstance(self.tree.parent(func), ast.ClassDef)
        plain = _passed_parameters(func, method)
        position = plain.index(key) if key in plain else None
        calls = self._calls_of(func, method)
        answers: List[RequiresGrad] = []
        for call in calls:
            if self.grad.intended_reason(call, None):
                continue  # a call with grad off (around it, or for its whole function) records nothing
            if spreads(call):
                return "unknown"
            passed = passed_for(call, key, position)
            if passed is None:
                return "unknown"
            answers.append(self._rg(passed, self.tree.statement_of(call), seen | {id(b.stmt)}))
        answers.extend(self._passed_elsewhere(func, key, position))
        return "yes" if answers and all(a == "yes" for a in answers) else "unknown"

    def _calls_of(self, func: ast.AST, method: bool) -> List[ast.Call]:
        """:func:`_calls_running`, computed once per function."""
        if id(func) not in self._running:
            self._running[id(func)] = _calls_running(self, func, method)
        return self._running[id(func)]

    def _passed_elsewhere(self, func: ast.AST, key: str, position: Optional[int]) -> List[RequiresGrad]:
        """What the calls of ``func`` in the run's other files pass for ``key``, as their own
        analysis saw it (the project index): "yes" where it requires grad there. Calls with grad
        off are left out (they record nothing); a reference, whose calls cannot be followed, is
        "unknown"."""
        calls = self.grad.calls
        project = calls.project if calls is not None else None
        qualname = calls.qualname(func) if calls is not None and isinstance(func, FUNCTIONS) else None
        if project is None or qualname is None:
            return []
        module = qualname.rsplit(".", 2 if isinstance(self.tree.parent(func), ast.ClassDef) else 1)[0]
        answers: List[RequiresGrad] = []
        bound = calls is not None and instance_calls_count(calls, func)
        for call in [c for c in project.calls_from_elsewhere(qualname, module) if bound or not c.bound]:
            if not call.called:
                return ["unknown"]
            if call.grad_off or (call.caller and project.grad_off(call.caller)):
                continue
            shown = key in call.args_grad or (position is not None and str(position) in call.args_grad)
            answers.append("yes" if shown else "unknown")
        return answers

    def _parameter_table(self, expr: ast.expr, at: Located) -> bool:
        """``dict(m.named_parameters())`` (or a name bound only to it): its values are parameters."""
        if isinstance(expr, ast.Name):
            bound = self.views._plain_bindings(expr.id, at)
            if len(bound) != 1 or bound[0].form != "assign" or bound[0].value is None:
                return False
            expr = bound[0].value
        return (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "dict"
                and len(expr.args) == 1 and not expr.keywords and isinstance(expr.args[0], ast.Call)
                and isinstance(expr.args[0].func, ast.Attribute) and expr.args[0].func.attr == "named_parameters")

    def _parameter_attribute(self, attr: ast.Attribute) -> bool:
        """``self.w`` where the class assigns ``nn.Parameter(...)`` to it, built requiring grad
        (not ``nn.Parameter(t, requires_grad=False)``), and the file switches no requires_grad off
        that may be its (``self.w.requires_grad_(False)``, ``p.requires_grad = False`` of a loop)."""
        if not (isinstance(attr.value, ast.Name) and attr.value.id == "self"):
            return False
        cls = self.tree.enclosing_class(attr)
        if cls is None:
            return False
        values = self.classes.class_attrs(cls).get(attr.attr, [])
        return bool(values) and all(
            isinstance(v, ast.Call) and self.names.torch_name(v.func) in _PARAMETER and _parameter_rg(v) == "yes"
            for v in values) and not may_be_frozen(
                _FrozenFacts(self.tree.module, self.tree.parent, self.classes.attribute_writes, self.classes.calls_in),
                attr, replaced=False)

    def _parametric_module(self, func: ast.expr, at: Located) -> bool:
        """``self.fc`` / ``fc`` bound (only) to a torch module that owns parameters, or to an
        ``nn.Sequential`` holding one: calling it with grad on gives a tensor that requires grad."""
        values: List[object] = []
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = self.tree.enclosing_class(func)
            if cls is not None:
                values = _held_modules(self, cls, func)
        elif isinstance(func, ast.Name):
            values = [b.value for b in self.views._plain_bindings(func.id, at)]
            if values == [None]:  # a parameter: what every call of its function passes (`def step(vae, x): vae(x)`)
                values = list(_handed_modules(self, func, at) or [])
        elif isinstance(func, ast.Call):
            values = [func]  # `Decoder(8)(x)`
        elif isinstance(func, ast.Subscript):
            return _parametric_members(self, func)  # `self.convs[i](x)`
        return bool(values) and all(isinstance(v, ast.Call) and (self._owns_parameters(v) or self._module_layer(v))
                                    for v in values)

    def _module_layer(self, call: ast.Call) -> bool:
        """``ProjectLayer(...)``: a class of this module, or one imported from the run's files, that owns parameters."""
        trained = self.views.trained
        cls = trained.module_class(call.func.id) if isinstance(call.func, ast.Name) else None
        if cls is not None:
            return trained.parametric_class(cls, set())
        return trained.imported_parametric(call.func) or trained.built_parametric(call, set())

    def activation(self, at: Located) -> bool:
        """See :meth:`TrainedClasses.activation`."""
        return self.views.trained.activation(at)

    def _owns_parameters(self, call: ast.Call) -> bool:
        name = self.names.torch_name(call.func) or ""
        if name in torch_api.MODULES_WITH_PARAMETERS:
            return not any(k.arg in ("elementwise_affine", "affine", "bias") and is_const(k.value, False)
                           for k in call.keywords) or name.endswith(("Linear", "Conv1d", "Conv2d", "Conv3d"))
        if name in ("torch.nn.Sequential", "torch.nn.modules.container.Sequential"):
            return any(isinstance(a, ast.Call) and self._owns_parameters(a) for a in call.args)
        return False


_HOLDERS = ("torch.nn.ModuleList", "torch.nn.modules.container.ModuleList",
            "torch.nn.Sequential", "torch.nn.modules.container.Sequential")


def _parametric_members(requirement: "GradRequirement", func: ast.Subscript) -> bool:
    """``self.convs[i]`` (an index, not a slice) where the class sets ``self.convs`` only to
    ``nn.ModuleList([...])`` (a list or tuple, or a comprehension of one element) or
    ``nn.Sequential(a, b)`` whose every member is built here and owns parameters
    (``_owns_parameters``, ``_module_layer``), the file changes the container nowhere
    (``self.convs.append(...)``, ``self.convs[0] = ...``, ``net.convs``: no attribute of it read,
    no item written, the attribute named only through ``self``) and switches no ``requires_grad``
    off that may be its members' (``may_be_frozen``): whichever member is picked, calling it gives
    what requires grad."""
    holder = func.value
    if isinstance(func.slice, ast.Slice) or not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name)
                                                 and holder.value.id == "self"):
        return False
    cls = requirement.tree.enclosing_class(func)
    values = list(requirement.classes.class_attrs(cls).get(holder.attr, [])) if cls is not None else []
    members: List[ast.expr] = []
    for v in values:
        if not isinstance(v, ast.Call) or v.keywords or requirement.names.torch_name(v.func) not in _HOLDERS \
                or any(isinstance(a, ast.Starred) for a in v.args):
            return False
        if (requirement.names.torch_name(v.func) or "").endswith("Sequential"):
            members += v.args
        elif len(v.args) == 1 and isinstance(v.args[0], (ast.List, ast.Tuple)) \
                and not any(isinstance(e, ast.Starred) for e in v.args[0].elts):
            members += v.args[0].elts
        elif len(v.args) == 1 and isinstance(v.args[0], ast.ListComp):
            members.append(v.args[0].elt)
        else:
            return False
    if not values or not members or not all(
            isinstance(m, ast.Call) and (requirement._owns_parameters(m) or requirement._module_layer(m)) for m in members):
        return False
    for node in requirement.tree.source.walked(ast.Name):
        if not (isinstance(node, ast.Attribute) and node.attr == holder.attr):
            continue
        if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return False  # `net.convs` read or changed from outside the class: not followed
        parent = requirement.tree.parent(node)
        if isinstance(node.ctx, ast.Load) and (
                isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load)
                or isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node
                or isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name)
                and parent.func.id in ("len", "enumerate", "zip")):
            continue  # read: an item called, iterated, counted
        if isinstance(node.ctx, ast.Store) and isinstance(parent, ast.Assign) and node in parent.targets:
            continue  # (the settings `values` reads)
        return False
    return not may_be_frozen(_FrozenFacts(requirement.tree.module, requirement.tree.parent,
                                          requirement.classes.attribute_writes, requirement.classes.calls_in), holder)


def _held_modules(requirement: "GradRequirement", cls: ast.ClassDef, func: ast.Attribute) -> List[object]:
    """What ``self.<attr>`` (``func``) of ``cls`` holds: its values in the class; for one that an
    ``__init__`` parameter holds (``self.net = net``), what every construction passes where that set
    is closed (``handed_in.constructed_values``), none where the file may switch ``requires_grad``
    off on a part of it (``may_be_frozen``: a bare name switched off counts)."""
    handed = constructed_values(requirement.tree, requirement.binder, requirement.dataflow, requirement.classes,
                                requirement.grad.calls, cls, func.attr)
    if handed is None:
        return list(requirement.classes.class_attrs(cls).get(func.attr, []))
    return [] if may_be_frozen(_FrozenFacts(requirement.tree.module, requirement.tree.parent,
                                            requirement.classes.attribute_writes, requirement.classes.calls_in),
                               func) else list(handed)


def _handed_modules(requirement: "GradRequirement", func: ast.Name, at: Located) -> Optional[List[ast.expr]]:
    """What a function's parameter ``func`` holds: what every call of the function passes, where
    that set is closed (``handed_in.called_values``); none where the file may switch
    ``requires_grad`` off on a part of it (``may_be_frozen``)."""
    owner = requirement.tree.owner(at)
    bound = requirement.binder.flow(owner).bindings.get(func.id, []) if isinstance(owner, FUNCTIONS) else []
    if len(bound) != 1 or bound[0].form != "param" or not isinstance(owner, FUNCTIONS):
        return None
    flows = TreeFlows(requirement.tree, requirement.binder, requirement.dataflow)
    passed = called_values(flows, requirement.grad.calls, owner, func.id)
    facts = _FrozenFacts(requirement.tree.module, requirement.tree.parent, requirement.classes.attribute_writes,
                         requirement.classes.calls_in)
    if passed is None or may_be_frozen(facts, func):
        return None
    return passed


def _calls_running(requirement: "GradRequirement", func: ast.AST, method: bool) -> List[ast.Call]:
    """The calls of ``func`` this module shows: of a module-level function by its name (bound
    once, only ever called), of a module-level class's ``forward`` through an instance (``C(...)(x)``,
    a name or ``self.attr`` bound only to ``C(...)``, a module-level name built once), of its
    ``__call__`` so too where the class defines one (then not of its ``forward``), of another method
    as ``self.m(...)`` and ``inst.m(...)``."""
    module = requirement.tree.module
    if not isinstance(func, FUNCTIONS):
        return []
    by_key = requirement.classes.calls_in(module)
    if not method:
        if requirement.tree.parent(func) is not module or len(requirement.binder.flow(module, nested=False).bindings.get(func.name, [])) != 1:
            return []
        calls = by_key.get(func.name, [])
        return calls if requirement._use_counts()[0].get(func.name, 0) == len(calls) else []
    cls = requirement.tree.parent(func)
    if not isinstance(cls, ast.ClassDef) or requirement.tree.parent(cls) is not module:
        return []
    if func.name == "__call__" and not _defines(cls, "forward"):
        requirement._use_counts()  # first: it gathers the names the module assigns (`_stored`)
        # `inst(x)` of a class defining `__call__` runs it (not a module's `forward`)
        if requirement._instances is None:
            requirement._instances = _instance_calls(requirement.views, by_key, requirement._stored)
        return requirement._instances.get(cls.name, [])
    if func.name != "forward":
        # a method the class calls as `self.name(...)` (a staticmethod too), and the file as
        # `inst.name(...)` on an instance (`self.attr` or a name bound only to `Cls(...)`)
        own = [c for c in requirement.classes.calls_in(cls).get(f"self.{func.name}", [])]
        # (`_stored` is gathered by `_use_counts`, called after: left so, as at e95ccd4; gathering it
        # first finds more calls, and exposed a lost hazard in tests/test_recall_rec24i.py: not done)
        own += _instance_method_calls(requirement.views, by_key, cls.name, func.name, requirement._stored)
        return own if own and requirement._use_counts()[1].get(func.name, 0) - _others_own(requirement.views, cls, func.name) == len(own) else []
    requirement._use_counts()
    if _defines(cls, "__call__"):
        return []  # `inst(x)` runs the class's own `__call__`, which may not call `forward`
    if requirement._instances is None:
        requirement._instances = _instance_calls(requirement.views, by_key, requirement._stored)
    return requirement._instances.get(cls.name, [])


def passed_tensors(requirement: "GradRequirement", expr: ast.expr, at: Located) -> bool:
    """``expr`` is a parameter of its function, not rebound, that every call of the function
    this module shows (:meth:`GradRequirement._calls_of`: its instance's ``__call__`` and methods too) passes a
    tensor, and each call from the run's other files too (their ``args_tensor``): iterating it
    hands out the views of ``unbind(0)`` (``for t, m, s in zip(tensor, mean, std)`` in a
    transform's ``__call__``). Unknown callers, ``*args``, a missing argument: not known."""
    if not isinstance(expr, ast.Name):
        return False
    bindings = requirement.views._plain_bindings(expr.id, at)
    func = requirement.tree.owner(at)
    if len(bindings) != 1 or bindings[0].form != "param" or not isinstance(func, FUNCTIONS):
        return False
    method = isinstance(requirement.tree.parent(func), ast.ClassDef)
    plain = _passed_parameters(func, method)
    position = plain.index(expr.id) if expr.id in plain else None
    calls = requirement._calls_of(func, method)
    for call in calls:
        if spreads(call):
            return False
        passed = passed_for(call, expr.id, position)
        if passed is None or requirement.kinds.kind(passed) not in TENSORISH:
            return False
    elsewhere = _tensors_elsewhere(requirement, func, expr.id, position)
    return (bool(calls) or bool(elsewhere)) and all(elsewhere)

def _tensors_elsewhere(requirement: "GradRequirement", func: Function, key: str, position: Optional[int]) -> List[bool]:
    """For each call of ``func`` from the run's other files (the project index), whether its
    analysis showed a tensor passed for ``key`` (a reference, never followed, is not)."""
    calls = requirement.grad.calls
    project = calls.project if calls is not None else None
    qualname = calls.qualname(func) if calls is not None else None
    if project is None or qualname is None:
        return []
    method = isinstance(requirement.tree.parent(func), ast.ClassDef)
    module = qualname.rsplit(".", 2 if method else 1)[0]
    bound = calls is not None and instance_calls_count(calls, func)
    return [passes_tensor(call, key, position, method)
            for call in project.calls_from_elsewhere(qualname, module) if bound or not call.bound]


def own_callee(views: "Views", call: ast.Call, extended: Set[str]) -> Optional[Function]:
    """The function a call runs, where the file shows it alone: a module-level function bound
    once, or ``self.m(...)`` of a method ``m`` defined in the caller's class, which no class of
    the file extends (``extended``: the names of the file's base classes) and no ``self.m = ...``
    replaces; undecorated either way."""
    func, module = call.func, views.tree.module
    if isinstance(func, ast.Name):
        bound = views.binder.flow(module, nested=False).bindings.get(func.id, [])
        if len(bound) != 1 or not isinstance(bound[0].stmt, FUNCTIONS) or views.tree.parent(bound[0].stmt) is not module \
                or bound[0].stmt.decorator_list:
            return None
        return bound[0].stmt
    static = views.classes.static_function(func)
    if static is not None:
        return static  # `C.f(x)` / `self.f(x)` of a class body's `f = staticmethod(f)`
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return None
    cls = views.tree.enclosing_class(call)
    if cls is None or func.attr in views.classes.class_attrs(cls):
        return None
    if cls.name in extended:
        return None
    found = [f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == func.attr]
    return found[0] if len(found) == 1 and not found[0].decorator_list else None


def callee_returns(views: "Views", call: ast.Call) -> Optional[List[Tuple[Function, List[ast.Return]]]]:
    """The functions ``call`` may run, each with its returns but those computed with grad off
    (:func:`_grad_off_return`), where the file shows every one: its own callee (``own_callee``), or
    the ``def``s of the calling function's enclosing function that bind the name called (a closure:
    ``def _do_it(t): return helper(model, t)``; where each binding of it that reaches the call is
    such a ``def``, undecorated, or a ``None`` a call would fail on). None where a callee or a
    return is not seen (a generator, a bare ``return``, another return with grad off)."""
    if spreads(call):
        return None
    own = own_callee(views, call, views.returned.extended())
    funcs: List[Function] = [own] if own is not None else []
    if own is None and isinstance(call.func, ast.Name):
        owner = views.tree.owner(call)
        bindings = views.dataflow.reaching(views.binder.flow(owner), call.func.id, views.tree.statement_of(call)) \
            if isinstance(owner, FUNCTIONS) else []
        funcs = [b.stmt for b in bindings if isinstance(b.stmt, FUNCTIONS) and not b.stmt.decorator_list]
        if any(not isinstance(b.stmt, FUNCTIONS) and not (b.form == "assign" and is_const(b.value, None))
               for b in bindings):
            return None
    found = []
    for func in funcs:
        returns = [n for n in views.tree.walk(func) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await))
                   and views.tree.owner(n) is func]
        if not returns or any(not isinstance(r, ast.Return) or r.value is None for r in returns):
            return None
        kept = [r for r in cast(List[ast.Return], returns) if not _grad_off_return(views, r)]
        if any(views.grad.intended_reason(r, None) for r in kept):
            return None
        found.append((func, kept))
    return found or None


# Tensor methods that, run with grad off, may hand back their receiver itself or a view of it, which
# keeps its ``requires_grad`` (measured: ``x.float()``, ``x.contiguous()``, ``x.to(...)``, ``x[0]``,
# ``x.view(n)``, ``x.reshape(n)``, ``x.expand(...)``)
_KEEPS_GRAD_OFF = frozenset(SHAPE_METHODS) | {"requires_grad_", "view_as", "reshape_as", "expand_as", "as_strided",
                                              "detach_", "T", "mT", "H", "mH"}


def _grad_off_return(views: "Views", ret: ast.Return) -> bool:
    """``ret`` sits in a ``with torch.no_grad():`` block of its function and returns what a call or
    an operator computes there (``return model(x)``, ``return model(x) * 2``): a new tensor that
    requires no grad (measured), wherever the function is. Not a name, an attribute, an item, a
    method that may hand back its receiver or a view of it (``t.float()``, ``t.view(n)``, ``t.add_(1)``)."""
    value = ret.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and (value.func.attr in _KEEPS_GRAD_OFF or value.func.attr.endswith("_")):
        return False
    return isinstance(value, (ast.Call, ast.BinOp, ast.UnaryOp)) and views.making._made_without_grad(ret)


def _ruled_out(views: "Views", func: Function, call: ast.Call, ret: ast.Return) -> bool:
    """``ret`` sits on a branch of ``if p == 'C':`` (or ``!=``; ``p`` a parameter of ``func``
    never rebound) that ``call``'s constant string for ``p`` does not take, or in the body of
    ``if torch.jit.is_scripting():`` (the ``else`` of ``if not ...``), which never runs eagerly."""
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)}
    bound = views.binder.flow(func).bindings
    method = isinstance(views.tree.parent(func), ast.ClassDef)
    plain = _passed_parameters(func, method)
    child: ast.AST = ret
    for anc in views.tree.ancestors(ret):
        if anc is func:
            return False
        test = anc.test if isinstance(anc, ast.If) else None
        scripting = _scripting_test(views, test) if test is not None else None
        if scripting is not None and any(s is child for s in cast(ast.If, anc).body) == scripting:
            return True  # `if torch.jit.is_scripting(): return x`: never taken eagerly
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq)) \
                and isinstance(test.left, ast.Name) and test.left.id in params \
                and all(b.form == "param" for b in bound.get(test.left.id, [])) \
                and isinstance(test.comparators[0], ast.Constant) and isinstance(test.comparators[0].value, str):
            key = test.left.id
            passed = passed_for(call, key, plain.index(key) if key in plain else None)
            if isinstance(passed, ast.Constant) and isinstance(passed.value, str):
                taken = (passed.value == test.comparators[0].value) == isinstance(test.ops[0], ast.Eq)
                in_body = any(s is child for s in cast(ast.If, anc).body)
                if taken != in_body:
                    return True
        child = anc
    return False


def _scripting_test(views: "Views", test: ast.expr) -> Optional[bool]:
    """``torch.jit.is_scripting()`` (True) or ``not torch.jit.is_scripting()`` (False): a test
    whose body runs only under TorchScript (resp. only eagerly); None for any other test. Eagerly
    ``is_scripting()`` is False (and TorchScript runs no custom autograd Function)."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    call = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if isinstance(call, ast.Call) and not call.args and not call.keywords \
            and views.names.torch_name(call.func) == "torch.jit.is_scripting":
        return not negated
    return None


def _defines(cls: ast.ClassDef, name: str) -> bool:
    """The class body defines a method ``name`` itself."""
    return any(isinstance(f, FUNCTIONS) and f.name == name for f in cls.body)


def _others_own(views: "Views", cls: ast.ClassDef, name: str) -> int:
    """How many reads of ``self.<name>`` are in other classes that define a method ``name``
    themselves: theirs (or an override's), never ``cls``'s."""
    count = 0
    for node in views.tree.source.walked(ast.Name):
        if isinstance(node, ast.Attribute) and node.attr == name and isinstance(node.ctx, ast.Load) \
                and isinstance(node.value, ast.Name) and node.value.id == "self":
            owner = views.tree.enclosing_class(node)
            if owner is not None and owner is not cls \
                    and any(isinstance(f, FUNCTIONS) and f.name == name for f in owner.body):
                count += 1
    return count


def _built(value: object) -> Optional[str]:
    """``C`` for ``C(...)``: the name of the class (or function) a call of a plain name makes."""
    return value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else None


def _name_values(views: Views, name: str, call: ast.Call, stored: Dict[str, int]) -> List[object]:
    """What ``name`` holds at ``call``: the values of its bindings reaching the call in its
    function, or, where the function binds no such name, of the module's one binding of it (an
    instance built once at module level, ``norm = Normalizer(...)``, and bound nowhere else)."""
    values: List[object] = [b.value for b in views._plain_bindings(name, call)]
    if values or name in views.binder.flow(views.tree.owner(call)).bindings:
        return values
    module = views.tree.module
    bound = views.binder.flow(module, nested=False).bindings.get(name, [])
    if len(bound) != 1 or stored.get(name) != 1 or bound[0].form != "assign" or views.tree.owner(bound[0].stmt) is not module:
        return []
    return [bound[0].value]


def _instance_method_calls(views: Views, by_key: Dict[Optional[str], List[ast.Call]], cls: str, method: str,
                          stored: Dict[str, int]) -> List[ast.Call]:
    """The calls ``inst.method(...)`` of the module on an instance of the class named ``cls``:
    ``inst`` a name (the module assigns it) or ``self.attr`` bound only to ``cls(...)``."""
    found: List[ast.Call] = []
    for key, calls in by_key.items():
        if key is None or not key.endswith(f".{method}") or key == f"self.{method}":
            continue
        for call in calls:
            receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
            values: List[object] = []
            if isinstance(receiver, ast.Name) and receiver.id in stored:
                values = _name_values(views, receiver.id, call, stored)
            elif isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) \
                    and receiver.value.id == "self":
                owner = views.tree.enclosing_class(receiver)
                values = list(views.classes.class_attrs(owner).get(receiver.attr, [])) if owner is not None else []
            if values and all(_built(v) == cls for v in values):
                found.append(call)
    return found


def _instance_calls(views: Views, by_key: Dict[Optional[str], List[ast.Call]],
                    stored: Dict[str, int]) -> Dict[str, List[ast.Call]]:
    """The calls of the module (``by_key``: its calls by callee key) through an instance of a
    class, by the class's name: ``C(...)(x)``, and a name or ``self.attr`` bound only to
    ``C(...)``. One pass over the module's calls (each ``forward`` asked about scanned them all,
    following every called name's bindings: quadratic in a library module's classes); the
    bindings of a called name only where the module assigns it (``stored``: a binding with a
    value is a ``Name`` target), not of ``len`` or an imported function."""
    found: Dict[str, List[ast.Call]] = {}
    for calls in by_key.values():
        for call in calls:
            callee = call.func
            built: Optional[str] = None
            if isinstance(callee, ast.Call):
                built = _built(callee)
            elif isinstance(callee, ast.Name) and callee.id in stored:
                names = {_built(x) for x in _name_values(views, callee.id, call, stored)}
                built = names.pop() if len(names) == 1 else None
            elif isinstance(callee, ast.Attribute) and isinstance(callee.value, ast.Name) \
                    and callee.value.id == "self":
                owner = views.tree.enclosing_class(callee)
                values = views.classes.class_attrs(owner).get(callee.attr, []) if owner is not None else []
                names = {_built(v) for v in values}
                built = names.pop() if len(names) == 1 else None
            if built is not None:
                found.setdefault(built, []).append(call)
    return found


# einops functions whose result is computed from their first argument alone (a tensor; the pattern
# and axis lengths are no tensors): it requires grad only when that argument does.
_EINOPS_PASSING = frozenset({"einops.rearrange", "einops.repeat", "einops.reduce"})
# Attributes of a tensor that carry no data of it (metadata), and a tensor's non-differentiable parts.
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad", "data", "grad",
                       "grad_fn", "names", "is_leaf", "indices"})


def fresh_items(inputs: "InputFlow", func: Function) -> Optional[Tuple[str, ...]]:
    """What of ``func``'s value is fresh, for the project index (``FunctionFact.fresh_returns``):
    ``("*",)`` where each return is (``InputFlow._fresh_returns``: computed with grad off, or from
    nothing it is handed), else the indices of the items of the tuples it returns (each return a
    tuple display of one length) that are; None where none is, or a return is not seen."""
    returns = [n for n in inputs.tree.walk(func) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await))
               and inputs.tree.owner(n) is func]
    if not returns or any(not isinstance(r, ast.Return) or r.value is None for r in returns):
        return None
    kept = [r for r in cast(List[ast.Return], returns) if not _grad_off_return(inputs.views, r)]
    if any(inputs.grad.intended_reason(r, None) for r in kept):
        return None
    gaps = inputs._gaps
    try:
        if inputs._fresh_returns(func, kept, None):
            return ("*",)
        lengths = {len(r.value.elts) if isinstance(r.value, ast.Tuple) and not any(
            isinstance(e, ast.Starred) for e in r.value.elts) else -1 for r in kept}
        if len(lengths) != 1 or -1 in lengths:
            return None
        found = tuple(str(i) for i in range(lengths.pop()) if inputs._fresh_returns(func, kept, i))
        return found or None
    finally:
        inputs._gaps = gaps


def imported_fresh(views: "Views", call: ast.Call, element: Optional[int]) -> bool:
    """``call`` runs a module-level function of another file of the project, imported by name
    (``from .utils import get_bert_embedding``) and bound to nothing else in this file, whose
    value (its item ``element``, where the caller unpacks it) is fresh there
    (``FunctionFact.fresh_returns``: computed under ``torch.no_grad()``, from nothing handed in)."""
    func, calls = call.func, views.grad.calls
    project = calls.project if calls is not None else None
    if calls is None or project is None or not isinstance(func, ast.Name) or spreads(call):
        return False
    owner = views.tree.owner(call)
    if isinstance(owner, FUNCTIONS) and views.dataflow.reaching(
            views.binder.flow(owner), func.id, views.tree.statement_of(call)):
        return False  # bound in the function (a parameter, a local)
    bound = views.binder.flow(views.tree.module).bindings.get(func.id, [])
    if not bound or any(not isinstance(b.stmt, (ast.Import, ast.ImportFrom)) for b in bound):
        return False  # bound otherwise too: which one runs is not seen
    qualname = project.imported(calls.module_name, func.id)
    if qualname is None:
        return False
    name = project.canonical(qualname)
    defined = project.defined_in.get(name)
    fresh = project.modules[defined].returns_fresh(name) if defined is not None else None
    return fresh is not None and ("*" in fresh or element is not None and str(element) in fresh)


class InputFlow(_ViewsPart):
    """Whether a value is computed from what its function was handed: an argument (a loss's
    prediction, a metric's input, a block's activation, a field of a model's output).

    The positive evidence of grad that an own-gradient save needs where no parameter or
    ``requires_grad=True`` tensor is seen (issue 24): a function's tensor input is what its caller
    computed, and the callers of a library function (a loss, a metric, a post-processing step) may
    hand it an activation. Followed through any op on the value (a torch op the analysis knows to
    be differentiable, a method of the value, an attribute or item of it, the first positional
    argument of a call it cannot see into), and into a fresh tensor that such a value is written
    into (``c = torch.zeros(n); c[k] = x.mean(0)``). Not an input: ``self`` and what the object
    holds (``self.state._log_weights``: state, not an argument), fresh tensors (``ones_like(i)``),
    ``.detach()``/``.data``, integer results (``argmax``, comparisons), values known to be Python
    numbers, a parameter every call of which this analysis sees (in the file) passes a value that
    requires no grad, a parameter of a function that calls a torch op with ``out=`` (written for
    grad-off code: such an op raises on what requires grad), and a closure's parameter (its calls are its enclosing function's, not
    followed: ESMFold's chunked ``_inference_forward`` helpers, a hook handed a gradient)."""

    def __init__(self, views: "Views") -> None:
        super().__init__(views)
        self._params: Dict[Tuple[int, str], bool] = {}
        self._callees: Set[int] = set()  # the own functions whose returns are being read (``_own_fresh``)
        self._fresh: Dict[Tuple[int, Optional[int]], Tuple[bool, int]] = {}  # (callee, item): fresh?, gaps met
        self._gaps, self._probing = 0, 0  # what the search could not see; own returns being read
        self._unsure_params: Set[Tuple[int, str]] = set()  # no input only by policy (a closure, `out=`)
        self.handed: Optional[Callable[[ast.expr], Optional[List[ast.expr]]]] = None  # the model's summaries.handed_values

    def derived(self, expr: ast.expr, at: Located) -> bool:
        """``expr`` (evaluated at ``at``) is computed from a tensor argument of its function."""
        return self._from(expr, at, set())

    def _gap(self) -> bool:
        """The search cannot see there: no evidence, and no proof that nothing is computed from an argument."""
        self._gaps += 1
        return False

    def _from(self, expr: ast.expr, at: Located, seen: Set[int]) -> bool:
        if id(expr) in seen:
            return False
        if len(seen) > 200:
            return self._gap()
        seen.add(id(expr))
        if isinstance(expr, ast.Name):
            return self._name(expr, at, seen)
        if isinstance(expr, ast.Attribute):
            if expr.attr in _METADATA:
                return False
            if isinstance(expr.value, ast.Name) and expr.value.id == "self":
                return self._held(expr, seen)
            return self._from(expr.value, at, seen)
        if isinstance(expr, ast.Subscript):
            return self._from(expr.value, at, seen)
        if isinstance(expr, ast.BinOp):
            return self._from(expr.left, at, seen) or self._from(expr.right, at, seen)
        if isinstance(expr, ast.UnaryOp):
            return not isinstance(expr.op, ast.Not) and self._from(expr.operand, at, seen)
        if isinstance(expr, ast.IfExp):
            return self._from(expr.body, at, seen) or self._from(expr.orelse, at, seen)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return any(self._from(e, at, seen) for e in expr.elts if not isinstance(e, ast.Starred))
        if isinstance(expr, ast.Call):
            return self._call(expr, at, seen)
        return False if isinstance(expr, (ast.Constant, ast.Compare, ast.JoinedStr)) else self._gap()

    def _call(self, call: ast.Call, at: Located, seen: Set[int], element: Optional[int] = None) -> bool:
        """``call``'s result (its item ``element`` where the caller unpacks it) is computed from an argument."""
        if self.views.making._made_without_grad(call) or self.kinds.calls.is_factory(call):
            return False
        func = call.func
        name = self.names.torch_name(func)
        if name is not None:
            short = name.rsplit(".", 1)[-1]
            if short in _NOT_DIFFERENTIABLE:
                return False
            if not (_differentiable(short) or name in torch_api.MULTI_VIEW_FUNCTIONS):
                return self._gap()  # (`torch.linalg.eigh`: not known to be differentiable, nor known not to be)
            operands = differentiable_operands(call, short, False)  # (not the dim, index or mask of `torch.gather`)
            return any(self._from(a, at, seen) for a in (call_args(call) if operands is None else operands))
        if isinstance(func, ast.Attribute):
            if func.attr in _NOT_DIFFERENTIABLE or func.attr in ("detach_", "new_zeros", "new_ones", "new_empty",
                                                                  "new_full", "new_tensor", "zero_"):
                return False
            receiver = not (isinstance(func.value, ast.Name) and func.value.id == "self")
            if receiver and self._from(func.value, at, seen):
                return True  # a method of the value: `x.float()`, `x.mean(0)`, `probs.values`
            if receiver and func.attr in SHAPE_METHODS:
                return False  # `fill.expand_as(src)`, `x.view(n, -1)`: the arguments give a shape, a dtype or a dim
            operands = differentiable_operands(call, func.attr, True) if receiver else None
            if operands is not None:  # `out.scatter_reduce_(dim, index, src)`: the source, not the dim or index
                return any(self._from(a, at, seen) for a in operands[1:])
        if self._own_fresh(call, element, seen):
            return False  # `self._load_noise(lengths, n)`: the file's own callee returns no such value
        if imported_fresh(self.views, call, element):
            return False  # `emb = get_embedding(model, x)` of another file, run under `torch.no_grad()` there
        if _held_callable(self, func) and not _handed_torch_modules(self, func):
            return self._gap()  # `self.noise_funct(w)`: whatever the object was handed (torch.randn_like?): unknown
        # a call the analysis cannot see into (a helper, `self.w_func(g)`): what it is handed first
        first = call.args[0] if call.args and not isinstance(call.args[0], ast.Starred) else None
        if self._probing:  # reading an own callee's returns: from whatever the call is handed, unless
            if self.kinds.kind(func) is Kind.MODULE and not self._plain_module(func):  # a module may add grad
                return self._gap()
            return any(self._from(a, at, seen) for a in (*call.args, *(k.value for k in call.keywords)))
        return first is not None and self._from(first, at, seen)

    def _own_fresh(self, call: ast.Call, element: Optional[int], seen: Set[int]) -> bool:
        """``call`` runs the file's own function (``self._load_noise(lengths, n)``; a closure's ``def``s,
        :func:`callee_returns`), each of whose returns hands back a value (item ``element`` of a tuple
        display, where the caller unpacks it) that is computed from no argument nor anything the object
        was handed and is not known to require grad: a fresh sample, what a data loader yields, what is
        computed with grad off (``with torch.no_grad(): return model(x)``). False where a return may be so
        computed, requires grad (a sample through a module with parameters), or is not seen (a
        generator, a bare ``return``, a tuple built elsewhere, the function asked about already,
        too long a search): the first argument then stands for what the result is computed from."""
        found = callee_returns(self.views, call)
        if found is None or any(id(func) in self._callees for func, _ in found):
            return found is not None and self._gap()
        return all(self._fresh_returns(func, returns, element) for func, returns in found)

    def _fresh_returns(self, func: Function, returns: List[ast.Return], element: Optional[int]) -> bool:
        memo = (id(func), element)
        if memo not in self._fresh:
            values = [cast(ast.expr, r.value) for r in returns]
            if element is not None:
                if any(not isinstance(v, (ast.Tuple, ast.List)) or element >= len(v.elts)
                       or any(isinstance(e, ast.Starred) for e in v.elts) for v in values):
                    return self._gap()
                values = [cast(ast.Tuple, v).elts[element] for v in values]
            before, local = self._gaps, cast(Set[int], set())  # its own search: a caller's visits are no answer
            self._callees.add(id(func))
            self._probing += 1
            try:
                derived = any(self._from(v, r, local) for v, r in zip(values, returns))
            finally:
                self._callees.discard(id(func))
                self._probing -= 1
            grad = not derived and any(self.views.requirement.requires_grad(v, r) == "yes" for v, r in zip(values, returns))
            self._fresh[memo] = (not derived and not grad, self._gaps - before)  # (grad: `GEN(z)`, a module's output)
        fresh, gaps = self._fresh[memo]
        self._gaps += gaps
        return fresh and not gaps

    def _plain_module(self, func: ast.expr) -> bool:
        """``self.resampler`` bound only to instances of a class of this file that owns no parameters."""
        cls = self.tree.enclosing_class(func)
        values = self.classes.class_attrs(cls).get(func.attr, []) if cls is not None and isinstance(func, ast.Attribute) \
            and isinstance(func.value, ast.Name) and func.value.id == "self" else []
        trained = self.views.trained
        classes = [trained.module_class(v.func.id) if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) else None
                   for v in values]
        return bool(classes) and all(c is not None and not trained.parametric_class(c, set()) for c in classes)

    def _name(self, name: ast.Name, at: Located, seen: Set[int]) -> bool:
        if self.kinds.kind(name) in (Kind.SCALAR, Kind.OTHER, Kind.MODULE):
            return False
        for b in self.views._plain_bindings(name.id, at):
            if b.form == "param":
                if self._param(b, name.id):
                    return True
                if (id(b.stmt), name.id) in self._unsure_params:
                    self._gap()
            elif b.form in ("assign", "ann") and b.value is not None:
                if self.views.making._made_without_grad(b.stmt) and not isinstance(b.value, ast.Name):
                    continue
                if self._from(b.value, b.stmt, seen) or self._written_into(name.id, b, at, seen):
                    return True
            elif isinstance(b.stmt, ast.Assign) and b.form == "other":
                if self._unpacked(b.stmt, name.id, seen):
                    return True  # `_affine, *_ = convert(affine[:r, :r])`
            elif isinstance(b.stmt, (ast.For, ast.AsyncFor)):
                iterable = iterable_of(b.stmt, name.id)
                if iterable is not None and self._from(iterable, b.stmt, seen):
                    return True
                if iterable is None:
                    self._gap()
            elif b.form not in ("assign", "ann"):
                self._gap()  # bound by what the search does not follow (`with`, an unpacked loop item)
        return False

    def _unpacked(self, stmt: ast.Assign, key: str, seen: Set[int]) -> bool:
        """``noise, noise_len = self._load_noise(lengths, n)``: the call's item that ``key`` takes
        is computed from an argument (the whole value, where the item is not known)."""
        value, target = stmt.value, stmt.targets[0] if len(stmt.targets) == 1 else None
        if not isinstance(value, ast.Call) or not isinstance(target, (ast.Tuple, ast.List)) \
                or any(isinstance(e, ast.Starred) for e in target.elts):
            return self._from(value, stmt, seen)
        element = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == key), None)
        mark = id(value) * 64 + 1 + (element if element is not None and element < 63 else 62)  # per item: no object id
        if element is None or mark in seen or len(seen) > 200:
            return self._from(value, stmt, seen) if element is None else False
        seen.add(mark)
        return self._call(value, stmt, seen, element)

    def _held(self, attr: ast.Attribute, seen: Set[int]) -> bool:
        """``self.factors`` where the class only ever assigns it a parameter of its ``__init__``
        (``self.factors = factors``): the object holds what its creator handed it, an input
        like an argument. Anything else the object holds (``self.state = State(n)``, a fresh
        tensor, a value computed in a method) is its own state: not an input."""
        cls = self.tree.enclosing_class(attr)
        values = self.classes.class_attrs(cls).get(attr.attr, []) if cls is not None else []
        if not values:
            return False
        for value in values:
            if not isinstance(value, ast.Name):
                return False
            init = self.tree.owner(value)
            if not (isinstance(init, FUNCTIONS) and init.name == "__init__" and self.tree.parent(init) is cls):
                return False
            bound = self.views._plain_bindings(value.id, self.tree.statement_of(value))
            if not bound or any(b.form != "param" for b in bound):
                return False
            if id(value) in seen or not all(self._param(b, value.id) for b in bound):
                return False
            if cls is not None and configuration(self.views, init, cls, value.id):
                return False  # `self.tau = tau` of `tau=1.0`, or of `LMPrior(gen, 2.0)`: a setting, not an input
        return True

    def _written_into(self, key: str, b: Binding, at: Located, seen: Set[int]) -> bool:
        """A fresh tensor bound to ``key`` and written with such a value in its function
        (``centroids[k] = cluster.mean(0)``, ``acc += x``), by a write that may run before
        ``at``: one above it, or in a loop around both (a write below, outside such a loop,
        cannot have given the value at ``at`` its grad)."""
        if not (isinstance(b.value, ast.Call) and self.kinds.calls.is_factory(b.value)):
            return False
        loops = [a for a in self.tree.ancestors(at) if isinstance(a, (ast.For, ast.AsyncFor, ast.While))]
        for node in self.tree.walk(self.tree.owner(b.stmt)):
            if isinstance(node, (ast.Assign, ast.AugAssign)) and (node.lineno, node.col_offset) >= (at.lineno, at.col_offset) \
                    and not any(within(node, loop) for loop in loops):
                continue
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Subscript) and target_key(t.value) == key for t in node.targets):
                if self._from(node.value, node, seen):
                    return True
            elif isinstance(node, ast.AugAssign) and target_key(
                    node.target.value if isinstance(node.target, ast.Subscript) else node.target) == key:
                if self._from(node.value, node, seen):
                    return True
        return False

    def _param(self, b: Binding, key: str) -> bool:
        """A tensor argument of the function: not ``self``/``cls``, and not a parameter whose every
        call this module shows (with grad on) passes a value that requires no grad."""
        memo = (id(b.stmt), key)
        if memo not in self._params:
            self._params[memo] = False  # asked again while being answered: not shown
            self._params[memo] = self._param_now(b, key)
        return self._params[memo]

    def _param_now(self, b: Binding, key: str) -> bool:
        func = self.tree.owner(b.stmt)
        if not isinstance(func, FUNCTIONS) or any(isinstance(a, FUNCTIONS) for a in self.tree.ancestors(func)):
            # a closure is called only by its enclosing function (or whoever that hands it to:
            # a hook's argument is a gradient), whose calls are not followed: nothing shows more
            self._unsure_params.add((id(b.stmt), key))
            return False
        if any(isinstance(n, ast.Call) and any(k.arg == "out" for k in n.keywords) and self.names.torch_name(n.func)
               for n in self.tree.walk(func)):
            # a torch op with `out=` raises on arguments that require grad (with grad on): the
            # function is written for grad-off code (linear_operator's linear_cg)
            self._unsure_params.add((id(b.stmt), key))
            return False
        args = func.args
        plain = [a.arg for a in (*args.posonlyargs, *args.args)]
        method = isinstance(self.tree.parent(func), ast.ClassDef)
        if method and plain[:1] == [key] and not any(
                isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list):
            return False  # `self` / `cls`: the object, not an input
        plain = _passed_parameters(func, method)
        position = plain.index(key) if key in plain else None
        requirement = self.views.requirement
        calls = [c for c in requirement._calls_of(func, method) if not self.grad.intended_reason(c, None)]
        if not calls:
            return True
        for call in calls:
            if spreads(call):
                return True
            passed = passed_for(call, key, position)
            if passed is None or requirement.requires_grad(passed, self.tree.statement_of(call)) != "no":
                return True
        # every call in the file passes what requires no grad (constants, fresh tensors): an input
        # only where a call in the run's other files passes what requires grad
        return "yes" in requirement._passed_elsewhere(func, key, position)


def _held_callable(inputs: InputFlow, func: ast.expr) -> bool:
    """``self.fn`` where the class defines no method ``fn`` and assigns it only callables it
    does not build (an ``__init__`` parameter, a function reference, a lambda): what calling
    it returns is unknown (a fresh sample as much as its argument's function), so it is no
    evidence of grad. A method, or a module built in the class (``self.fc = nn.Linear(..)``),
    stays followed."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self"):
        return False
    cls = inputs.tree.enclosing_class(func)
    if cls is None or any(isinstance(s, FUNCTIONS) and s.name == func.attr for s in cls.body):
        return False
    values = inputs.classes.class_attrs(cls).get(func.attr, [])
    return bool(values) and all(isinstance(v, (ast.Name, ast.Attribute, ast.Lambda)) for v in values)


def _handed_torch_modules(inputs: InputFlow, func: ast.expr) -> bool:
    """``self.fn`` for which every construction of its class, in this file or another of the run,
    passes a torch module it builds (``Embedder(nn.Linear(d, 1))``, ``sparse_linear = nn.Linear(d,
    1)`` handed on by name): calling it runs that module, whose output is computed from what it is
    handed (or from its parameters), as a module built in the class is followed. A value of any
    other kind (a function, a lambda, a class of the project, something unseen) leaves it unknown."""
    values = inputs.handed(func) if inputs.handed is not None else None
    return bool(values) and all(
        isinstance(v, Foreign) and v.what.startswith("torch-new:torch.nn.") and _module_class(v.what.rpartition(".")[2])
        or isinstance(v, ast.Call) and (name := inputs.names.torch_name(v.func) or "").startswith("torch.nn.")
        and _module_class(name.rpartition(".")[2]) for v in cast(List[ast.expr], values))


def _module_class(short: str) -> bool:
    """A torch module class's name (``Linear``), not a function's (``relu``) nor a tensor's (``Parameter``)."""
    return short[:1].isupper() and short not in ("Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer")


class TrainedClasses(_ViewsPart):
    """Classes whose methods compute what training differentiates: modules with parameters, distributions."""

    def __init__(self, views: "Views") -> None:
        super().__init__(views)
        self._parametric: Dict[int, bool] = {}  # id of a class -> whether it owns parameters
        self._builders: Dict[int, bool] = {}  # id of a function -> whether it builds a parametric module
        self._cut = False  # the answer being worked out met a cycle or the depth limit
        self._closures: Dict[int, bool] = {}  # id of a nested function -> `_run_by_enclosing`

    def activation(self, at: Located) -> bool:
        """``at`` runs in the ``forward`` of a class of this module that owns parameters (a torch
        layer with parameters, an ``nn.Parameter``, such a class of the module, held directly or
        in a list, or inherited from a base of the module): what it computes from its inputs are
        activations of a trained module, taken to require grad."""
        func = self.tree.owner(at)
        if isinstance(func, FUNCTIONS) and self._run_by_enclosing(func, set()):
            # a closure `forward` calls runs where `forward` runs; not one of a helper method
            # `forward` runs, which may be a path taken with grad off only (ESMFold's
            # inference-only `_inference_forward`, chosen by a flag its callers set)
            outer = self.tree.owner(func)
            return isinstance(outer, FUNCTIONS) and (
                outer.name == "forward" and isinstance(self.tree.parent(outer), ast.ClassDef)
                or self._run_by_enclosing(outer, set())) and self.activation(func)
        cls = self.tree.parent(func) if isinstance(func, FUNCTIONS) else None
        if isinstance(func, FUNCTIONS) and isinstance(cls, ast.ClassDef) and self.distribution_class(cls, set()):
            return True  # a distribution's methods compute from the parameters inference differentiates
        if not isinstance(func, FUNCTIONS) or not isinstance(cls, ast.ClassDef) or not self.parametric_class(cls, set()):
            return False
        if func.name == "forward":
            return True
        # a method the forward itself runs (`self.proj(x)`, `fn = self._fc`), with grad on there
        forwards = [f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == "forward"]
        return any(isinstance(n, ast.Attribute) and n.attr == func.name and isinstance(n.value, ast.Name)
                   and n.value.id == "self" and not self.grad.local_reason(n)
                   for f in forwards for n in self.tree.walk(f))

    def _run_by_enclosing(self, func: Function, seen: Set[int]) -> bool:
        """``func`` is a closure (``def _inner_forward(x): ...`` in a ``forward``) that its enclosing
        function runs with grad on: the one function of its name there, never rebound, every
        reference to it a direct call or the function a ``torch.utils.checkpoint`` call runs
        (OpenMMLab's ``with_cp`` idiom), and one direct call at least, with grad on, made by the
        enclosing function itself or by another such closure. Handed to anything else (a hook, a
        list, an attribute), its callers are unseen; only checkpointed (which may save nothing:
        ``use_reentrant=False``), it proves nothing."""
        if id(func) in self._closures:
            return self._closures[id(func)]
        outer = self.tree.owner(func)
        if not isinstance(outer, FUNCTIONS) or id(func) in seen:
            return False
        found = self._closure_run(func, outer, seen | {id(func)})
        if not seen:
            self._closures[id(func)] = found  # (an answer inside a cycle depends on where it began)
        return found

    def _closure_run(self, func: Function, outer: Function, seen: Set[int]) -> bool:
        named = [n for n in self.tree.walk(outer) if isinstance(n, (*FUNCTIONS, ast.ClassDef)) and n.name == func.name]
        refs = [n for n in self.tree.walk(outer) if isinstance(n, ast.Name) and n.id == func.name]
        if named != [func] or any(not isinstance(n.ctx, ast.Load) for n in refs):
            return False
        running = False
        for ref in refs:
            call = self.tree.parent(ref)
            if not isinstance(call, ast.Call):
                return False
            if call.func is not ref:
                name = self.names.torch_name(call.func) or ""
                if not (name.endswith("checkpoint.checkpoint") and call.args and call.args[0] is ref):
                    return False
                continue
            caller = self.tree.owner(call)
            running = running or (not self.grad.intended_reason(call, None) and (
                caller is outer or isinstance(caller, FUNCTIONS) and self._run_by_enclosing(caller, seen)))
        return running

    def distribution_class(self, cls: ast.ClassDef, seen: Set[str]) -> bool:
        """A subclass of a probability distribution of torch or pyro (``TorchDistribution``,
        ``dist.Distribution``), directly or through a class of this module."""
        if cls.name in seen or len(seen) > 8:
            return False
        for base in cls.bases:
            if any(q.startswith(("torch.distributions.", "pyro.distributions.")) for q in self.names.qualified_names(base)):
                return True
            inner = self.module_class(base.id) if isinstance(base, ast.Name) else None
            if inner is not None and self.distribution_class(inner, seen | {cls.name}):
                return True
        return False

    def parametric_class(self, cls: ast.ClassDef, seen: Set[str]) -> bool:
        """Whether ``cls`` owns parameters; answered once per class (a class holding several of
        the next one was otherwise asked once per path: exponential in the nesting)."""
        known = self._parametric.get(id(cls))
        if known is not None:
            return known
        if self.tree.parent(cls) is not self.tree.module:
            return False
        if cls.name in seen or len(seen) > 8:
            self._cut = True  # a cycle or the depth limit: the answers above it are not final
            return False
        outer, self._cut = self._cut, False
        answer = self._parametric_now(cls, seen | {cls.name})
        if answer or not self._cut:
            self._parametric[id(cls)] = answer
        self._cut = outer or self._cut
        return answer

    def _parametric_now(self, cls: ast.ClassDef, seen: Set[str]) -> bool:
        for values in self.classes.class_attrs(cls).values():
            if Kind.PARAMETER in values:
                return True
        # a layer or parameter made anywhere in the class (`self.fc = nn.Linear(...)`, a helper
        # object building `nn.Parameter`s and registering them)
        calls = self.classes.calls_in(cls)
        if "self.register_parameter" in calls:
            return True
        if any(self._holds_parameters(c, seen) for found in calls.values() for c in found):
            return True
        return any(isinstance(b, ast.Name) and self.module_class(b.id) is not None
                   and self.parametric_class(cast(ast.ClassDef, self.module_class(b.id)), seen) for b in cls.bases)

    def _holds_parameters(self, value: ast.expr, seen: Set[str]) -> bool:
        if isinstance(value, (ast.List, ast.Tuple)):
            return any(self._holds_parameters(e, seen) for e in value.elts)
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            return self._holds_parameters(value.elt, seen)
        if not isinstance(value, ast.Call):
            return False
        name = self.names.torch_name(value.func) or ""
        if name in _PARAMETER or self.views.requirement._owns_parameters(value):
            return True
        if name.rsplit(".", 1)[-1] in ("ModuleList", "ModuleDict", "Sequential", "ParameterList"):
            return any(self._holds_parameters(a, seen) for a in call_args(value))
        cls = self.module_class(value.func.id) if isinstance(value.func, ast.Name) else None
        if cls is not None:
            return self.parametric_class(cls, seen)
        return self.imported_parametric(value.func) or self.built_parametric(value, seen)

    def imported_parametric(self, func: ast.expr) -> bool:
        """``Block`` of ``Block(...)``: a name bound only at the module's top level, to a class of
        another file of the run (or of an installed library) that owns parameters, as the project
        index has it from that file (``SummaryFact.parametric``)."""
        fact = self._imported_fact(func)
        return fact is not None and fact.of == "class" and fact.parametric

    def _imported_fact(self, func: ast.expr) -> Optional[SummaryFact]:
        """The index's summary of what the top-level name ``func`` is imported as (None: a local
        name, not imported, no summary)."""
        calls = self.grad.calls
        project = calls.project if calls is not None else None
        if calls is None or project is None or not isinstance(func, ast.Name) or self._bound_locally(func):
            return None
        qual = project.imported(calls.module_name, func.id)
        fact = project.summary(qual) if qual is not None else None
        if qual is None:
            qual = project.library_name(calls.module_name, func.id)
            fact = project.library(qual) if qual is not None else None
        return fact

    def built_parametric(self, call: ast.Call, seen: Set[str]) -> bool:
        """``build_mlp(...)``: a call of a builder function whose every return hands back a module
        that surely owns parameters (``analysis.builders``): one of this module (bound once at
        its top level), or of another file of the run as the index has it (``SummaryFact
        .parametric`` of a function). What calling the module returns requires grad."""
        func = call.func
        if isinstance(func, ast.Attribute):
            method = self._own_builder_method(func)
            return method is not None and func.attr not in seen and len(seen) <= 8 \
                and self.parametric_function(method, seen | {func.attr})
        if not isinstance(func, ast.Name) or func.id in seen or len(seen) > 8 or self._bound_locally(func):
            return False
        found = [s for s in self.tree.module.body if isinstance(s, FUNCTIONS) and s.name == func.id]
        if not found:
            fact = self._imported_fact(func)
            return fact is not None and fact.of == "function" and fact.parametric
        bound = self.binder.flow(self.tree.module, nested=False).bindings.get(func.id, [])
        return len(found) == 1 and len(bound) == 1 and self.parametric_function(found[0], seen | {func.id})

    def _own_builder_method(self, func: ast.Attribute) -> Optional[Function]:
        """``self._build_net`` (or ``cls.``) read in a method of a top-level class defining
        ``_build_net`` once, plain or as a static or class method, where no class of the file
        derives from it and the class binds no attribute of that name (no override in view)."""
        cls = self.tree.enclosing_class(func)
        if not (isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")) or cls is None \
                or self.tree.parent(cls) is not self.tree.module or func.attr in self.classes.class_attrs(cls):
            return None
        found = [f for f in cls.body if isinstance(f, FUNCTIONS) and f.name == func.attr]
        if len(found) != 1 or any(not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod"))
                                  for d in found[0].decorator_list):
            return None
        derived = any(isinstance(c, ast.ClassDef) and any(target_key(b) == cls.name for b in c.bases)
                      for c in self.tree.module.body)
        return None if derived else found[0]

    def parametric_function(self, func: Function, seen: Set[str]) -> bool:
        """Whether ``func`` is a builder of a module that surely owns parameters (once per function)."""
        if id(func) not in self._builders:
            self._builders[id(func)] = parametric_builder(
                func, self.names.torch_name, lambda c: self._holds_parameters(c, seen | {func.name}))
        return self._builders[id(func)]

    def module_class(self, name: str) -> Optional[ast.ClassDef]:
        """The class ``name`` defined once at the module's top level."""
        found = [c for c in self.tree.module.body if isinstance(c, ast.ClassDef) and c.name == name]
        return found[0] if len(found) == 1 else None


def _single_name_assign(node: ast.AST) -> TypeGuard[ast.Assign]:
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)


def _statements(body: Sequence[ast.stmt]) -> Iterable[ast.stmt]:
    """The statements of ``body`` and of the blocks inside it, in source order (not those of
    nested functions or classes: they run later, or elsewhere)."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for field in BODIES:
            yield from _statements(getattr(stmt, field, None) or [])
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _statements(handler.body)


def _keys(expr: Optional[ast.expr]) -> Tuple[str, ...]:
    """The names that hold ``expr``'s memory: its key, and ``h`` for ``h.data``."""
    key = target_key(expr) if expr is not None else None
    if not key:
        return ()
    return (key, key[: -len(".data")]) if key.endswith(".data") else (key,)


def _basic_index(index: ast.expr) -> bool:
    """An index that makes a view: ints, slices, ``...``, ``None`` (not tensors or lists)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    for part in parts:
        if isinstance(part, ast.Slice):
            continue
        if isinstance(part, ast.Constant) and (part.value is None or part.value is Ellipsis
                                               or isinstance(part.value, int)):
            continue
        if isinstance(part, ast.UnaryOp) and isinstance(part.operand, ast.Constant):
            continue
        return False
    return True


def _sometimes_view(value: ast.expr) -> bool:
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SOMETIMES


def _view_of_input(expr: ast.expr, inputs: Set[str]) -> bool:
    if isinstance(expr, ast.Name):
        return expr.id in inputs
    if isinstance(expr, ast.Subscript):
        return _basic_index(expr.slice) and _view_of_input(expr.value, inputs)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _ALWAYS:
        return expr.func.attr != "detach" and _view_of_input(expr.func.value, inputs)
    return False


def _view_made_in(expr: ast.expr, forward: ast.AST) -> bool:
    """``expr``, returned by a custom Function's ``forward``, is a view for sure of a tensor
    made there (``return flat.view(shape)``, or a name bound once in ``forward`` to one): PyTorch
    marks any output that is a view as made inside the Function (measured: ``y += 1`` on it
    raises where an input requires grad)."""
    if isinstance(expr, ast.Name):
        stores = [n for n in ast.walk(forward) if isinstance(n, ast.Name) and n.id == expr.id
                  and not isinstance(n.ctx, ast.Load)]
        bound = [n for n in ast.walk(forward) if isinstance(n, ast.Assign) and len(n.targets) == 1
                 and isinstance(n.targets[0], ast.Name) and n.targets[0].id == expr.id]
        if len(stores) != 1 or len(bound) != 1 or any(isinstance(a, ast.arg) and a.arg == expr.id
                                                      for a in ast.walk(forward)):
            return False
        expr = bound[0].value
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _ALWAYS \
        and expr.func.attr != "detach"


def filled_list_rg(part: GradRequirement, key: str, b: Binding, seen: Set[int]) -> RequiresGrad:
    """What the elements of the list ``key = [...]`` (``b``) require, with what its function
    appends to it (:func:`~codemod.analysis.requires_grad.list_appends`): ``outs = []``, then
    ``outs.append(self.fc(x))`` in a loop, then ``torch.stack(outs)``. "yes" where every element
    (of the literal, or appended) requires grad, "no" where none does, "unknown" where the list
    may change otherwise. (The literal alone, ``[]``, read "no" before: no element.)"""
    owner = part.tree.owner(b.stmt)
    appended = list_appends(part.tree, part.binder.flow, part.names.torch_name, key, owner)
    if appended is None or any(isinstance(e, ast.Starred) for e in cast(ast.List, b.value).elts):
        return "unknown"
    values = [(e, b.stmt) for e in cast(ast.List, b.value).elts] + appended
    if not values:
        return "no"  # `[]`, never filled
    answers = {part._rg(v, at, seen) for v, at in values}
    return answers.pop() if len(answers) == 1 else "unknown"


def _any(answers: Iterable[RequiresGrad]) -> RequiresGrad:
    """Any input requiring grad makes the result require it."""
    seen = list(answers)
    if "yes" in seen:
        return "yes"
    return "no" if all(a == "no" for a in seen) else "unknown"


def _all(answers: Iterable[RequiresGrad]) -> RequiresGrad:
    """One value that is one of several: known only when they agree."""
    seen = set(answers)
    return seen.pop() if len(seen) == 1 else "unknown"


def configuration(views: "Views", init: ast.FunctionDef | ast.AsyncFunctionDef, cls: ast.ClassDef, key: str) -> bool:
    """``key``, a parameter of ``cls``'s ``__init__``, is a setting rather than an input: its default
    is a Python number, bool or None (``lm_prior_tau=None``, onmt's LossCompute), or every
    construction of the class the file shows passes a Python number or what requires no grad
    (``LMPrior(gen, 2.0)``), the file showing them all (the class is only ever called by its name,
    no ``cls(...)`` inside it, no subclass in the file; one construction at least). Not a ``*``
    or ``**`` parameter (no default)."""
    default = default_of(init, key)
    if isinstance(default, ast.Constant) and (default.value is None or isinstance(default.value, (bool, int, float))):
        return True
    module = views.tree.module
    if any(isinstance(c, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == cls.name for b in c.bases)
           for c in module.body):
        return False
    uses = [n for n in views.tree.walk(module) if isinstance(n, ast.Name) and n.id == cls.name]
    sites = [views.tree.parent(n) for n in uses]
    if not uses or not all(isinstance(c, ast.Call) and c.func is n for c, n in zip(sites, uses)) or any(
            isinstance(n, ast.Call) and (isinstance(n.func, ast.Name) and n.func.id == "cls"
                                         or isinstance(n.func, ast.Call) and isinstance(n.func.func, ast.Name)
                                         and n.func.func.id == "type"
                                         or isinstance(n.func, ast.Attribute) and n.func.attr == "__class__")
            for n in views.tree.walk(cls)):
        return False
    plain = _passed_parameters(init, True)
    position = plain.index(key) if key in plain else None
    for call in cast(List[ast.Call], sites):
        passed = passed_for(call, key, position)
        if spreads(call) or passed is None or not (views.kinds.kind(passed) is Kind.SCALAR or views.requirement.requires_grad(
                passed, views.tree.statement_of(call)) == "no"):
            return False
    return True


def _passed_parameters(func: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> List[str]:
    """The positional parameters a call's arguments are matched with: a method's first one
    (``self``, a classmethod's ``cls``) is bound, except in a ``staticmethod``."""
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)]
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in func.decorator_list)
    return plain[1:] if method and not static else plain
