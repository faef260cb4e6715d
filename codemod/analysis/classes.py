"""Classes and scopes indexed once: what ``self.<attr>`` is assigned anywhere in a class,
which buffers it registers, and the calls in a class, function or module by callee key."""

from __future__ import annotations

import ast
from typing import Callable, Dict, List, NamedTuple, Optional, Set, Tuple, Union, cast

from codemod.analysis.kinds import PARAMETER_CLASSES, Kind
from codemod.analysis.source import source_order
from codemod.analysis.syntax import call_args, first_arg, is_const, target_key
from codemod.analysis.tree import Tree

# What ``self.<attr>`` is given: an expression, or the Kind a registration makes it.
AttrValue = Union[ast.expr, Kind]
Calls = Dict[Optional[str], List[ast.Call]]  # callee key (None: none) -> calls, in source order


class ClassIndex(NamedTuple):
    attrs: Dict[str, List[AttrValue]]  # self.<attr> -> values assigned (ast nodes; Kinds for registrations)
    buffers: Set[str]  # names registered with register_buffer
    calls: Calls


def paired(target: ast.expr, value: Optional[ast.expr]) -> List[Tuple[ast.expr, ast.expr]]:
    """(target, the value it is given) of an assignment: ``self.a, self.b = None, cfg`` gives
    each its element (displays of one length, nothing starred); another unpacking gives none."""
    if value is None:
        return []
    if not isinstance(target, (ast.Tuple, ast.List)):
        return [(target, value)]
    if not isinstance(value, (ast.Tuple, ast.List)) or len(value.elts) != len(target.elts) \
            or any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts)):
        return []
    return [pair for t, v in zip(target.elts, value.elts) for pair in paired(t, v)]


class Classes:
    """One index per class, one call table per scope (two caches, one kind of entry each)."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self._classes: Dict[ast.ClassDef, ClassIndex] = {}
        self._calls: Dict[ast.AST, Calls] = {}
        self._writes: Optional[Dict[str, List[ast.expr]]] = None
        self._mentions: Optional[Dict[str, List[ast.expr]]] = None
        self._static_attrs: Optional[Dict[Tuple[str, str], ast.ClassDef]] = None  # (class, attr) -> class
        self._top: Optional[Dict[str, ast.ClassDef]] = None  # top-level classes by name

    def _class_index(self, cls: ast.ClassDef) -> ClassIndex:
        """One walk of a class: ``self.<attr>`` values, buffers, and calls by callee key."""
        found = self._classes.get(cls)
        if found is not None:
            return found
        attrs: Dict[str, List[AttrValue]] = {}
        buffers: Set[str] = set()
        calls: Calls = {}
        kids, todo = self.tree.source.children, [cast(ast.AST, cls)]  # (``Tree.walk``'s order, without a generator)
        pop, push, Assign, AnnAssign, Call = todo.pop, todo.extend, ast.Assign, ast.AnnAssign, ast.Call
        while todo:
            node = pop()
            push(kids[node])
            ntype = node.__class__
            if ntype is not Assign and ntype is not AnnAssign and ntype is not Call:
                continue
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t, value in (pair for t in targets for pair in paired(t, node.value)):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        attrs.setdefault(t.attr, []).append(value)
            elif isinstance(node, ast.Call):
                callee = target_key(node.func)
                calls.setdefault(callee, []).append(node)
                if callee in ("self.register_buffer", "self.register_parameter"):
                    first = first_arg(node)
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        if callee == "self.register_buffer":
                            buffers.add(first.value)
                        if len(call_args(node)) >= 2:
                            kind = Kind.PARAMETER if callee == "self.register_parameter" else Kind.TENSOR
                            attrs.setdefault(first.value, []).append(kind)
        for found_calls in calls.values():
            found_calls.sort(key=source_order)
        found = ClassIndex(attrs, buffers, calls)
        self._classes[cls] = found
        return found

    def class_attrs(self, cls: ast.ClassDef) -> Dict[str, List[AttrValue]]:
        """``self.<attr>`` -> values assigned to it anywhere in the class (Kinds for registrations)."""
        return self._class_index(cls).attrs

    def class_buffers(self, cls: ast.ClassDef) -> Set[str]:
        return self._class_index(cls).buffers

    def sets_attribute(self, cls: ast.ClassDef, attr: str) -> bool:
        """Does code the module shows give ``self.<attr>`` of ``cls`` a value: an assignment in the
        class (``self.<attr> = ...`` in any method, ``<attr> = ...`` in its body), or in a base class
        defined at the top level of this module (by name, followed through its own bases)? False
        for an attribute only an unseen base sets (``self.inplace`` of a subclass of ``nn.Dropout``):
        its value is unknown."""
        seen: Set[ast.ClassDef] = set()
        todo = [cls]
        while todo:
            one = todo.pop()
            if one in seen:
                continue
            seen.add(one)
            if attr in self.class_attrs(one) or any(
                    target_key(t) == attr for stmt in one.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                    for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])):
                return True
            top = self._top_classes()
            todo += [top[b.id] for b in one.bases if isinstance(b, ast.Name) and b.id in top]
        return False

    def _top_classes(self) -> Dict[str, ast.ClassDef]:
        """The module's top-level classes by name (the last definition of a name)."""
        if self._top is None:
            self._top = {s.name: s for s in self.tree.source.tree.body if isinstance(s, ast.ClassDef)}
        return self._top

    def frozen_parameter_class(self, func: ast.expr, qualified: Callable[[ast.AST], Set[str]]) -> bool:
        """``func`` names a top-level class of the module whose instances require no grad: an
        ``nn.Parameter`` subclass (``qualified``: the qualified names of an expression) whose
        ``__new__``, its own or the nearest one it inherits from the module's classes, returns
        only ``super().__new__(cls, data, requires_grad=False)`` (or ``False`` third, or through
        ``nn.Parameter.__new__`` / the class's parent named), the literal False; and no
        class of the module deriving from it gives ``__new__`` another flag (one outside is not
        seen). ``isinstance(p, Frozen)`` holds, and ``Frozen(t)`` makes, a leaf one may write into."""
        top = self._top_classes()
        cls = top.get(func.id) if isinstance(func, ast.Name) else None
        if cls is None or self._new_flag(cls, qualified, 0) is not False:
            return False
        derived = [c for c in top.values() if c is not cls and self._derives(c, cls, 0)]
        return all(self._new_flag(c, qualified, 0) is False for c in derived)

    def _derives(self, cls: ast.ClassDef, base: ast.ClassDef, depth: int) -> bool:
        top = self._top_classes()
        parents = [top.get(b.id) for b in cls.bases if isinstance(b, ast.Name)]
        return depth < 8 and any(p is base or p is not None and self._derives(p, base, depth + 1) for p in parents)

    def _new_flag(self, cls: ast.ClassDef, qualified: Callable[[ast.AST], Set[str]], depth: int) -> Optional[bool]:
        """The requires_grad every ``__new__`` of ``cls`` passes on (False: a constant that is not
        True, on every return); None where not shown or ``cls`` is no ``nn.Parameter`` subclass."""
        top = self._top_classes()
        parents = [b for b in cls.bases if not (isinstance(b, ast.Name) and top.get(b.id) is cls)]
        inherited = [top[b.id] for b in parents if isinstance(b, ast.Name) and b.id in top]
        direct = any(qualified(b) & PARAMETER_CLASSES for b in parents)
        if depth > 8 or not direct and not inherited:
            return None
        new = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__new__"]
        if not new:
            if direct or len(inherited) != 1:
                return None  # (nn.Parameter's own `__new__` defaults to requires_grad=True)
            return self._new_flag(inherited[0], qualified, depth + 1)
        if len(new) != 1 or not direct and len(inherited) != 1:
            return None
        if not direct and self._new_flag(inherited[0], qualified, depth + 1) is None:
            return None  # (a parent that is no nn.Parameter subclass of the module's)
        nodes = _own_nodes(new[0])
        if any(isinstance(n, ast.Attribute) and n.attr == "requires_grad" and isinstance(n.ctx, ast.Store)
               or isinstance(n, ast.Attribute) and n.attr == "requires_grad_" for n in nodes):
            return None  # (`instance.requires_grad_(flag)` after it)
        returns = [_made(r.value, nodes) for r in nodes if isinstance(r, ast.Return)]
        flags = [_passed_flag(r, parents) for r in returns]
        return False if returns and all(f is not None and is_const(f, False) for f in flags) else None

    def attribute_writes(self, attr: str) -> List[ast.expr]:
        """The places anywhere in the module that change ``<x>.<attr>`` or an item of it:
        ``x.attr = v`` / ``del x.attr`` / ``x.attr += v`` (the ``Attribute`` stored) and
        ``x.attr[i] = v`` / ``del x.attr[i]`` (the ``Subscript`` stored), of any ``x``,
        ``self`` included. Mutating calls (``x.attr.append(m)``) are the caller's to read."""
        if self._writes is None:
            self._writes = {}
            for node in self.tree.source.walked(ast.Name):  # names and attributes
                if not isinstance(node, ast.Attribute):
                    continue
                if not isinstance(node.ctx, ast.Load):
                    self._writes.setdefault(node.attr, []).append(node)
                    continue
                up = self.tree.parent(node)
                if isinstance(up, ast.Subscript) and up.value is node and not isinstance(up.ctx, ast.Load):
                    self._writes.setdefault(node.attr, []).append(up)
        return self._writes.get(attr, [])

    def static_function(self, func: ast.expr) -> Optional[ast.FunctionDef]:
        """The module-level function a call of ``C.attr`` / ``self.attr`` runs where the class
        body binds ``attr = staticmethod(f)`` (or ``attr = f``, read through the class: a plain
        function there), its only binding of ``attr``, and nothing else can: no ``x.attr = ...``
        anywhere in the module, no class of the file deriving from ``self``'s class (an
        override), ``f`` an undecorated ``def`` the module binds once. The call passes its
        arguments to ``f`` as they are (no ``self``). None otherwise."""
        key = target_key(func)
        if key is None or key.count(".") != 1:
            return None
        head, attr = key.split(".")
        if self._static_attrs is None:  # one scan: the attributes class bodies bind to a plain name
            self._static_attrs = {(c.name, s.targets[0].id): c for c in self.tree.module.body if isinstance(c, ast.ClassDef)
                                  for s in c.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                                  and isinstance(s.targets[0], ast.Name) and isinstance(s.value, (ast.Name, ast.Call))}
        module = self.tree.module
        cls = self.tree.enclosing_class(func) if head == "self" else None
        if self._static_attrs.get((cls.name if cls is not None else head, attr)) is None or self.attribute_writes(attr):
            return None  # (the cheap screen first: most calls are of no such attribute)
        top = [s for s in module.body if _binds(s, head)] if head != "self" else []
        cls = cls if head == "self" else (top[0] if len(top) == 1 and isinstance(top[0], ast.ClassDef) else None)
        if cls is None or self.tree.parent(cls) is not module:
            return None
        bound = [s for s in cls.body if _binds(s, attr)]
        if len(bound) != 1 or not isinstance(bound[0], ast.Assign):
            return None
        if head == "self" and any(isinstance(c, ast.ClassDef) and any(
                target_key(b) == cls.name or isinstance(b, ast.Attribute) and b.attr == cls.name for b in c.bases)
                for c in self.tree.walk(module)):
            return None  # a subclass may bind `attr` otherwise
        value = bound[0].value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "staticmethod" \
                and len(value.args) == 1 and not value.keywords:
            value = value.args[0]
        elif head == "self":
            return None  # `attr = f` read through an instance is a bound method: `self` is passed
        if not isinstance(value, ast.Name):
            return None
        defs = [s for s in module.body if _binds(s, value.id)]
        if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef) or defs[0].decorator_list:
            return None
        return defs[0]

    def mentions(self, word: str) -> List[ast.expr]:
        """The module's names ``word`` and attributes ``<x>.word``, any context, in the indexing
        walk's order: where to start looking up for what is done to them."""
        if self._mentions is None:
            self._mentions = {}
            for node in self.tree.source.walked(ast.Name):  # names and attributes
                word_of = node.id if isinstance(node, ast.Name) else cast(ast.Attribute, node).attr
                self._mentions.setdefault(word_of, []).append(cast(ast.expr, node))
        return self._mentions.get(word, [])

    def calls_in(self, scope: ast.AST) -> Calls:
        """Callee key -> the calls in ``scope`` (a class, function or module), found once;
        calls of something without a key (``f()(x)``) under None."""
        if isinstance(scope, ast.ClassDef):
            return self._class_index(scope).calls
        if scope not in self._calls:
            found: Calls = {}
            # The module's calls were listed when its tree was indexed (in the walk's order).
            nodes = self.tree.source.walked(ast.Call) if scope is self.tree.module else self.tree.walk(scope)
            for call in nodes:
                if isinstance(call, ast.Call):
                    found.setdefault(target_key(call.func), []).append(call)  # None: no key
            for calls in found.values():
                calls.sort(key=source_order)
            self._calls[scope] = found
        return self._calls[scope]


def _binds(stmt: ast.stmt, name: str) -> bool:
    """Whether a statement of a body (a module's, a class's) binds ``name`` at that level."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in stmt.names)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))
    return any(isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load) for n in ast.walk(stmt)) \
        if isinstance(stmt, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.If, ast.Try, ast.While)) else False


def _own_nodes(func: ast.FunctionDef) -> List[ast.AST]:
    """The nodes of ``func``'s body, not those of functions or classes nested in it."""
    found: List[ast.AST] = []
    todo: List[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return found


def _made(value: Optional[ast.expr], nodes: List[ast.AST]) -> Optional[ast.expr]:
    """``value``, or where it is a name the function binds once, by a plain assignment, what
    that assignment gives it (``instance = super().__new__(...)``; ``return instance``)."""
    if not isinstance(value, ast.Name):
        return value
    bound = [n for n in nodes if isinstance(n, ast.Name) and n.id == value.id and not isinstance(n.ctx, ast.Load)]
    assigned = [n for n in nodes if isinstance(n, ast.Assign) and len(n.targets) == 1
                and isinstance(n.targets[0], ast.Name) and n.targets[0].id == value.id]
    return assigned[0].value if len(bound) == 1 and len(assigned) == 1 else None


def _passed_flag(value: Optional[ast.expr], parents: List[ast.expr]) -> Optional[ast.expr]:
    """The ``requires_grad`` that ``super().__new__(cls, data, requires_grad=...)`` (or
    ``Parent.__new__(cls, data, ...)``, ``Parent`` a base named) passes on; None where ``value``
    is no such call or passes none (nn.Parameter's default is True)."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "__new__"):
        return None
    owner = value.func.value
    named = any(ast.dump(owner) == ast.dump(p) for p in parents)
    if not named and not (isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name)
                          and owner.func.id == "super" and not owner.args):
        return None
    flags = [k.value for k in value.keywords if k.arg == "requires_grad"] + list(value.args[2:3])
    return flags[0] if len(flags) == 1 and not any(isinstance(a, ast.Starred) for a in value.args) \
        and not any(k.arg is None for k in value.keywords) else None
