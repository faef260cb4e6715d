"""Builders: what a call of a module-building function of this file hands back.

Real models bind many modules to what a builder returns rather than to a construction written
in place: ``self.drop = self.__dropout()`` (a private method choosing ``nn.Dropout2d`` or
``nn.Dropout3d``), ``self.gate = self.make_gate(kind)`` (a static or class method),
``self.act = get_act(name)``. A builder whose every ``return`` hands back something built in
its own body stands for the set of those constructions. This part reads, on the ``ast`` alone:

- which function of this file a call runs, where it can be read as a builder
  (:meth:`Factories.callee`): a top-level function bound once; a method of the calling class
  (``self.m()``, ``cls.m()``) or a static or class method of a class of the file (``C.m()``)
  that nothing else may stand for (no other binding of the name in the class body, no
  ``x.m = ...`` anywhere, no subclass of the file defining it again; a private ``__m`` cannot
  be overridden); ``f = staticmethod(g)`` in a class body runs ``g``;
- what its returns may hand back (:meth:`Factories.returned`): a call (a construction: what it
  builds is the asker's to read); a conditional expression (the branch its test always takes,
  else both); a name (the values of its bindings that reach the ``return``); a dict display (or
  an ``nn.ModuleDict`` of one) indexed by a key (the entries the key may pick: every entry
  where the key is not known); ``None`` is left out (nothing can call it). Anything else (a
  parameter, an attribute, a call's item, a ``yield``) and the answer is None: unknown;
- the other way round, the builder a construction is returned by, and the calls of that
  builder in the file (:meth:`Factories.builder_of`, :meth:`Factories.calls_of`).

Which way a test goes and which strings a key may hold are the summaries' to say
(``Decided.test``, ``Chains.values``): handed in as functions, since this part is below them.
"""

from __future__ import annotations

import ast
from typing import Callable, Dict, FrozenSet, List, NamedTuple, Optional, Tuple, cast

from codemod.analysis.facts import Facts
from codemod.analysis.syntax import FUNCTIONS, Function, Located, default_of, is_const, own_returns, passed_for, spreads

Decide = Callable[[ast.expr], Optional[bool]]  # True / False where a test always comes out so
Values = Callable[[ast.expr], Optional[FrozenSet[object]]]  # the constants an expression may hold

_MAX_DEPTH = 6  # values followed from a return back to what was built
_DECORATORS = frozenset({"staticmethod", "classmethod"})
_MODULE_DICTS = frozenset({"torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict"})
_LITERALS = (str, int, bool, type(None))


class Guard(NamedTuple):
    """A test on a builder's own parameter that a construction is built under: ``if name ==
    "relu":`` (``name`` in {"relu"} must be ``want``), ``elif name in ("gelu", "silu")``, the
    ``else`` of such (``want`` False), a conditional expression's branch."""

    param: str
    position: Optional[int]  # among the parameters a call's arguments meet (None: keyword-only)
    values: FrozenSet[object]
    want: bool
    default: Optional[Tuple[object]]  # (its default,) where that is a literal; None otherwise


class Factories:
    """Builders of this file and what their returns hand back."""

    def __init__(self, model: Facts, decide: Decide, values: Values) -> None:
        self.model = model
        self.decide = decide
        self.values = values
        self._returned: Dict[Tuple[Function, Optional[ast.Call]], Optional[List[ast.expr]]] = {}

    # ------------------------------------------------------------------ which function a call runs

    def callee(self, call: ast.Call) -> Optional[Function]:
        """The function of this file ``call`` runs, where nothing else may run in its place."""
        func = call.func
        if isinstance(func, ast.Name):
            return self._function(func)
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        static = self.model.static_function(func)
        if static is not None:
            return static  # `f = staticmethod(g)` in the class body: the module's `g`
        receiver = self._receiver(func.value)
        if receiver is None:
            return None
        cls, instance = receiver
        return self._method(cls, func.attr, instance)

    def _function(self, name: ast.Name) -> Optional[Function]:
        """A top-level ``def`` of the file, bound once and undecorated, not shadowed where called."""
        owner = self.model.owner(name)
        if owner is not self.model.module and name.id in self.model.flow(owner).bindings:
            return None  # a local name
        bound = self.model.flow(self.model.module).bindings.get(name.id, [])
        if len(bound) != 1 or bound[0].form != "def" or not isinstance(bound[0].stmt, FUNCTIONS):
            return None
        func = bound[0].stmt
        return func if self.model.parent(func) is self.model.module and not func.decorator_list else None

    def _receiver(self, name: ast.Name) -> Optional[Tuple[ast.ClassDef, bool]]:
        """The class whose attribute ``name.<m>`` reads, and whether it is read through an
        instance: ``self``/``cls`` of a method (its first parameter, not rebound), or a
        top-level class of the file named directly."""
        method = self.model.owner(name)
        cls = self.model.parent(method) if isinstance(method, FUNCTIONS) else None
        if isinstance(method, FUNCTIONS) and isinstance(cls, ast.ClassDef) \
                and not any(_decorator(d) == "staticmethod" for d in method.decorator_list):
            first = [*method.args.posonlyargs, *method.args.args][:1]
            bound = self.model.flow(method).bindings.get(name.id, [])
            if first and first[0].arg == name.id and len(bound) == 1 and bound[0].form == "param":
                return cls, True
        if method is not self.model.module and name.id in self.model.flow(method).bindings:
            return None
        bound = self.model.flow(self.model.module).bindings.get(name.id, [])
        if len(bound) == 1 and isinstance(bound[0].stmt, ast.ClassDef) and self.model.parent(bound[0].stmt) is self.model.module:
            return bound[0].stmt, False
        return None

    def _method(self, cls: ast.ClassDef, attr: str, instance: bool) -> Optional[Function]:
        defs = [s for s in cls.body if isinstance(s, FUNCTIONS) and s.name == attr]
        others = [s for s in cls.body if not isinstance(s, FUNCTIONS) and _binds(s, attr)]
        if len(defs) != 1 or others:
            return None
        method = defs[0]
        decorators = {_decorator(d) for d in method.decorator_list}
        if not decorators <= _DECORATORS or len(decorators) > 1 or not instance and not decorators:
            return None  # a property, a cache wrapper; `C.m(x)` of a plain method (x is its self)
        if self.model.attribute_writes(attr):
            return None  # `obj.m = ...`: another callable may stand in its place
        private = attr.startswith("__") and not attr.endswith("__")
        return method if private or not self._overridden(cls, attr) else None

    def _overridden(self, cls: ast.ClassDef, attr: str) -> bool:
        """A class of the file derived from ``cls`` (a few levels down) defines ``attr`` again."""
        parents, seen = {cls.name}, {cls.name}
        for _ in range(_MAX_DEPTH):
            subs = [c for c in self.model.module.body if isinstance(c, ast.ClassDef) and c.name not in seen
                    and any(isinstance(b, ast.Name) and b.id in parents for b in c.bases)]
            if not subs:
                return False
            if any(isinstance(s, (*FUNCTIONS, ast.Assign)) and _binds(s, attr) for c in subs for s in c.body):
                return True
            parents = {c.name for c in subs}
            seen |= parents
        return True

    # ------------------------------------------------------------------ what its returns hand back

    def returned(self, func: Function, call: Optional[ast.Call] = None) -> Optional[List[ast.expr]]:
        """The calls (constructions) every ``return`` of ``func``'s own body may hand back, in
        source order; with ``call``, a dict's key that is a parameter of ``func`` is what
        ``call`` passes for it. None where a return may hand back anything else, or nothing
        is returned."""
        key = (func, call)
        if key not in self._returned:
            self._returned[key] = None  # (a cycle: unknown)
            found = self._read_returns(func, call)
            if found is not None and call is not None:  # `if name == "relu": return ...` of another name
                found = [v for v in found if not any(self.excludes(g, call) for g in self.guards(v, func))] or None
            self._returned[key] = found
        return self._returned[key]

    def guards(self, value: ast.expr, func: Function) -> List[Guard]:
        """The tests on ``func``'s own parameters that ``value`` (in its body) is built under:
        the ``if``/``elif``/``else`` statements and conditional expressions around it whose
        test compares a parameter, never rebound, with literals (``==``, ``!=``, ``in``,
        ``not in`` a tuple, list or set display, under ``not``). Other tests say nothing."""
        found: List[Guard] = []
        prev: ast.AST = value
        for up in self.model.ancestors(value):
            if up is func:
                break
            side: Optional[bool] = None
            if isinstance(up, ast.If):
                side = True if any(s is prev for s in up.body) else False if any(s is prev for s in up.orelse) else None
            elif isinstance(up, ast.IfExp) and prev is not up.test:
                side = prev is up.body
            guard = self._guard(cast(ast.If, up).test, func, side) if side is not None else None
            if guard is not None:
                found.append(guard)
            prev = up
        return found

    def _guard(self, test: ast.expr, func: Function, want: bool) -> Optional[Guard]:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._guard(test.operand, func, not want)
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name)):
            return None
        op, right = test.ops[0], test.comparators[0]
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant) and isinstance(right.value, _LITERALS):
            values: FrozenSet[object] = frozenset({right.value})
        elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple, ast.List, ast.Set)) and all(
                isinstance(e, ast.Constant) and isinstance(e.value, _LITERALS) for e in right.elts):
            values = frozenset(cast(object, cast(ast.Constant, e).value) for e in right.elts)
        else:
            return None
        param = test.left.id
        flow = self.model.flow(func)
        bound = flow.bindings.get(param, [])
        if len(bound) != 1 or bound[0].form != "param" or param in flow.declared:
            return None
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if plain and self._takes_receiver(func):
            plain = plain[1:]
        default = default_of(func, param)
        literal = (default.value,) if isinstance(default, ast.Constant) and isinstance(default.value, _LITERALS) else None
        return Guard(param, plain.index(param) if param in plain else None, values,
                     want == isinstance(op, (ast.Eq, ast.In)), literal)

    def excludes(self, guard: Guard, call: ast.Call) -> bool:
        """Whether ``call`` never meets ``guard``: every constant it may pass for the parameter
        (or its default) is on the other side of the test."""
        if spreads(call):
            return False
        passed = passed_for(call, guard.param, guard.position)
        if passed is None:
            if guard.default is None:
                return False
            given: Optional[FrozenSet[object]] = frozenset(guard.default)
        else:
            given = self.values(passed)
        return bool(given) and all((v in guard.values) != guard.want for v in cast(FrozenSet[object], given))

    def _read_returns(self, func: Function, call: Optional[ast.Call]) -> Optional[List[ast.expr]]:
        returns = own_returns(func)
        if returns is None:
            return None
        found: List[ast.expr] = []
        for ret in sorted(returns, key=lambda r: (r.lineno, r.col_offset)):
            values = self._expand(ret.value, ret, func, call, 0)
            if values is None:
                return None
            found += values
        return found or None

    def _expand(self, value: Optional[ast.expr], at: Located, func: Function, call: Optional[ast.Call],
                depth: int) -> Optional[List[ast.expr]]:
        if value is None or is_const(value, None):
            return []
        if depth > _MAX_DEPTH:
            return None
        parts: List[Tuple[ast.expr, Located]]
        if isinstance(value, ast.Call):
            return [value]
        if isinstance(value, ast.IfExp):
            way = self.decide(value.test)
            parts = [(value.body, at)] if way is True else [(value.orelse, at)] if way is False \
                else [(value.body, at), (value.orelse, at)]
        elif isinstance(value, ast.Name):
            reaching = self.model.reaching(self.model.flow(func), value.id, at)
            if not reaching or any(b.form != "assign" or b.value is None for b in reaching):
                return None  # a parameter, a loop variable, an unpacked item
            parts = [(b.value, b.stmt) for b in reaching if b.value is not None]
        elif isinstance(value, ast.Subscript):
            entries = self._entries(value.value)
            if entries is None:
                return None
            keys = self.keys(value.slice, func, call)
            parts = [(entry, at) for name, entry in entries if keys is None or name in keys]
        else:
            return None
        found: List[ast.expr] = []
        for part, where in parts:
            expanded = self._expand(part, where, func, call, depth + 1)
            if expanded is None:
                return None
            found += expanded
        return found

    def _entries(self, container: ast.expr) -> Optional[List[Tuple[str, ast.expr]]]:
        """``{"relu": nn.ReLU(), ...}`` or ``nn.ModuleDict`` of such a display (or of a list of
        ``[name, module]`` pairs), every key a string: (key, value) pairs."""
        if isinstance(container, ast.Call) and self.model.torch_name(container.func) in _MODULE_DICTS \
                and len(container.args) == 1 and not container.keywords:
            container = container.args[0]
            if isinstance(container, (ast.List, ast.Tuple)):
                pairs = [e.elts for e in container.elts if isinstance(e, (ast.List, ast.Tuple)) and len(e.elts) == 2]
                if len(pairs) != len(container.elts) or not all(
                        isinstance(k, ast.Constant) and isinstance(k.value, str) for k, _ in pairs):
                    return None
                return [(str(k.value), v) for k, v in pairs if isinstance(k, ast.Constant)]
        if not isinstance(container, ast.Dict) or not container.keys:
            return None
        found: List[Tuple[str, ast.expr]] = []
        for k, v in zip(container.keys, container.values):
            if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
                return None  # a `**spread`, a computed key
            found.append((k.value, v))
        return found

    def keys(self, key: ast.expr, func: Function, call: Optional[ast.Call]) -> Optional[FrozenSet[object]]:
        """The strings a dict's key may be: a parameter of the builder is what ``call`` passes
        (or its default); anything else as ``Values`` says."""
        if call is not None and isinstance(key, ast.Name):
            passed = self.argument(func, key, call)
            if passed is not None:
                return passed[1]
        return self.values(key)

    def argument(self, func: Function, name: ast.Name, call: ast.Call
                 ) -> Optional[Tuple[str, Optional[FrozenSet[object]]]]:
        """Where ``name`` in ``func`` is only ever its parameter (never rebound): (the
        parameter, the constants ``call`` gives it: what it passes, else the default; None where
        that is not known). None where ``name`` is no such parameter."""
        flow = self.model.flow(func)
        bound = flow.bindings.get(name.id, [])
        if len(bound) != 1 or bound[0].form != "param" or name.id in flow.declared:
            return None
        plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if plain and self._takes_receiver(func):
            plain = plain[1:]
        position = plain.index(name.id) if name.id in plain else None
        if spreads(call):
            return name.id, None
        passed = passed_for(call, name.id, position)
        if passed is None:
            passed = default_of(func, name.id)
        return name.id, (self.values(passed) if passed is not None else None)

    def _takes_receiver(self, func: Function) -> bool:
        """``func`` is a method whose first parameter its call fills itself (``self.m()``,
        ``cls.m()``, ``C.m()`` of a class method), not a static one."""
        return isinstance(self.model.parent(func), ast.ClassDef) \
            and not any(_decorator(d) == "staticmethod" for d in func.decorator_list)

    # ------------------------------------------------------------------ the other way round

    def builder_of(self, construction: ast.Call) -> Optional[Function]:
        """The function whose returns may hand back ``construction`` (built in its own body)."""
        func = self.model.owner(construction)
        if not isinstance(func, FUNCTIONS):
            return None
        returned = self.returned(func)
        return func if returned is not None and any(r is construction for r in returned) else None

    def calls_of(self, func: Function) -> List[ast.Call]:
        """The calls of the file that run ``func`` (:meth:`callee`), in source order; references
        that hand it on (``make = self.__drop``) are not calls and are not followed."""
        parent = self.model.parent(func)
        table = self.model.calls_in(self.model.module)
        if parent is self.model.module:
            keys = [func.name]
            keys += [k for k in table if k is not None and k.endswith(f".{func.name}") and k.count(".") == 1]
        elif isinstance(parent, ast.ClassDef):
            keys = [k for k in table if k is not None and k.count(".") == 1 and k.endswith(f".{func.name}")]
        else:
            return []
        found = [c for k in dict.fromkeys(keys) for c in table.get(k, []) if self.callee(c) is func]
        return sorted(found, key=lambda c: (c.lineno, c.col_offset))



def _decorator(node: ast.expr) -> str:
    """``@staticmethod`` -> "staticmethod"; ``@functools.lru_cache()`` -> "lru_cache"."""
    node = node.func if isinstance(node, ast.Call) else node
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""


def _binds(stmt: ast.stmt, attr: str) -> bool:
    if isinstance(stmt, FUNCTIONS):
        return stmt.name == attr
    return any(isinstance(n, ast.Name) and n.id == attr and not isinstance(n.ctx, ast.Load) for n in ast.walk(stmt))
