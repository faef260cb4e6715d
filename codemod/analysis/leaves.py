"""Leaves that require grad: tensors PyTorch refuses to update in place while grad is on
("a leaf Variable that requires grad is being used in an in-place operation").

Known: ``nn.Parameter`` values and attributes, ``.weight`` / ``.bias`` of a torch module
(``self.fc.weight``, ``conv.weight[:, 0]``), loop variables over ``.parameters()`` (and the
tensor of ``.named_parameters()``), names bound to a tensor created with
``requires_grad=True`` or ``.requires_grad_()``. Possible: ``.weight`` / ``.bias`` of something
the analysis cannot name.
"""

from __future__ import annotations

import ast
import weakref
from typing import Dict, FrozenSet, List, NamedTuple, Optional, Set, Tuple, Union, cast

from typing import TYPE_CHECKING

from codemod import torch_api
from codemod.analysis.binder import Binder, Binding
from codemod.analysis.branches import exclusive_until
from codemod.analysis.dataflow import VIEW_METHODS, Dataflow
from codemod.analysis.hooks import HookedOutputs
from codemod.analysis.kinds import PARAMETER_CLASSES, Kind
from codemod.analysis.requires_grad import switched_on_between
from codemod.analysis.syntax import (
    FUNCTIONS,
    OWNERS,
    Located,
    bound_names,
    is_const,
    span,
    subscript_base,
    target_key,
)
from codemod.analysis.tensor_kind import TensorKinds, tensor_test_failed
from codemod.analysis.tree import Tree

if TYPE_CHECKING:
    from codemod.analysis.calls import Calls
    from codemod.analysis.grad_mode import GradMode

_PARAMETER_ATTRS = ("weight", "bias")
_PARAMETER_ITERATORS = ("parameters", "named_parameters")


class LeafOrigin(NamedTuple):
    known: bool  # False: it may not require grad (the analysis cannot name its owner)
    what: str  # in words, for messages: "`self.fc.weight`, a parameter of a torch module"
    fresh: bool  # created in this function (not a parameter that lives on after it)
    chained: bool = False  # reached through modules the file builds (ModuleChains)
    hooked: bool = False  # a module's output a forward hook made a leaf: meant to stay in the graph (never no_grad)


class Leaves:
    """Whether the base of an in-place write is a leaf that requires grad."""

    def __init__(self, tree: Tree, binder: Binder, dataflow: Dataflow, kinds: TensorKinds,
                 calls: Optional["Calls"] = None, grad: Optional["GradMode"] = None) -> None:
        self.tree = tree
        self.grad = grad  # grad mode at the call sites of a function (chains through modules)
        self.calls = calls  # the module's call sites: a parameter a call hands a leaf
        self.binder = binder
        self.dataflow = dataflow
        self.kinds = kinds
        self._frozen: Optional[Dict[str, List[ast.stmt]]] = None  # key -> the statements turning it off
        self._asking: Set[Tuple[ast.expr, Located]] = set()  # views being followed (cycles)
        self._defs: Optional[Dict[str, List[ast.AST]]] = None  # name -> the functions and classes so named
        self.chains = ModuleChains(self)
        self.handed = HandedLeaves(self)
        self.hooked = HookedOutputs(tree, binder, dataflow, self.chains)

    def frozen(self) -> Dict[str, List[ast.stmt]]:
        """Keys the module turns requires_grad off for (``w.requires_grad_(False)``,
        ``w.requires_grad = False``, ``w.detach_()``), with the statements that do: such a tensor may not require
        grad when it is updated."""
        if self._frozen is None:
            found: Dict[str, List[ast.stmt]] = {}
            text = self.tree.source.text  # a screen (identifiers are NFKC-normalised: ASCII only)
            screen = "requires_grad" in text or "detach_" in text or not text.isascii()
            for node in _switches(self.tree) if screen else []:
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "requires_grad_" and node.args and is_const(node.args[0], False):
                    key = target_key(node.func.value)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "detach_" and not node.args and not node.keywords:
                    key = target_key(node.func.value)  # `h.detach_()`: no longer requires grad
                elif isinstance(node, ast.Assign) and is_const(node.value, False) and len(node.targets) == 1 \
                        and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "requires_grad":
                    key = target_key(node.targets[0].value)
                else:
                    continue
                # `self.heads[0].bias.requires_grad_(False)`: no key, but the module turns some off
                found.setdefault(key or "*", []).append(cast(ast.stmt, self.tree.statement_of(node)))
            self._frozen = found
        return self._frozen

    def _frozen_before(self, key: str, stmt: Located) -> bool:
        """``key``'s requires_grad may be off at ``stmt``: turned off anywhere but later in the
        same function (and not in a loop around both): ``E[:, 0::2] = ...`` then
        ``E.requires_grad = False`` still writes into a leaf that requires grad. A module turned
        off (``embedding.requires_grad_(False)``) turns off its parameters (``embedding.weight``)."""
        parts = key.split(".")
        frozen = self.frozen()
        offs = [off for i in range(len(parts), 0, -1) for off in frozen.get(".".join(parts[:i]), [])]
        if not offs:
            return False
        owner = self.tree.owner(stmt)
        line = getattr(stmt, "lineno", 0)
        loops = self.binder.flow(owner).loops
        for off in offs:
            if self.tree.owner(off) is not owner or off.lineno <= line:
                return True
            if any(start[0] <= off.lineno <= end[0] and start[0] <= line <= end[0] for start, end in loops):
                return True
        return False

    def origin(self, target: ast.expr, stmt: Located) -> Optional[LeafOrigin]:
        base = subscript_base(target)
        key = target_key(base)
        if key is None:
            return self._chained(target, stmt)
        if self._frozen_before(key, stmt):
            return LeafOrigin(False, f"`{key}`, whose requires_grad the code turns off", False)
        if tensor_test_failed(self.tree.parent, self.kinds.names.torch_name, base, stmt):
            return None  # `else: buf[i] = ...` of `if isinstance(buf, torch.Tensor):`: an item of a list
        if _frozen_class_tested(self, base, stmt):
            return None  # `if isinstance(param, Frozen): param.copy_(v)`: made with requires_grad=False
        if isinstance(target, ast.Subscript) and isinstance(base, ast.Name):
            listed = _listed_leaf(self, target, stmt)
            if listed is not None:
                return listed
        kind = self.kinds.kind(base)
        if kind is Kind.PARAMETER and _made_without_grad(self, base):
            return None  # `nn.Parameter(t, requires_grad=False)`: a leaf PyTorch lets one write into
        if kind is Kind.PARAMETER:
            frozen = isinstance(base, ast.Name) and self.handed.passed_frozen(base, stmt)
            return LeafOrigin(not self._handed_on(stmt) and not frozen, f"`{key}`, an nn.Parameter", False)
        if isinstance(base, ast.Attribute) and base.attr in _PARAMETER_ATTRS:
            owner = self.kinds.kind(base.value)
            if owner is Kind.MODULE and isinstance(base.value, ast.Attribute) \
                    and self.kinds.calls.member_values(base.value):
                owner = Kind.UNKNOWN  # `self.inner.fc.weight`: through the file's modules, as ModuleChains sees them
            if owner is Kind.MODULE:
                return LeafOrigin(not self._handed_on(stmt), f"`{key}`, a parameter of a torch module", False)
            if owner is Kind.UNKNOWN:
                return self._chained(target, stmt) or LeafOrigin(False, f"`{key}`, which may be a module's parameter", False)
            return None
        if isinstance(base, ast.Name):
            return self._name_origin(base, stmt)
        if isinstance(base, ast.Attribute) and kind is not Kind.TENSOR:
            return self._chained(target, stmt)
        return None

    def _chained(self, target: ast.expr, stmt: Located) -> Optional[LeafOrigin]:
        """A parameter reached through modules this file builds (:class:`ModuleChains`): known
        only where the module turns no requires_grad off and every way into the write's function
        is seen with grad on (init code is often called under ``no_grad`` by a library)."""
        what = self.chains.parameter(target, stmt)
        if what is None:
            return None
        owner = self.tree.owner(stmt)
        known = not self.frozen() and self.chains.entered_with_grad(owner, set())
        return LeafOrigin(known, what, False, True)

    def _handed_on(self, stmt: Located) -> bool:
        """The write's function is handed on rather than called (``self.apply(self._init_weights)``):
        who calls it, and whether under ``no_grad`` (libraries often do), is not seen."""
        func = self.tree.owner(stmt)
        if not isinstance(func, FUNCTIONS) or self.calls is None:
            return False
        if isinstance(self.tree.parent(func), ast.ClassDef):
            return func.name != "__init__" and self.chains.method_calls(func.name) is None
        return any(not s.called for s in self.calls.sites(func))

    def _name_origin(self, name: ast.Name, stmt: Located) -> Optional[LeafOrigin]:
        for anc in self.tree.ancestors(stmt):
            if isinstance(anc, OWNERS):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)):
                if _loop_over_parameters(anc, name.id):  # (not known where the file switches them off)
                    return LeafOrigin(not _switched_off(self, anc, name.id), f"`{name.id}`, a parameter (from `.parameters()`)", False)
                if bound_names(anc.target) == {name.id} and isinstance(anc.iter, (ast.Tuple, ast.List)) \
                        and anc.iter.elts and all(self._leaf_name(e, anc) for e in anc.iter.elts):
                    return LeafOrigin(True, f"`{name.id}`, one of tensors that require grad", False)
                if isinstance(anc.target, ast.Name) and anc.target.id == name.id and isinstance(anc.iter, ast.Name):
                    passed = self.handed.passed_varargs(anc, name.id, stmt)
                    if passed is not None:
                        return passed
        owner = self.tree.owner(name)
        flow = self.binder.flow(owner)
        reaching = self.dataflow.reaching(flow, name.id, stmt)
        only = len(reaching) == 1  # a leaf handed in or aliased is known only where nothing else reaches
        for binding in reaching:
            value = binding.value
            if binding.form == "param" and isinstance(owner, FUNCTIONS):
                passed = self.handed.passed_leaf(owner, name.id)
                if passed is not None:
                    return passed if only else passed._replace(known=False)
                continue
            if binding.form == "assign" and isinstance(value, (ast.Attribute, ast.Name)):
                aliased = self._followed(value, binding.stmt)  # `weights = self.input.weight`
                if aliased is not None:
                    return LeafOrigin(aliased.known and only, f"`{name.id}`, which is {aliased.what}", False)
                continue
            if binding.form != "assign" or not isinstance(value, ast.Call):
                continue
            if creates_leaf(value):
                return LeafOrigin(True, f"`{name.id}`, created with requires_grad=True", True)
            hooked = self.hooked.output_leaf(value, binding.stmt)
            if hooked is not None:  # known where nothing else reaches (`x += v` in a loop keeps the tensor)
                alone = _alone(self.tree, owner, binding, reaching, stmt)
                return LeafOrigin(alone, f"`{name.id}`, {hooked}", True, hooked=True)
            switched = self.handed.switched_on(name.id, binding.stmt, stmt)
            if switched is not None:
                fresh = self.handed.fresh(value, binding.stmt) and self.handed.written_constants_only(
                    name.id, binding.stmt, switched)
                what = f"`{name.id}`, made to require grad at line {switched.lineno}"
                if fresh:
                    return LeafOrigin(only, what, True)
                return LeafOrigin(False, f"{what} (a leaf if it did not require grad before)", False)
            func = value.func
            if isinstance(func, ast.Name) and self._returns_leaf(func.id):
                return LeafOrigin(True, f"`{name.id}`, made by `{func.id}()` with requires_grad=True", True)
            if isinstance(func, ast.Attribute) and func.attr in VIEW_METHODS and func.attr != "detach":
                # a view of a leaf (not `p.detach()`: a tensor that requires no grad, PyTorch lets one write into it)
                asked = (func.value, binding.stmt)
                if asked in self._asking:
                    continue  # `x = x.view(...)` in a loop: a cycle says nothing more
                self._asking.add(asked)
                try:
                    viewed = self.origin(func.value, binding.stmt)
                finally:
                    self._asking.discard(asked)
                if viewed is not None:
                    return LeafOrigin(viewed.known, f"`{name.id}`, a view of {viewed.what}", viewed.hooked,
                                      hooked=viewed.hooked)
        return None

    def _definitions(self) -> Dict[str, List[ast.AST]]:
        if self._defs is None:  # one walk of the module, not one per binding asked about
            self._defs = {}
            for s in (*self.tree.source.walked(ast.FunctionDef), *self.tree.nodes(ast.ClassDef)):  # (read: one or not)
                self._defs.setdefault(cast(Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef], s).name,
                                      []).append(s)
        return self._defs

    def _returns_leaf(self, name: str) -> bool:
        """``name`` is a function of the module, bound once, whose every ``return`` makes a
        leaf that requires grad (``def init_params(size): return torch.randn(size).requires_grad_()``)."""
        defs = self._definitions().get(name, [])
        module_flow = self.binder.flow(self.tree.module, nested=False)
        if len(defs) != 1 or not isinstance(defs[0], FUNCTIONS) or self.tree.parent(defs[0]) is not self.tree.module \
                or len(module_flow.bindings.get(name, [])) != 1:
            return False
        func = defs[0]
        returns = self.tree.returns(func)
        return bool(returns) and all(isinstance(r.value, ast.Call) and creates_leaf(r.value) for r in returns)

    def _followed(self, expr: ast.expr, at: Located) -> Optional[LeafOrigin]:
        """The origin of ``expr`` at ``at``, cycles cut (``x = x`` through a loop)."""
        asked = (expr, at)
        if asked in self._asking:
            return None
        self._asking.add(asked)
        try:
            return self.origin(expr, at)
        finally:
            self._asking.discard(asked)

    def read_by_computation(self, name: ast.Name, stmt: Located) -> bool:
        """The tensor ``name`` holds is read after ``stmt`` by a computation (an op, a call, an
        index), not only returned or kept (``return w``, ``p = nn.Parameter(w)``): a leaf made
        with requires_grad=True and then read so means "update a copy", not "update the leaf"."""
        flow = self.binder.flow(self.tree.owner(name))
        _, end = span(stmt)
        for pos, node in flow.loads.get(name.id, []):
            if pos < end or self.returned(node) or self._written(node):
                continue
            parent = self.tree.parent(node)
            if isinstance(parent, ast.Assign):
                continue
            if isinstance(parent, ast.Call) and (target_key(parent.func) or "").endswith("Parameter"):
                continue
            if self._state_read(node):
                continue
            return True
        return self._read_by_nested_scope(name)

    def _read_by_nested_scope(self, name: ast.Name) -> bool:
        """A function or lambda nested in ``name``'s function reads it (a closure, which may run
        after the update, in the computation: ``def predict(x): return x @ coef``)."""
        owner = self.tree.owner(name)
        for node in self.tree.walk(owner):
            if isinstance(node, ast.Name) and node.id == name.id and isinstance(node.ctx, ast.Load):
                scope = self.tree.owner(node)
                if scope is not owner and name.id not in self.binder.flow(scope).bindings:
                    return True
        return False

    def _state_read(self, node: ast.expr) -> bool:
        """``c.grad``, ``c.detach()``, ``c.data``, ``c.shape``: a read of the leaf's state that
        autograd does not differentiate through. It sees the same values under both meanings
        of the update (the leaf's, or a copy's), and a copy has no ``.grad`` of its own: such
        reads say nothing for "update a copy"."""
        parent = self.tree.parent(node)
        if not (isinstance(parent, ast.Attribute) and parent.value is node):
            return False
        if parent.attr in _STATE_ATTRS:
            return True
        call = self.tree.parent(parent)
        return parent.attr in _STATE_METHODS and isinstance(call, ast.Call) and call.func is parent \
            and not call.args and not call.keywords

    def returned(self, node: ast.expr) -> bool:
        """``return E``, ``return {"c": c}``: the tensor itself is handed back (through literal
        containers), not computed with."""
        parent = self.tree.parent(node)
        while isinstance(parent, (ast.Tuple, ast.List, ast.Set, ast.Dict)):
            if isinstance(parent, ast.Dict) and any(k is node for k in parent.keys):
                return False
            node, parent = parent, self.tree.parent(parent)
        return isinstance(parent, ast.Return)

    def _written(self, node: ast.expr) -> bool:
        """The name is the base of another in-place write (``E[:, 1::2] = v``, ``E += 1``,
        ``E.mul_(2)`` as a statement): it is updated again, not read."""
        parent = self.tree.parent(node)
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Store):
            return True
        if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr.endswith("_") \
                and not parent.attr.startswith("_"):
            call = self.tree.parent(parent)
            return isinstance(call, ast.Call) and call.func is parent and isinstance(self.tree.parent(call), ast.Expr)
        return False

    def _leaf_name(self, expr: ast.expr, at: Located) -> bool:
        origin = self.origin(expr, at) if isinstance(expr, (ast.Name, ast.Attribute)) else None
        return origin is not None and origin.known



# A tensor's attributes and methods that read its state, not differentiated through.
_STATE_ATTRS = frozenset({"grad", "data", "shape", "dtype", "device", "requires_grad", "is_leaf", "ndim"})
_STATE_METHODS = frozenset({"detach", "size", "dim", "numel", "item", "tolist"})


def _made_without_grad(leaves: "Leaves", base: ast.expr, depth: int = 0) -> bool:
    """``leaves.w`` (or a name) set to an ``nn.Parameter`` built with a ``requires_grad`` that
    is not ``True`` (``nn.Parameter(t, requires_grad=False)``, ``nn.Parameter(t, False)``, a
    flag), or a name bound to such a ``leaves.w`` (``table = leaves.ids``): it may require no
    grad, and then writing into it raises nothing."""
    values: List[object] = []
    if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self":
        cls = leaves.tree.enclosing_class(base)
        values = list(leaves.kinds.classes.class_attrs(cls).get(base.attr, [])) if cls is not None else []
    elif isinstance(base, ast.Name):
        flow = leaves.binder.flow(leaves.tree.owner(base))
        values = [b.value for b in leaves.dataflow.reaching(flow, base.id, leaves.tree.statement_of(base))]
    for value in values:
        if isinstance(value, (ast.Name, ast.Attribute)) and depth < 3 and _made_without_grad(leaves, value, depth + 1):
            return True
        if not (isinstance(value, ast.Call) and leaves.kinds.names.torch_name(value.func) in PARAMETER_CLASSES):
            continue
        flags = [k.value for k in value.keywords if k.arg == "requires_grad"] + list(value.args[1:2])
        if any(not is_const(flag, True) for flag in flags):
            return True
    return False


def _frozen_class_tested(leaves: "Leaves", base: ast.expr, stmt: Located) -> bool:
    """``stmt`` runs only where ``isinstance(base, Frozen)`` held (the body of an ``if`` testing
    it, alone or in an ``and``; a tuple of such classes too), ``Frozen`` a class of the module
    whose instances require no grad (:meth:`~codemod.analysis.classes.Classes.frozen_parameter_class`),
    with no binding of the name inside that body reaching the write but one to a new ``Frozen``.
    Names only (a call could rebind an attribute)."""
    if not isinstance(base, ast.Name):
        return False
    here: ast.AST = cast(ast.AST, stmt)
    for up in leaves.tree.ancestors(stmt):
        if isinstance(up, OWNERS):
            break
        if isinstance(up, ast.If) and any(s is here for s in up.body) and _tests_frozen(leaves, up.test, base.id) and all(
                not any(a is up for a in leaves.tree.ancestors(b.stmt)) or isinstance(b.value, ast.Call)
                and leaves.kinds.classes.frozen_parameter_class(b.value.func, leaves.kinds.names.qualified_names)
                for b in leaves.dataflow.reaching(
                    leaves.binder.flow(leaves.tree.owner(stmt)), base.id, stmt)):
            return True  # (a binding inside the tested body that reaches the write makes one: `p = Frozen(t)`)
        here = up
    return False


def _tests_frozen(leaves: "Leaves", test: ast.expr, name: str) -> bool:
    """``isinstance(name, Frozen)`` (alone, in an ``and``, or with a tuple of such classes).
    A module function, not a closure: a recursive closure is a reference cycle that would keep
    the file's analysis alive until the cyclic collector runs."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_tests_frozen(leaves, v, name) for v in test.values)
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name)
            and test.args[0].id == name):
        return False
    classes = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    qualified = leaves.kinds.names.qualified_names
    return bool(classes) and all(leaves.kinds.classes.frozen_parameter_class(c, qualified) for c in classes)


def _listed_leaf(leaves: "Leaves", target: ast.Subscript, stmt: Located) -> Optional[LeafOrigin]:
    """``params[0].add_(1)`` (or ``params["w"][1:] = 0``) where ``params`` is a list, tuple or
    dict this function builds once of tensors made with ``requires_grad=True`` (or
    ``nn.Parameter``) and, before the write, only reads by element or iterates: the element is
    a leaf that requires grad. Not where the statement replaces the element (``params[0] = w``),
    nor where the container is handed on or changed first (its elements may then be others)."""
    subscripts = [target]
    while isinstance(subscripts[-1].value, ast.Subscript):
        subscripts.append(subscripts[-1].value)
    element, name = subscripts[-1], subscripts[-1].value
    if not isinstance(name, ast.Name) or isinstance(element.slice, (ast.Slice, ast.Tuple)) \
            or isinstance(stmt, ast.Assign) and any(t is element for t in stmt.targets):
        return None
    flow = leaves.binder.flow(leaves.tree.owner(stmt))
    bindings = flow.bindings.get(name.id, [])
    if len(bindings) != 1 or bindings[0].form != "assign" or leaves.dataflow.reaching(flow, name.id, stmt) != bindings:
        return None
    value = bindings[0].value
    if isinstance(value, ast.ListComp) and len(value.generators) == 1 and not value.generators[0].ifs:
        elements: List[Optional[ast.expr]] = [value.elt]
    elif isinstance(value, (ast.List, ast.Tuple)):
        elements = list(value.elts)
    elif isinstance(value, ast.Dict) and None not in value.keys:
        elements = list(value.values)
    else:
        return None
    if not elements or not all(isinstance(e, ast.Call) and (
            any(k.arg == "requires_grad" and is_const(k.value, True) for k in e.keywords)
            or leaves.kinds.kind(e) is Kind.PARAMETER and not any(k.arg == "requires_grad" for k in e.keywords))
            for e in elements):
        return None
    owner = leaves.tree.owner(stmt)
    if any(isinstance(n, ast.Attribute) and (n.attr in ("requires_grad_", "detach_")
                                             or n.attr == "requires_grad" and not isinstance(n.ctx, ast.Load))
           for n in ast.walk(owner)):
        return None  # `ws[1].requires_grad_(False)`, `for w in ws: w.detach_()`: an element may require no grad
    start, end = leaves.tree.range(stmt)
    loops = [(ls, le) for ls, le in flow.loops if ls <= start and end <= le]
    for pos, load in flow.loads.get(name.id, []):
        if pos >= end and not any(ls <= pos <= le for ls, le in loops):
            continue  # read after the write (and not before it on a later turn): cannot change what it hits
        parent = leaves.tree.parent(load)
        if not (isinstance(parent, ast.Subscript) and parent.value is load and isinstance(parent.ctx, ast.Load)
                or isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is load):
            return None  # handed on, changed (`ws[0] = w`, `ws.append(w)`): its elements may be others'
    return LeafOrigin(True, f"`{name.id}[...]`, a tensor made to require grad, held in `{name.id}`", False)


def creates_leaf(call: ast.Call) -> bool:
    """``torch.randn(3, requires_grad=True)``, ``x.detach().requires_grad_()``."""
    if any(k.arg == "requires_grad" and is_const(k.value, True) for k in call.keywords):
        return True
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and (
        not call.args or is_const(call.args[0], True))


# How many helpers up a chain of callers :meth:`HandedLeaves.passed_leaf` follows (heavyball
# 3.2.1's fusions.py, helpers calling each other from several sites: minutes without a bound)
_CALLER_DEPTH = 4


class HandedLeaves:
    """Leaves that require grad where the analysis meets them second-hand: a tensor made to
    require grad by a statement after it was built (``w.requires_grad_()``), and a parameter
    (or ``*args``) that the calls of its function hand a leaf."""

    def __init__(self, leaves: "Leaves") -> None:
        self.leaves = weakref.proxy(leaves)  # its owner holds it: no reference cycle
        self.tree = leaves.tree
        self._depth = 0  # callers being followed by :meth:`passed_leaf` (a chain of helpers)

    def switched_on(self, name: str, bound: Located, stmt: Located) -> Optional[ast.stmt]:
        """The statement that makes ``name``'s tensor require grad after ``bound`` bound it and
        before ``stmt``, on every way from one to the other: the tensor is then a leaf that
        requires grad, where it did not require grad before (see :meth:`fresh`)."""
        return switched_on_between(self.tree, name, bound, stmt)

    def written_constants_only(self, name: str, bound: Located, switched: ast.stmt) -> bool:
        """Between the binding of ``name`` and the statement that switches its grad on, every
        in-place write into it writes numbers (``A[i, j] = 1``): one writing a tensor that
        requires grad would make it a non-leaf (``A[i] = w.sum()``: CopySlices), which PyTorch
        then lets be written in place."""
        start = bound.end_lineno or bound.lineno
        end = switched.lineno
        owner = self.tree.owner(switched)
        for node in self.tree.walk(owner):
            line: int = getattr(node, "lineno", 0)
            if not (start < line < end) or self.tree.owner(node) is not owner:
                continue
            if isinstance(node, (ast.Assign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, (ast.Subscript, ast.Name)) and _written_name(t) == name for t in targets) \
                        and not _number(node.value) and not (isinstance(node, ast.Assign) and any(
                            isinstance(t, ast.Name) and t.id == name for t in targets)):
                    return False
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                    and not node.func.attr.endswith("__") and node.func.attr != "requires_grad_" \
                    and _written_name(node.func.value) == name \
                    and not all(_number(a) for a in [*node.args, *(k.value for k in node.keywords)]):
                return False
        return True

    def fresh(self, value: ast.expr, at: Located, depth: int = 0) -> bool:
        """``value`` is a tensor that requires no grad where it is made: a torch factory
        (``torch.ones(n)``, or given ``requires_grad=False``), ``torch.normal`` of numbers, a
        ``.detach()``, a view or conversion of such a tensor (a name bound once to one, nothing
        between switching its grad on or writing a tensor into it: ``X = X.t().contiguous()``),
        or a call of a function of this module (a method of the class the receiver was built
        from) whose every return is one."""
        if isinstance(value, ast.Name) and depth <= 2:
            return self._fresh_name(value, at, depth + 1)
        if not isinstance(value, ast.Call) or depth > 2:
            return False
        func = value.func
        if (self.leaves.kinds.calls.is_factory(value) or _normal_of_numbers(self.leaves, value)) and all(
                k.arg != "requires_grad" or is_const(k.value, False) for k in value.keywords):
            return True
        if isinstance(func, ast.Attribute) and func.attr == "detach" and not value.args:
            return True
        if isinstance(func, ast.Attribute) and (func.attr in _KEEPS_NO_GRAD or func.attr in _NO_GRAD_VIEWS) \
                and self.fresh(func.value, at, depth):
            return True  # `torch.zeros(n).float()`, `.type(dtype)`, `.to(device)`, `.t()` of such a tensor
        target = self._callee(value, at)
        if target is None:
            return False
        returns = [n for n in self.tree.walk(target) if isinstance(n, ast.Return) and self.tree.owner(n) is target]
        return bool(returns) and all(r.value is not None and self.fresh(r.value, r, depth + 1) for r in returns)

    def _fresh_name(self, name: ast.Name, at: Located, depth: int) -> bool:
        """``name`` holds, at ``at``, what its one reaching binding made, fresh (:meth:`fresh`),
        where nothing between that binding and ``at`` switches its grad on (``requires_grad``,
        ``requires_grad_``) or writes a tensor into it (:meth:`written_constants_only`)."""
        owner = self.tree.owner(name)
        stmt = self.tree.statement_of(name)
        reaching = self.leaves.dataflow.reaching(self.leaves.binder.flow(owner), name.id, stmt)
        if len(reaching) != 1 or reaching[0].form != "assign" or reaching[0].value is None:
            return False
        bound = reaching[0].stmt
        if not isinstance(stmt, ast.stmt) or not self.written_constants_only(name.id, bound, stmt):
            return False
        start, end = bound.end_lineno or bound.lineno, stmt.lineno
        if any(isinstance(n, ast.Attribute) and n.attr in ("requires_grad", "requires_grad_")
               and isinstance(n.value, ast.Name) and n.value.id == name.id
               and start < getattr(n, "lineno", 0) <= end for n in self.tree.walk(owner)):
            return False
        return self.fresh(reaching[0].value, bound, depth)

    def _callee(self, call: ast.Call, at: Located) -> Optional[ast.AST]:
        """The function of this module ``call`` runs: a top-level function bound once, or the
        method of the class a name was built from (``lif = Leaky(...)``; ``lif.init_leaky()``)."""
        func = call.func
        if isinstance(func, ast.Name):
            defs = self.leaves._definitions().get(func.id, [])
            module_flow = self.leaves.binder.flow(self.tree.module, nested=False)
            if len(defs) == 1 and isinstance(defs[0], FUNCTIONS) and self.tree.parent(defs[0]) is self.tree.module \
                    and len(module_flow.bindings.get(func.id, [])) == 1:
                return defs[0]
            return None
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        flow = self.leaves.binder.flow(self.tree.owner(at))
        reaching = self.leaves.dataflow.reaching(flow, func.value.id, at)
        classes = self.leaves.chains.classes()
        found: Optional[ast.AST] = None
        for binding in reaching:
            built = binding.value
            if binding.form != "assign" or not isinstance(built, ast.Call) or not isinstance(built.func, ast.Name) \
                    or built.func.id not in classes:
                return None
            cls = classes[built.func.id]
            if self.leaves.chains.subclassed(cls):
                return None
            method = next((m for c in self.leaves.chains._lineage(cls) for m in c.body
                           if isinstance(m, FUNCTIONS) and m.name == func.attr), None)
            if method is None or (found is not None and method is not found):
                return None
            found = method
        return found

    def passed_varargs(self, loop: ast.AST, name: str, stmt: Located) -> Optional[LeafOrigin]:
        """``def zeros(*args): for state in args: state.zero_()`` called as ``zeros(mem)``: the
        loop variable is each tensor the calls pass for ``*args``; a leaf that requires grad
        where a call passes one. Known only where every call of the module is seen, passes no
        ``*x`` of its own and only known leaves there, and no other file of the run calls it."""
        func = self.tree.owner(loop)
        iterator = getattr(loop, "iter", None)
        if self.leaves.calls is None or not isinstance(func, FUNCTIONS) or func.args.vararg is None \
                or not isinstance(iterator, ast.Name) or iterator.id != func.args.vararg.arg or func.name.endswith("_"):
            return None
        flow = self.leaves.binder.flow(func)
        if any(b.form != "param" for b in flow.bindings.get(iterator.id, [])) \
                or any(b.stmt is not loop for b in self.leaves.dataflow.reaching(flow, name, stmt)):
            return None  # `args` rebound, or the loop variable rebound before the write
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        found: Optional[LeafOrigin] = None
        every = True
        sites = self.leaves.calls.sites(func)
        for site in sites:
            call = site.node
            if not site.called or not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
                every = False
                continue
            offset = self.leaves.calls.unpassed(call, func)
            if offset is None:
                every = False
                continue
            passed = call.args[max(len(plain) - offset, 0):]
            at = self.tree.statement_of(call)
            origins = [self.leaves._followed(a, at) for a in passed]
            if not origins or any(o is None or not o.known for o in origins):
                every = False
            if found is None and any(o is not None and o.known for o in origins):
                what = next(o.what for o in origins if o is not None and o.known)
                found = LeafOrigin(True, f"`{name}`, which the call at line {call.lineno} gives {what}", False)
        return self._known_where_every_call_is(func, found, every)

    def passed_frozen(self, name: ast.Name, stmt: Located) -> bool:
        """``name`` may hold its function's parameter as it came in, and a call in this module
        passes for it a parameter that may be frozen (``put(self._shard, ...)`` with
        ``self._shard = nn.Parameter(t, requires_grad=False)``): an annotation ``nn.Parameter``
        says what it is, not that it requires grad; that caller's write raises nothing."""
        func = self.tree.owner(name)
        if self.leaves.calls is None or not isinstance(func, FUNCTIONS):
            return False
        flow = self.leaves.binder.flow(func)
        if not any(b.form == "param" for b in self.leaves.dataflow.reaching(flow, name.id, stmt)):
            return False
        for site in self.leaves.calls.sites(func):
            arg = self._argument(site.node, func, name.id) if isinstance(site.node, ast.Call) else None
            if arg is not None and _made_without_grad(self.leaves, arg):
                return True
        return False

    def _argument(self, call: ast.Call, func: ast.AST, param: str) -> Optional[ast.expr]:
        """What ``call`` passes for ``func``'s parameter ``param``, by keyword or by position after
        the parameters the call leaves out (``Calls.unpassed``); None where that is not seen
        (``*args``, an unknown receiver) or nothing is passed."""
        offset = self.leaves.calls.unpassed(call, func) if self.leaves.calls is not None else None
        if offset is None or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        arg = next((k.value for k in call.keywords if k.arg == param), None)
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]  # type: ignore[attr-defined]
        index = plain.index(param) - offset if param in plain else -1
        if arg is None and 0 <= index < len(call.args):
            arg = call.args[index]
        return arg

    def passed_leaf(self, func: ast.AST, param: str) -> Optional[LeafOrigin]:
        """``def fill(E): E[:, 0::2] = ...`` called as ``fill(E=self.emb.weight)``: the parameter
        is a leaf that requires grad where a call in this module passes one (that call raises).
        Known only where every call is seen and passes a known leaf: calls in this module only
        (no reference handed on, no ``*args``), none from another file of the run."""
        if self.leaves.calls is None or getattr(func, "name", "_").endswith("_"):
            return None  # `fill_(w)`: a helper that mutates on purpose, reported at its calls (IPF005)
        if self._depth >= _CALLER_DEPTH:
            return None  # unknown: each level asks every call site, so a deep chain costs its width to that power
        self._depth += 1
        try:
            return self._passed_leaf(func, param)
        finally:
            self._depth -= 1

    def _passed_leaf(self, func: ast.AST, param: str) -> Optional[LeafOrigin]:
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]  # type: ignore[attr-defined]
        if param not in plain:
            return None
        sites = self.leaves.calls.sites(func)
        found: Optional[LeafOrigin] = None
        every = bool(sites)
        for site in sites:
            call = site.node
            if not site.called or not isinstance(call, ast.Call):
                every = False
                continue
            arg = self._argument(call, func, param)
            origin = self.leaves._followed(arg, self.tree.statement_of(call)) if arg is not None else None
            if origin is None or not origin.known:
                every = False
            elif found is None:
                found = LeafOrigin(True, f"`{param}`, which the call at line {call.lineno} gives {origin.what}", False)
        return self._known_where_every_call_is(func, found, every)


    def _known_where_every_call_is(self, func: ast.AST, found: Optional[LeafOrigin],
                                   every: bool) -> Optional[LeafOrigin]:
        """``found`` stays known only where every call was seen here and none comes from
        another file of the run."""
        if found is None:
            return None
        assert self.leaves.calls is not None
        qualname = self.leaves.calls.qualname(func)
        elsewhere = qualname is not None and self.leaves.calls.project is not None and any(
            not c.caller.startswith(self.leaves.calls.module_name + ".")
            for c in self.leaves.calls.project.calls.get(qualname, []))
        return found if every and not elsewhere else found._replace(known=False)

def _written_name(target: ast.expr) -> Optional[str]:
    """``A`` of ``A``, ``A[i, j]``, ``A[i][j]``."""
    while isinstance(target, ast.Subscript):
        target = target.value
    return target.id if isinstance(target, ast.Name) else None


def _number(value: ast.expr) -> bool:
    """A Python number or boolean literal (``1``, ``-0.5``, ``True``)."""
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
        value = value.operand
    return isinstance(value, ast.Constant) and isinstance(value.value, (int, float, bool))


# Methods whose result requires grad only where their receiver does (conversions, copies).
_KEEPS_NO_GRAD = frozenset({"float", "double", "half", "bfloat16", "type", "to", "cuda", "cpu", "clone", "contiguous"})
# Views whose result requires grad only where their receiver does.
_NO_GRAD_VIEWS = frozenset({"t", "transpose", "permute", "view", "reshape", "unsqueeze", "squeeze", "flatten",
                            "expand", "narrow", "movedim", "unflatten"})


def _normal_of_numbers(leaves: "Leaves", call: ast.Call) -> bool:
    """``torch.normal(0, 1, size=s)``: a fresh tensor of numbers (a mean or std given as a tensor
    may require grad, and the result then does)."""
    return leaves.kinds.names.torch_name(call.func) == "torch.normal" and len(call.args) >= 2 \
        and all(_number(a) for a in call.args[:2]) \
        and not any(k.arg in ("mean", "std") for k in call.keywords)


def _loop_over_parameters(loop: ast.AST, name: str) -> bool:
    """``for p in model.parameters():`` binding ``name`` (or ``for n, p in ...named_parameters()``,
    or ``for tp, p in zip(target.parameters(), online.parameters())``)."""
    iterator = getattr(loop, "iter", None)
    target = getattr(loop, "target", None)
    if isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name) and iterator.func.id == "zip" \
            and isinstance(target, ast.Tuple) and len(target.elts) == len(iterator.args):
        return any(isinstance(t, ast.Name) and t.id == name and _yields_parameters(a) == "parameters"
                   for t, a in zip(target.elts, iterator.args))
    kind = _yields_parameters(iterator)
    if kind == "parameters":
        return isinstance(target, ast.Name) and target.id == name
    return kind == "named_parameters" and (isinstance(target, ast.Tuple) and len(target.elts) == 2
                                           and isinstance(target.elts[1], ast.Name) and target.elts[1].id == name)


def _parameters_receiver(loop: ast.AST, name: str) -> Optional[str]:
    """``self.ema`` of the ``self.ema.parameters()`` a loop over parameters binds ``name`` from (None: not a chain)."""
    iterator, target = getattr(loop, "iter", None), getattr(loop, "target", None)
    if isinstance(iterator, ast.Call) and isinstance(iterator.func, ast.Name) and iterator.func.id == "zip" \
            and isinstance(target, ast.Tuple):
        iterator = next((a for t, a in zip(target.elts, iterator.args) if isinstance(t, ast.Name) and t.id == name), None)
    if _yields_parameters(iterator) is None:
        return None
    return target_key(cast(ast.Attribute, cast(ast.Call, iterator).func).value)


def _switched_off(leaves: "Leaves", loop: ast.AST, name: str) -> bool:
    """The parameters ``loop`` hands out as ``name`` may require no grad: the file switches
    requires_grad off (``detach_()``, ``requires_grad_(False)``, ``requires_grad = False``) on
    their module or a module around it (``self.ema.requires_grad_(False)``), on something it
    cannot name, or on the variable of a loop over the same module's parameters (an EMA copy
    made with ``for p in self.ema.parameters(): p.detach_()``)."""
    frozen = leaves.frozen()
    receiver = _parameters_receiver(loop, name) if frozen else None
    if not frozen:
        return False
    if receiver is None:
        return True
    for key, stmts in frozen.items():
        if key == "*" or key == receiver or key.startswith(receiver + ".") or receiver.startswith(key + "."):
            return True
        for stmt in stmts:
            if any(isinstance(a, (ast.For, ast.AsyncFor)) and _loop_over_parameters(a, key)
                   and _parameters_receiver(a, key) == receiver for a in leaves.tree.ancestors(stmt)):
                return True
    return False


def _yields_parameters(expr: Optional[ast.AST]) -> Optional[str]:
    """``parameters`` / ``named_parameters`` for ``m.parameters()`` / ``m.named_parameters()``."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _PARAMETER_ITERATORS:
        return expr.func.attr
    return None


# Views whose in-place write PyTorch refuses when the tensor viewed is a leaf that requires grad
# ("a view of a leaf Variable that requires grad is being used in an in-place operation"): not
# `detach` (a tensor of its own), nor `reshape`/`flatten` (they may copy).
_LEAF_VIEWS = frozenset({
    "view", "view_as", "t", "transpose", "permute", "narrow", "select", "squeeze", "unsqueeze",
    "diagonal", "unbind", "split", "chunk", "tensor_split", "movedim", "moveaxis", "swapaxes",
    "swapdims", "unflatten", "expand", "expand_as", "hsplit", "vsplit", "dsplit", "split_with_sizes",
    "as_strided", "unfold",
})
_RNN_PARAMETERS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")  # nn.LSTM/GRU/RNN and cells
_RNN_MODULES = frozenset(f"torch.nn.{n}" for n in ("LSTM", "GRU", "RNN", "LSTMCell", "GRUCell", "RNNCell"))
_RETURNS_SELF = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16", "requires_grad_"})
_TORCH = "torch"  # an owner: a module of torch (its `.weight`, `.bias`, `weight_ih_l0`... are parameters)
_DEPTH = 12


class ModuleChains:
    """Parameters reached through the modules this file builds: ``line.layer.weight[0, 0]``
    (``line = Line()``, ``Line.__init__`` sets ``self.layer = nn.Linear(...)``),
    ``model.bert.encoder.layer[i].output.dense.weight[:, pos]`` (through ``nn.ModuleList``),
    ``model.P[user]`` (``self.P = nn.Parameter(...)``), ``getattr(self.rnn, f'bias_hh_l{i}').chunk(4)[1]``
    (a view of an LSTM's parameter). Owners are followed only where every value seen is one:
    a name's reaching bindings, every ``self.<attr> = ...`` of the class (``None`` skipped: a
    write through it raises before it writes), the elements of a ``ModuleList``/``Sequential``."""

    def __init__(self, leaves: "Leaves") -> None:
        self.leaves = weakref.proxy(leaves)  # its owner holds it: no reference cycle (tests/test_speed_walks.py)
        self.tree = leaves.tree
        self.kinds = leaves.kinds
        self._classes: Optional[Dict[str, ast.ClassDef]] = None
        self._outside: Optional[Set[str]] = None  # attributes stored on something other than `self`
        self._subclassed: Optional[Set[int]] = None  # ids of the classes some class of this file derives from
        self._by_attr: Optional[Tuple[Dict[str, List[ast.Call]], Set[str]]] = None  # attribute -> calls; handed on

    def parameter(self, target: ast.expr, stmt: Located) -> Optional[str]:
        """In words, what ``target`` writes: a parameter or a view of one; None if not shown."""
        return self._param(target, stmt, 0)

    def _param(self, expr: ast.expr, stmt: Located, depth: int) -> Optional[str]:
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Subscript):
            inner = self._param(expr.value, stmt, depth + 1)
            return None if inner is None else f"a part of {inner}" if not inner.startswith("a part") else inner
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _LEAF_VIEWS:
            inner = self._param(expr.func.value, stmt, depth + 1)
            return None if inner is None else f"a view (`{expr.func.attr}`) of {inner}"
        attr = _attribute(expr)
        if attr is None:
            return None
        owner_expr, name, exact = attr
        owners = self._owners(owner_expr, stmt, depth + 1)
        if not owners:
            return None
        for owner in owners:
            if owner == _TORCH:
                if not ((exact and name in _PARAMETER_ATTRS) or name.startswith(_RNN_PARAMETERS)):
                    return None
            elif isinstance(owner, ast.ClassDef):
                values = self._class_values(owner, name) if exact else None
                if not values or name in self._stored_outside() or "*" in self._stored_outside() \
                        or not all(self._is_parameter(v) for v in values):
                    return None
            else:
                return None
        text = ast.unparse(expr)
        return f"`{text}`, a parameter of a module built in this file"

    def _is_parameter(self, value: ast.expr) -> bool:
        """``nn.Parameter(...)`` (not with requires_grad=False)."""
        return isinstance(value, ast.Call) \
            and self.kinds.names.torch_name(value.func) in PARAMETER_CLASSES \
            and not any(k.arg == "requires_grad" and not is_const(k.value, True) for k in value.keywords) \
            and len(value.args) < 2

    def _owners(self, expr: ast.expr, stmt: Located, depth: int) -> Optional[List[object]]:
        """The modules (``_TORCH``, a class of this file, or ``("list", owners)``) ``expr`` may be."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Name):
            if expr.id == "self":
                cls = self.tree.enclosing_class(expr)
                if cls is None or self.subclassed(cls):
                    return None  # a subclass may set the attribute otherwise
                return [cls]
            return self._name_owners(expr, stmt, depth)
        if isinstance(expr, ast.Subscript):
            found = self._owners(expr.value, stmt, depth + 1)
            if not found or any(not (isinstance(o, tuple) and o[0] == "list") for o in found):
                return None
            return [e for o in found for e in o[1]]  # type: ignore[index]
        if isinstance(expr, ast.Attribute):
            found = self._owners(expr.value, stmt, depth + 1)
            if not found or any(not isinstance(o, ast.ClassDef) for o in found):
                return None
            if expr.attr in self._stored_outside() or "*" in self._stored_outside():
                return None
            result: List[object] = []
            for holder in found:
                values = self._class_values(cast(ast.ClassDef, holder), expr.attr)
                if not values:
                    return None
                for value in values:
                    owners = self._value_owners(value, depth + 1)
                    if owners is None:
                        return None
                    result.extend(owners)
            return result
        return None

    def _name_owners(self, name: ast.Name, stmt: Located, depth: int) -> Optional[List[object]]:
        binder, dataflow = self.leaves.binder, self.leaves.dataflow
        owner = self.tree.owner(name)
        flow = binder.flow(owner)
        bindings = flow.bindings.get(name.id)
        if (not bindings or name.id in flow.declared) and not isinstance(owner, ast.Module):
            flow = binder.flow(self.tree.module, nested=False)
            reaching = flow.bindings.get(name.id) or []
        else:
            reaching = dataflow.reaching(flow, name.id, stmt)
        if not reaching:
            return None
        result: List[object] = []
        for binding in reaching:
            if isinstance(binding.stmt, ast.For) and binding.form in ("for", "other"):
                looped = _loop_owners(self, binding.stmt, name.id, depth + 1)
                if looped is None:
                    return None
                result.extend(looped)
                continue
            if binding.form != "assign" or binding.value is None:
                return None
            value = binding.value
            if isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
                owners = self._owners(value, binding.stmt, depth + 1)
            else:
                owners = self._value_owners(value, depth + 1)
            if owners is None:
                return None
            result.extend(owners)
        return result

    def _value_owners(self, value: ast.expr, depth: int) -> Optional[List[object]]:
        """What a value assigned to an attribute (or a name) builds: a torch module, a module
        of this file, a list of modules."""
        if isinstance(value, ast.Constant) and value.value is None:
            return []
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
            return self._owners(value, value, depth + 1)
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in _RETURNS_SELF and func.attr != "requires_grad_":
            inner = func.value  # `Net().to(device)`: the module itself
            found = self._value_owners(inner, depth + 1) if isinstance(inner, ast.Call) else None
            return found if found and all(not isinstance(o, tuple) for o in found) else None
        name = self.kinds.names.torch_name(func)
        if name in ("torch.nn.ModuleList", "torch.nn.modules.container.ModuleList",
                    "torch.nn.Sequential", "torch.nn.modules.container.Sequential"):
            elements = _elements(value, name.endswith("Sequential"))
            if elements is None:
                return None
            owners: List[object] = []
            for element in elements:
                found = self._value_owners(element, depth + 1)
                if found is None:
                    return None
                owners.extend(found)
            return [("list", owners)]
        if name is not None:
            return [_TORCH] if name in torch_api.TENSOR_MODULES or name in _RNN_MODULES else None
        if isinstance(value.func, ast.Name):
            cls = self.classes().get(value.func.id)
            if cls is not None:
                return [cls]
        return None

    def _class_values(self, cls: ast.ClassDef, attr: str) -> Optional[List[ast.expr]]:
        """Every value ``self.<attr>`` is given in ``cls`` or the classes of this file it derives from."""
        values: List[ast.expr] = []
        for klass in self._lineage(cls):
            for value in self.kinds.classes.class_attrs(klass).get(attr, []):
                if isinstance(value, Kind):
                    if value is not Kind.PARAMETER:
                        return None
                    continue  # register_parameter: a parameter
                values.append(value)
        return values or None

    def _lineage(self, cls: ast.ClassDef) -> List[ast.ClassDef]:
        found = [cls]
        classes = self.classes()
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id in classes and classes[base.id] not in found:
                found.extend(c for c in self._lineage(classes[base.id]) if c not in found)
        return found

    def subclassed(self, cls: ast.ClassDef) -> bool:
        """A class of this file derives from ``cls`` (it may set its attributes otherwise)."""
        if self._subclassed is None:
            self._subclassed = {id(b) for c in self.classes().values() for b in self._lineage(c)[1:]}
        return id(cls) in self._subclassed

    def classes(self) -> Dict[str, ast.ClassDef]:
        """The module-level classes of this file bound once."""
        if self._classes is None:
            found: Dict[str, List[ast.ClassDef]] = {}
            for s in self.tree.module.body:
                if isinstance(s, ast.ClassDef):
                    found.setdefault(s.name, []).append(s)
            flow = self.leaves.binder.flow(self.tree.module, nested=False)
            self._classes = {k: v[0] for k, v in found.items()
                             if len(v) == 1 and len(flow.bindings.get(k, [])) == 1}
        return self._classes

    def _stored_outside(self) -> Set[str]:
        """Attributes this file assigns on something other than ``self`` (``model.layer = ...``)."""
        if self._outside is None:
            found: Set[str] = set()
            for node in self.tree.nodes(ast.Attribute):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) \
                        and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                    found.add(node.attr)
            for node in self.tree.nodes(ast.Call):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                        and node.func.id in ("setattr", "delattr") and len(node.args) >= 2:
                    found.add("*")
            self._outside = found
        return self._outside

    def entered_with_grad(self, func: ast.AST, seen: Set[ast.AST]) -> bool:
        """Every way into ``func`` is seen, with grad on: module-level code, an entry point; a function every call
        of which is in this file (none from other files of the run), made with grad on from such
        code; an ``__init__`` of a class of this file with no subclass here, every construction
        of which is so made."""
        if isinstance(func, ast.Module):
            return True
        calls, grad = self.leaves.calls, self.leaves.grad
        if not isinstance(func, FUNCTIONS) or func in seen or len(seen) > 8 or calls is None or grad is None:
            return False
        seen.add(func)
        qualname = calls.qualname(func)
        if qualname is not None and calls.project is not None and any(  # calls from other files of the run
                not c.caller.startswith(calls.module_name + ".") and (c.caller or not c.called or c.grad_off)
                for c in calls.project.calls.get(qualname, [])):
            return False  # only module-level code with grad on is followed there (its functions are not)
        nodes: List[ast.AST]
        if func.name == "__init__":
            cls = self.tree.parent(func)
            if not isinstance(cls, ast.ClassDef) or self.classes().get(cls.name) is not cls \
                    or self.subclassed(cls):
                return False
            nodes = list(self.kinds.classes.calls_in(self.tree.module).get(cls.name, []))
        elif isinstance(self.tree.parent(func), ast.ClassDef):
            found = self.method_calls(func.name)  # `trainer.train_als(data)`, `self.reset()`: by name
            if found is None:
                return False
            nodes = list(found)
        else:
            sites = calls.sites(func)
            if any(not s.called for s in sites):
                return False
            nodes = [s.node for s in sites]
        return (bool(nodes) or _entry_point(self.tree, func)) and all(
            grad.local_reason(n) is None and self.entered_with_grad(self.tree.owner(n), seen) for n in nodes)

    def method_calls(self, name: str) -> Optional[List[ast.Call]]:
        """Every call ``<anything>.name(...)`` in this file (whatever the receiver: one that is not
        the method's class is counted too); None where the method is handed on (``self.apply(self.init)``,
        or its name as a string: ``getattr(self, "init")``). One walk of the module for all names."""
        if self._by_attr is None:
            calls: Dict[str, List[ast.Call]] = {}
            handed: Set[str] = set()
            for node in self.tree.walk(self.tree.module):
                if isinstance(node, ast.Attribute):
                    parent = self.tree.parent(node)
                    if isinstance(parent, ast.Call) and parent.func is node:
                        calls.setdefault(node.attr, []).append(parent)
                    else:
                        handed.add(node.attr)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                    handed.add(node.value)
            self._by_attr = (calls, handed)
        calls, handed = self._by_attr
        return None if name in handed else calls.get(name, [])


_NAMED: "weakref.WeakKeyDictionary[Tree, Tuple[FrozenSet[object], Dict[str, int]]]" = weakref.WeakKeyDictionary()


def _attribute(expr: ast.expr) -> Optional[Tuple[ast.expr, str, bool]]:
    """``m.weight`` -> (m, "weight", exact); ``getattr(m, f'bias_hh_l{i}')`` -> (m, "bias_hh_l", not exact)."""
    if isinstance(expr, ast.Attribute):
        return expr.value, expr.attr, True
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "getattr" \
            and len(expr.args) == 2 and not expr.keywords:
        name = expr.args[1]
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            return expr.args[0], name.value, True
        if isinstance(name, ast.JoinedStr) and name.values and isinstance(name.values[0], ast.Constant) \
                and isinstance(name.values[0].value, str):
            return expr.args[0], name.values[0].value, False
    return None


def _elements(call: ast.Call, sequential: bool) -> Optional[List[ast.expr]]:
    args = call.args
    if call.keywords or any(isinstance(a, ast.Starred) for a in args):
        return None
    if sequential:
        return list(args) if args and not isinstance(args[0], (ast.List, ast.ListComp, ast.GeneratorExp)) else None
    if len(args) != 1:
        return None
    arg = args[0]
    if isinstance(arg, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in arg.elts):
        return list(arg.elts)
    if isinstance(arg, (ast.ListComp, ast.GeneratorExp)):
        return [arg.elt]
    return None


def _entry_point(tree: Tree, func: ast.AST) -> bool:
    """A module-level function, undecorated, that its file never names (no call, no reference, no
    string of its name), asked by :meth:`ModuleChains.entered_with_grad` where no other file of the
    run reaches it but from module-level code with grad on: an entry point (``main()``,
    ``compute()``), run from outside the file as its module-level code is (with grad on). The
    names the module mentions are gathered once per tree (one walk per function asked was
    quadratic: 1,200 such functions took 87 s)."""
    if not isinstance(func, FUNCTIONS) or tree.parent(func) is not tree.module or func.decorator_list:
        return False
    known = _NAMED.get(tree)
    if known is None:
        named: Set[object] = {cast(ast.Name, n).id for n in tree.nodes(ast.Name)}
        named.update(cast(ast.Attribute, n).attr for n in tree.nodes(ast.Attribute))
        named.update(cast(ast.Constant, n).value for n in tree.nodes(ast.Constant)
                     if isinstance(cast(ast.Constant, n).value, str))
        defined: Dict[str, int] = {}
        for s in tree.module.body:
            if isinstance(s, FUNCTIONS):
                defined[s.name] = defined.get(s.name, 0) + 1
        known = _NAMED[tree] = (frozenset(named), defined)
    return func.name not in known[0] and known[1].get(func.name, 0) == 1


def _loop_owners(chains: "ModuleChains", loop: ast.For, name: str, depth: int) -> Optional[List[object]]:
    """The loop variable ``name`` over a list of modules: ``for m in self.heads``,
    ``for i, m in enumerate(self.heads)``, ``for m, s in zip(self.heads, strides)``: any
    element of the list (every element is known, or nothing is)."""
    target, iterable = loop.target, loop.iter
    if not (isinstance(target, ast.Name) and target.id == name):
        call = iterable if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) else None
        if call is None or call.keywords or any(isinstance(a, ast.Starred) for a in call.args) \
                or not isinstance(target, ast.Tuple) or not all(isinstance(e, ast.Name) for e in target.elts):
            return None
        names = [cast(ast.Name, e).id for e in target.elts]
        if names.count(name) != 1 or chains.tree.owner(loop) is not chains.tree.owner(call):
            return None
        position = names.index(name)
        if call.func.id == "zip" and len(call.args) == len(names):  # type: ignore[attr-defined]
            iterable = call.args[position]
        elif call.func.id == "enumerate" and len(call.args) == 1 and position == 1:  # type: ignore[attr-defined]
            iterable = call.args[0]
        else:
            return None
        if chains.leaves.binder.flow(chains.tree.module, nested=False).bindings.get(call.func.id):  # type: ignore[attr-defined]
            return None  # `zip` / `enumerate` rebound by the module
    if isinstance(iterable, ast.Attribute) and _list_changed(chains.tree, iterable.attr):
        return None  # `self.heads.append(...)`: elements the constructor does not show
    found = chains._owners(iterable, loop, depth + 1)
    if not found or any(not (isinstance(o, tuple) and o[0] == "list") for o in found):
        return None
    return [e for o in found for e in o[1]]  # type: ignore[index]


def _switches(tree: Tree) -> List[ast.AST]:
    """What ``Leaves.frozen`` looks at: the calls, then the assignments to a ``requires_grad``
    attribute. The statements of one key are only ever asked whether one of them turns it off
    before, never in which order."""
    return [*tree.nodes(ast.Call), *(
        parent for n in tree.nodes(ast.Attribute) if cast(ast.Attribute, n).attr == "requires_grad"
        for parent in (tree.parent(n),) if isinstance(parent, ast.Assign) and parent.targets[0] is n)]


_LIST_CHANGES = frozenset({"append", "extend", "insert", "__setitem__", "__iadd__"})


def _list_changed(tree: Tree, attr: str) -> bool:
    """Some ``<x>.attr`` of the file is changed after it is built: ``.append(m)``, ``.extend``,
    ``.insert``, ``<x>.attr[i] = m``, ``<x>.attr += [m]``."""
    for node in tree.walk(tree.module):
        if isinstance(node, ast.Attribute) and node.attr == attr:
            parent = tree.parent(node)
            if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _LIST_CHANGES:
                return True
            if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Store):
                return True
            if isinstance(parent, ast.AugAssign) and parent.target is node:
                return True
    return False


def _alone(tree: Tree, owner: ast.AST, binding: Binding, reaching: List[Binding], at: ast.AST) -> bool:
    """No other binding reaching ``at`` can follow ``binding`` on a path to it: each is an
    in-place update, or never runs after it (``branches.exclusive_until``: before its ``if``,
    the parameter's default of ``if x is None: x = self.tok(ids)``, the ``if``'s other branch)."""
    return all(b is binding or isinstance(b.stmt, ast.AugAssign) or exclusive_until(
        binding.stmt, owner if b.form == "param" else b.stmt, at, tree.ancestors) for b in reaching)
