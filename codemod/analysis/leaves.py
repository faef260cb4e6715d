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
from typing import Dict, List, NamedTuple, Optional, Set, Tuple, cast

from typing import TYPE_CHECKING

from codemod.analysis.binder import Binder
from codemod.analysis.dataflow import VIEW_METHODS, Dataflow
from codemod.analysis.kinds import Kind
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
from codemod.analysis.tensor_kind import TensorKinds
from codemod.analysis.tree import Tree

if TYPE_CHECKING:
    from codemod.analysis.calls import Calls

_PARAMETER_ATTRS = ("weight", "bias")
_PARAMETER_ITERATORS = ("parameters", "named_parameters")


class LeafOrigin(NamedTuple):
    known: bool  # False: it may not require grad (the analysis cannot name its owner)
    what: str  # in words, for messages: "`self.fc.weight`, a parameter of a torch module"
    fresh: bool  # created in this function (not a parameter that lives on after it)


class Leaves:
    """Whether the base of an in-place write is a leaf that requires grad."""

    def __init__(self, tree: Tree, binder: Binder, dataflow: Dataflow, kinds: TensorKinds,
                 calls: Optional["Calls"] = None) -> None:
        self.tree = tree
        self.calls = calls  # the module's call sites: a parameter a call hands a leaf
        self.binder = binder
        self.dataflow = dataflow
        self.kinds = kinds
        self._frozen: Optional[Dict[str, List[ast.stmt]]] = None  # key -> the statements turning it off
        self._asking: Set[Tuple[ast.expr, Located]] = set()  # views being followed (cycles)
        self._defs: Optional[Dict[str, List[ast.AST]]] = None  # name -> the functions and classes so named

    def frozen(self) -> Dict[str, List[ast.stmt]]:
        """Keys the module turns requires_grad off for (``w.requires_grad_(False)``,
        ``w.requires_grad = False``), with the statements that do: such a tensor may not require
        grad when it is updated."""
        if self._frozen is None:
            found: Dict[str, List[ast.stmt]] = {}
            text = self.tree.source.text  # a screen (identifiers are NFKC-normalised: ASCII only)
            nodes = self.tree.walk(self.tree.module) if "requires_grad" in text or not text.isascii() else ()
            for node in nodes:
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr == "requires_grad_" and node.args and is_const(node.args[0], False):
                    key = target_key(node.func.value)
                elif isinstance(node, ast.Assign) and is_const(node.value, False) and len(node.targets) == 1 \
                        and isinstance(node.targets[0], ast.Attribute) and node.targets[0].attr == "requires_grad":
                    key = target_key(node.targets[0].value)
                else:
                    continue
                if key:
                    found.setdefault(key, []).append(cast(ast.stmt, self.tree.statement_of(node)))
            self._frozen = found
        return self._frozen

    def _frozen_before(self, key: str, stmt: Located) -> bool:
        """``key``'s requires_grad may be off at ``stmt``: turned off anywhere but later in the
        same function (and not in a loop around both): ``E[:, 0::2] = ...`` then
        ``E.requires_grad = False`` still writes into a leaf that requires grad."""
        offs = self.frozen().get(key)
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
            return None
        if self._frozen_before(key, stmt):
            return LeafOrigin(False, f"`{key}`, whose requires_grad the code turns off", False)
        kind = self.kinds.kind(base)
        if kind is Kind.PARAMETER:
            return LeafOrigin(True, f"`{key}`, an nn.Parameter", False)
        if isinstance(base, ast.Attribute) and base.attr in _PARAMETER_ATTRS:
            owner = self.kinds.kind(base.value)
            if owner is Kind.MODULE:
                return LeafOrigin(True, f"`{key}`, a parameter of a torch module", False)
            if owner is Kind.UNKNOWN:
                return LeafOrigin(False, f"`{key}`, which may be a module's parameter", False)
            return None
        if isinstance(base, ast.Name):
            return self._name_origin(base, stmt)
        return None

    def _name_origin(self, name: ast.Name, stmt: Located) -> Optional[LeafOrigin]:
        for anc in self.tree.ancestors(stmt):
            if isinstance(anc, OWNERS):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor)):
                if _loop_over_parameters(anc, name.id):
                    return LeafOrigin(True, f"`{name.id}`, a parameter (from `.parameters()`)", False)
                if bound_names(anc.target) == {name.id} and isinstance(anc.iter, (ast.Tuple, ast.List)) \
                        and anc.iter.elts and all(self._leaf_name(e, anc) for e in anc.iter.elts):
                    return LeafOrigin(True, f"`{name.id}`, one of tensors that require grad", False)
        owner = self.tree.owner(name)
        flow = self.binder.flow(owner)
        reaching = self.dataflow.reaching(flow, name.id, stmt)
        only = len(reaching) == 1  # a leaf handed in or aliased is known only where nothing else reaches
        for binding in reaching:
            value = binding.value
            if binding.form == "param" and isinstance(owner, FUNCTIONS):
                passed = self._passed_leaf(owner, name.id)
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
            if _creates_leaf(value):
                return LeafOrigin(True, f"`{name.id}`, created with requires_grad=True", True)
            func = value.func
            if isinstance(func, ast.Name) and self._returns_leaf(func.id):
                return LeafOrigin(True, f"`{name.id}`, made by `{func.id}()` with requires_grad=True", True)
            if isinstance(func, ast.Attribute) and func.attr in VIEW_METHODS:  # a view of a leaf
                asked = (func.value, binding.stmt)
                if asked in self._asking:
                    continue  # `x = x.view(...)` in a loop: a cycle says nothing more
                self._asking.add(asked)
                try:
                    viewed = self.origin(func.value, binding.stmt)
                finally:
                    self._asking.discard(asked)
                if viewed is not None:
                    return LeafOrigin(viewed.known, f"`{name.id}`, a view of {viewed.what}", False)
        return None

    def _returns_leaf(self, name: str) -> bool:
        """``name`` is a function of the module, bound once, whose every ``return`` makes a
        leaf that requires grad (``def init_params(size): return torch.randn(size).requires_grad_()``)."""
        if self._defs is None:  # one walk of the module, not one per binding asked about
            self._defs = {}
            for s in self.tree.walk(self.tree.module):
                if isinstance(s, (*FUNCTIONS, ast.ClassDef)):
                    self._defs.setdefault(s.name, []).append(s)
        defs = self._defs.get(name, [])
        module_flow = self.binder.flow(self.tree.module, nested=False)
        if len(defs) != 1 or not isinstance(defs[0], FUNCTIONS) or self.tree.parent(defs[0]) is not self.tree.module \
                or len(module_flow.bindings.get(name, [])) != 1:
            return False
        func = defs[0]
        returns = [n for n in self.tree.walk(func) if isinstance(n, ast.Return) and self.tree.owner(n) is func]
        return bool(returns) and all(isinstance(r.value, ast.Call) and _creates_leaf(r.value) for r in returns)

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

    def _passed_leaf(self, func: ast.AST, param: str) -> Optional[LeafOrigin]:
        """``def fill(E): E[:, 0::2] = ...`` called as ``fill(E=self.emb.weight)``: the parameter
        is a leaf that requires grad where a call in this module passes one (that call raises).
        Known only where every call is seen and passes a known leaf: calls in this module only
        (no reference handed on, no ``*args``), none from another file of the run."""
        if self.calls is None or getattr(func, "name", "_").endswith("_"):
            return None  # `fill_(w)`: a helper that mutates on purpose, reported at its calls (IPF005)
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]  # type: ignore[attr-defined]
        if param not in plain:
            return None
        index = plain.index(param)
        sites = self.calls.sites(func)  # type: ignore[arg-type]
        found: Optional[LeafOrigin] = None
        every = bool(sites)
        for site in sites:
            call = site.node
            if not site.called or not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
                every = False
                continue
            offset = 1 if plain[:1] and plain[0] in ("self", "cls") and isinstance(call.func, ast.Attribute) else 0
            arg = next((k.value for k in call.keywords if k.arg == param), None)
            if arg is None and 0 <= index - offset < len(call.args):
                arg = call.args[index - offset]
            origin = self._followed(arg, self.tree.statement_of(call)) if arg is not None else None
            if origin is None or not origin.known:
                every = False
            elif found is None:
                found = LeafOrigin(True, f"`{param}`, which the call at line {call.lineno} gives {origin.what}", False)
        if found is None:
            return None
        qualname = self.calls.qualname(func)  # type: ignore[arg-type]
        elsewhere = qualname is not None and self.calls.project is not None and any(
            not c.caller.startswith(self.calls.module_name + ".")
            for c in self.calls.project.calls.get(qualname, []))
        return found if every and not elsewhere else found._replace(known=False)

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
            return True
        return False

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



def _creates_leaf(call: ast.Call) -> bool:
    """``torch.randn(3, requires_grad=True)``, ``x.detach().requires_grad_()``."""
    if any(k.arg == "requires_grad" and is_const(k.value, True) for k in call.keywords):
        return True
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and (
        not call.args or is_const(call.args[0], True))


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


def _yields_parameters(expr: Optional[ast.AST]) -> Optional[str]:
    """``parameters`` / ``named_parameters`` for ``m.parameters()`` / ``m.named_parameters()``."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _PARAMETER_ITERATORS:
        return expr.func.attr
    return None
