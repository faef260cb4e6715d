"""Calls between the functions of one module (and, through ``ProjectIndex``, of a project): who
calls a function, with grad on or off, and what the callers do with its result and arguments.

Two judgements rest on it:
- grad mode across calls: a function whose every call runs with grad off (under ``no_grad``,
  from an optimizer's ``step``, from a function that is itself only called so) runs with grad
  off, as do the bodies of custom autograd functions and ``torch.library.custom_op`` kernels;
- mutation contracts: a function that mutates a parameter is meant to when its name ends in
  ``_`` (PyTorch's convention), when it returns nothing for that parameter or something else,
  or when a caller ignores the result or reads the argument after the call.
"""

from __future__ import annotations

import ast
from typing import (
    TYPE_CHECKING,
    Callable,
    Dict,
    FrozenSet,
    List,
    Literal,
    NamedTuple,
    Optional,
    Set,
    Tuple,
    Union,
    cast,
)

from codemod.analysis.binder import Binder
from codemod.analysis.syntax import FUNCTIONS, Function, Owner, target_key
from codemod.analysis.tree import Tree, function_names

if TYPE_CHECKING:
    from codemod.analysis.project import CallFact, ProjectIndex

FunctionReason = Literal["no-grad-callers", "autograd-function"]
ContractReason = Literal["trailing-underscore", "mutation-as-output", "callers-rely-on-mutation"]
LocalReason = Callable[[ast.AST], Optional[str]]  # grad off around a node, from its own function
Methods = Dict[ast.ClassDef, Dict[str, Function]]
_FUNCTION_BASES = ("Function", "autograd.Function", "torch.autograd.Function", "torch.autograd.function.Function")


class CallSite(NamedTuple):
    """A call of (or a reference to) a function of this module."""

    node: Union[ast.Call, ast.Name, ast.Attribute]  # the call, or the name that hands the function on
    caller: Owner  # the function (or module) whose body holds it
    called: bool  # False: a reference (``func = f``): its calls cannot be followed
    result_ignored: bool  # the call is a statement of its own


ReadAfter = Callable[[CallSite, ast.expr], bool]  # is the argument read after the call?


class Calls:
    """The module's functions by the keys calls use (``f``, ``Class.method``), and their sites."""

    def __init__(self, tree: Tree, binder: Binder, project: Optional["ProjectIndex"] = None,
                 module_name: str = "") -> None:
        self.tree = tree
        self.binder = binder
        self.module = tree.module
        self.project = project  # the run's index: callers in other files (None: this file only)
        self.module_name = module_name
        self._sites: Optional[Dict[Function, List[CallSite]]] = None
        self._grad_off: Dict[Function, bool] = {}
        self._registers: Optional[bool] = None
        self._instances: Dict[Function, Optional[List[CallSite]]] = {}  # `inst(x)` running a `__call__` / `forward`

    def qualname(self, func: Function) -> Optional[str]:
        """``pkg.mod.f`` / ``pkg.mod.Class.m`` for the module's functions and methods that the
        project index knows; None for others (nested functions) or without an index."""
        if self.project is None:
            return None
        parent = self.tree.parent(func)
        if parent is self.module:
            name = f"{self.module_name}.{func.name}"
        elif isinstance(parent, ast.ClassDef) and self.tree.parent(parent) is self.module:
            name = f"{self.module_name}.{parent.name}.{func.name}"
        else:
            return None
        return name if self.project.knows(name) else None

    # ------------------------------------------------------------------ the call graph
    def sites(self, func: Function) -> List[CallSite]:
        """Every call of ``func`` (and reference to it) in this module."""
        if self._sites is None:
            self._sites = self._index()
        return self._sites.get(func, [])

    def _index(self) -> Dict[Function, List[CallSite]]:
        top: Dict[str, Function] = {}
        methods: Methods = {}
        for stmt in self.module.body:
            if isinstance(stmt, FUNCTIONS):
                top[stmt.name] = stmt
            elif isinstance(stmt, ast.ClassDef):
                methods[stmt] = {s.name: s for s in stmt.body if isinstance(s, FUNCTIONS)}
        classes = {c.name: c for c in methods}
        found: Dict[Function, List[CallSite]] = {}
        # What ``_resolve`` can find at all: a name of a top-level function, ``x.m`` with ``m`` a
        # method of a class of the module (the others are passed over without a call).
        named = {m for defs in methods.values() for m in defs}
        Name, Attribute = ast.Name, ast.Attribute
        for walked in self.tree.source.walked(ast.Name):  # names and attributes, in the walk's order
            kind = walked.__class__
            if kind is Name:
                if walked.id not in top:  # type: ignore[attr-defined]
                    continue
            elif kind is not Attribute or walked.attr not in named:  # type: ignore[attr-defined]
                continue
            elif walked.value.__class__ not in (Name, ast.Call):  # type: ignore[attr-defined]
                continue
            node = cast(Union[ast.Name, ast.Attribute], walked)
            if not isinstance(node.ctx, ast.Load):
                continue
            func = self._resolve(node, top, methods, classes)
            if func is None:
                continue
            parent = self.tree.parent(node)
            site_node: Union[ast.Call, ast.Name, ast.Attribute] = node
            result_ignored = False
            if isinstance(parent, ast.Call) and parent.func is node:
                site_node = parent
                result_ignored = isinstance(self.tree.parent(parent), ast.Expr)
            found.setdefault(func, []).append(
                CallSite(site_node, self.tree.owner(site_node), site_node is not node, result_ignored))
        return found

    def _resolve(self, node: Union[ast.Name, ast.Attribute], top: Dict[str, Function], methods: Methods,
                 classes: Dict[str, ast.ClassDef]) -> Optional[Function]:
        if isinstance(node, ast.Name):
            func = top.get(node.id)
            if func is None:
                return None
            owner = self.tree.owner(node)
            if owner is not self.module and node.id in function_names(self.tree) \
                    and node.id in self.binder.flow(owner, nested=False).bindings:
                return None  # a local of the same name
            return func
        if isinstance(node.value, ast.Call):  # `Cls(d).m(x)`
            return self._instance_method(node, [node.value], classes, methods)
        if not isinstance(node.value, ast.Name):
            return None  # (``a.b`` only: the key of one dot)
        head, attr = node.value.id, node.attr
        if head in ("self", "cls"):
            cls = self.tree.enclosing_class(node)
            return methods.get(cls, {}).get(attr) if cls is not None else None
        cls = classes.get(head)
        if cls is not None:
            return methods[cls].get(attr)
        owner = self.tree.owner(node)
        if not isinstance(owner, FUNCTIONS):
            return None
        flow = self.binder.flow(owner, nested=False)
        bindings = flow.bindings.get(head, [])
        if head in flow.declared or not bindings or any(b.form != "assign" for b in bindings):
            return None
        found = self._instance_method(node, [b.value for b in bindings], classes, methods)
        if found is not None and any(  # (the function is walked only for a method found)
                isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load) and n.attr == attr
                and isinstance(n.value, ast.Name) and n.value.id == head for n in ast.walk(owner)):
            return None  # `inst.m = other` sets what the instance's `m` is
        return found

    def _instance_method(self, node: ast.Attribute, built: List[Optional[ast.expr]],
                         classes: Dict[str, ast.ClassDef], methods: Methods) -> Optional[Function]:
        """``inst.m`` where every value the instance may be is a construction ``Cls(...)`` of one
        class of the module (a name no function binds): ``Cls``'s own method ``m``, undecorated
        (a call then passes its arguments after the receiver); None otherwise."""
        names = {b.func.id for b in built if isinstance(b, ast.Call) and isinstance(b.func, ast.Name)}
        if len(names) != 1 or len(built) != sum(isinstance(b, ast.Call) for b in built):
            return None
        name = names.pop()
        cls = classes.get(name)
        owner = self.tree.owner(node)
        if cls is None or len(self.binder.flow(self.module, nested=False).bindings.get(name, [])) != 1 \
                or isinstance(owner, FUNCTIONS) and name in self.binder.flow(owner, nested=False).bindings:
            return None  # the class's name rebound
        func = methods[cls].get(node.attr)
        return func if func is not None and not func.decorator_list else None

    def unpassed(self, call: ast.Call, func: Function) -> Optional[int]:
        """How many leading positional parameters of ``func`` ``call`` does not pass (:func:`unpassed`)."""
        return unpassed(self.tree, call, func)

    def bound_runs(self, func: Function) -> bool:
        """Whether a call of an instance that the project index lists for ``func``
        (``CallFact.bound``: ``block(x)`` for a class's ``__call__`` or ``forward``, ``block.m(x)``
        for its method ``m``) runs ``func`` with the call's arguments after the receiver: a method
        of a top-level class taking one, neither of them decorated (a ``staticmethod`` takes no
        receiver, another decorator may hand on something else), and, for ``forward``, no
        ``__call__`` of the class's own or of a base class of the run, in this file or another
        (``block(x)`` runs that instead)."""
        cls = self.tree.parent(func)
        if not isinstance(cls, ast.ClassDef) or self.tree.parent(cls) is not self.module \
                or func.decorator_list or cls.decorator_list or not (func.args.posonlyargs or func.args.args):
            return False
        if func.name == "__init__":
            plain = self.tree.plain_constructions.get(cls)
            if plain is None:
                plain = self.tree.plain_constructions[cls] = _plain_construction(self.tree, cls, set())
            return plain
        return func.name != "forward" or not _calls_itself(self, cls, set())

    # ---------------------------------------------------------------- grad mode
    def function_reason(self, func: Function, local_reason: LocalReason) -> Optional[FunctionReason]:
        """Why ``func`` runs with grad off as a whole, if it does. ``local_reason(node)`` is
        the grad-mode reason the code around a node gives (``GradMode``), without this one."""
        if self.is_autograd_kernel(func):
            return "autograd-function"
        qualname = self.qualname(func)
        if qualname is not None:  # the project's calls, this file's included
            assert self.project is not None  # qualname() is None without one
            off = self.project.grad_off(qualname) or _off_as_instance(self, func, qualname, local_reason)
            return "no-grad-callers" if off else None
        return "no-grad-callers" if self._off_by_callers(func, local_reason, set()) else None

    def _off_by_callers(self, func: Function, local_reason: LocalReason, seen: Set[Function]) -> bool:
        known = self._grad_off.get(func)
        if known is not None:
            return known
        if func in seen:
            return False  # a recursive cycle with no way in from grad-off code
        seen.add(func)
        through = instance_sites(self, func)  # (None: an instance may run it unseen)
        sites = self.sites(func) + (through or [])
        result = through is not None and bool(sites) and all(self._site_off(s, local_reason, seen) for s in sites)
        seen.discard(func)
        if not seen:  # a whole answer
            self._grad_off[func] = result
        return result

    def _site_off(self, site: CallSite, local_reason: LocalReason, seen: Set[Function]) -> bool:
        if local_reason(site.node) in ("no-grad", "optimizer", "grad-guard"):  # as the project index counts it
            return True
        caller = site.caller
        if not isinstance(caller, FUNCTIONS):
            return False  # module level, grad on
        if self._decided_on(site.node, caller):
            return False
        return self.is_autograd_kernel(caller) or self._off_by_callers(caller, local_reason, seen)

    def _decided_on(self, node: ast.AST, caller: Function) -> bool:
        return _decided_on(self.tree, node, caller)

    def is_autograd_kernel(self, func: Function) -> bool:
        """``forward``/``backward`` of a custom ``autograd.Function``, or a ``custom_op`` body."""
        for dec in func.decorator_list:
            callee = dec.func if isinstance(dec, ast.Call) else dec
            key = target_key(callee) or ""
            if key.split(".")[-1] in ("custom_op", "register_kernel", "register_autograd", "impl"):
                return True
        registers = self._registers_kernels()
        for site in self.sites(func) if registers else ():  # `op.register_autograd(backward, ...)`
            call = self.tree.parent(site.node)
            if not site.called and isinstance(call, ast.Call) and (target_key(call.func) or "").split(".")[-1] in (
                    "register_autograd", "register_kernel"):
                return True
        if func.name in ("forward", "backward", "setup_context", "jvp", "vjp"):
            cls = self.tree.parent(func)
            if isinstance(cls, ast.ClassDef) and any((target_key(b) or "") in _FUNCTION_BASES for b in cls.bases):
                return True
        return False

    def _registers_kernels(self) -> bool:
        """Does the module's text name ``register_autograd``/``register_kernel`` (asked once: the
        text was scanned per function, which made a check quadratic in the functions)."""
        if self._registers is None:
            text = self.tree.source.text
            self._registers = "register_autograd" in text or "register_kernel" in text
        return self._registers

    # ------------------------------------------------------------ mutation contracts
    def contract(self, func: Function, param: str, read_after: ReadAfter) -> Optional[ContractReason]:
        """Whether mutating the parameter ``param`` of ``func`` is the function's purpose.
        ``read_after(site, argument)`` says whether the caller reads ``argument`` after ``site``."""
        name = func.name
        if name.endswith("_") and not name.endswith("__"):
            return "trailing-underscore"
        if name == "forward":
            return None  # a module's input: its callers pass values, not buffers to fill
        flow = self.binder.flow(func)
        returned = self._returned_names(func)
        if not flow.returns_value or param not in returned:
            return "mutation-as-output"
        qualname = self.qualname(func)
        if qualname is not None:  # the project's calls, this file's included
            assert self.project is not None
            rely = self.project.callers_rely(qualname, param)
            return "callers-rely-on-mutation" if rely else None
        index = _param_index(func, param)
        for site in self.sites(func):
            if not site.called:
                continue
            if site.result_ignored:
                return "callers-rely-on-mutation"
            argument = _argument(site.node, param, index)
            if argument is not None and target_key(argument) and read_after(site, argument):
                return "callers-rely-on-mutation"
        return None

    def _returned_names(self, func: Function) -> Set[str]:
        names: Set[str] = set()
        for node in self.tree.returns(func):
            if node.value is not None:
                values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
                names.update(v.id for v in values if isinstance(v, ast.Name))
        return names


def _calls_itself(calls: Calls, cls: ast.ClassDef, seen: Set[str]) -> bool:
    """Whether ``cls`` or a base class of the run binds ``__call__`` (by ``def`` or otherwise):
    the module's classes read here, the others' through the project index."""
    if cls.name in seen:
        return False
    seen.add(cls.name)
    if any(isinstance(s, FUNCTIONS) and s.name == "__call__" for s in cls.body) or any(
            isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.id == "__call__"
            for s in cls.body if not isinstance(s, FUNCTIONS) for n in ast.walk(s)):
        return True
    local = {c.name: c for c in calls.module.body if isinstance(c, ast.ClassDef)}
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in local and _calls_itself(calls, local[base.id], seen):
            return True
    if calls.project is None:
        return False
    fact = calls.project.classes.get(calls.project.canonical(f"{calls.module_name}.{cls.name}"))
    return fact is not None and _base_calls(calls.project, fact.bases, set())


def _param_index(func: Function, param: str) -> Optional[int]:
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)]
    if plain and plain[0] in ("self", "cls"):
        plain = plain[1:]
    return plain.index(param) if param in plain else None


def _decided_on(tree: Tree, node: ast.AST, caller: Function) -> bool:
    """A with-statement between ``node`` and its function that turns grad on."""
    for anc in tree.ancestors(node):
        if anc is caller:
            return False
        if isinstance(anc, (ast.With, ast.AsyncWith)) and any(
            "enable_grad" in (target_key(i.context_expr.func if isinstance(i.context_expr, ast.Call) else i.context_expr) or "")
            for i in anc.items
        ):
            return True
    return False


def instance_sites(calls: Calls, func: Function) -> Optional[List[CallSite]]:
    """The calls of this module that run ``func``, the ``__call__`` of a top-level class (or its
    ``forward``, where the class defines no ``__call__`` of its own), through an instance:
    ``Cls(d)(x)``, or ``inst(x)`` of ``inst = Cls(...)`` in a function. ``Calls.sites`` lists only
    calls by name; these count where grad mode is asked (``with torch.no_grad(): cam(image)``).
    None where an instance may be called where this does not look: the class named other than to
    build it (a base, a reference), or an instance kept (``self.cam = Cam(net)``), handed on or
    read other than called. Empty for any other function."""
    if func in calls._instances:
        return calls._instances[func]
    found: List[CallSite] = []
    calls._instances[func] = found
    cls = calls.tree.parent(func)
    if func.name not in ("__call__", "forward") or not isinstance(cls, ast.ClassDef) \
            or calls.tree.parent(cls) is not calls.module \
            or func.name == "forward" and any(isinstance(s, FUNCTIONS) and s.name == "__call__" for s in cls.body):
        return found
    names = [n for n in calls.tree.source.walked(ast.Name) if isinstance(n, ast.Name) and n.id == cls.name]
    built = [n for n in names if isinstance(calls.tree.parent(n), ast.Call) and calls.tree.parent(n).func is n]  # type: ignore[union-attr]
    if len(built) != len(names) or len(calls.binder.flow(calls.module, nested=False).bindings.get(cls.name, [])) != 1:
        calls._instances[func] = None
        return None
    for name in built:
        made = cast(ast.Call, calls.tree.parent(name))
        parent, owner = calls.tree.parent(made), calls.tree.owner(made)
        if isinstance(parent, ast.Call) and parent.func is made:
            found.append(CallSite(parent, owner, True, isinstance(calls.tree.parent(parent), ast.Expr)))
            continue
        held = _only_called(calls, parent, owner)
        if held is None:
            calls._instances[func] = None
            return None
        found.extend(CallSite(c, calls.tree.owner(c), True, isinstance(calls.tree.parent(c), ast.Expr)) for c in held)
    return found


def _only_called(calls: Calls, stmt: Optional[ast.AST], owner: ast.AST) -> Optional[List[ast.Call]]:
    """``inst = Cls(...)`` (``stmt``) in a function whose every read of ``inst`` (nested functions'
    too) calls it: those calls; None otherwise (a module-level name, another target, a read that
    hands the instance on)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
            and isinstance(owner, FUNCTIONS)):
        return None
    key = stmt.targets[0].id
    found: List[ast.Call] = []
    for node in ast.walk(owner):
        if isinstance(node, ast.Name) and node.id == key and isinstance(node.ctx, ast.Load):
            parent = calls.tree.parent(node)
            if not (isinstance(parent, ast.Call) and parent.func is node):
                return None
            found.append(parent)
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and key in node.names:
            return None
    return found


def _off_as_instance(calls: Calls, func: Function, qualname: str, local_reason: LocalReason) -> bool:
    """With the project index: ``func`` has no call the index lists (``Calls.function_reason``
    asks it first), its class is named by no other file, and every call of this module that runs
    it through an instance (:func:`instance_sites`, at least one) runs with grad off."""
    assert calls.project is not None
    sites = instance_sites(calls, func)
    if not sites:
        return False  # (not a class's `__call__` or `forward`, or none seen, or one may be unseen)
    cls = cast(ast.ClassDef, calls.tree.parent(func))
    if calls.project.calls.get(qualname) or calls.project.imported_elsewhere(
            f"{calls.module_name}.{cls.name}", calls.module_name):
        return False
    return all(calls._site_off(s, local_reason, set()) for s in sites)


def _argument(call: ast.AST, param: str, index: Optional[int]) -> Optional[ast.expr]:
    if not isinstance(call, ast.Call):
        return None
    for kw in call.keywords:
        if kw.arg == param:
            return kw.value
    if index is not None and index < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:index + 1]):
        return call.args[index]
    return None


def instance_calls_count(calls: Calls, func: ast.AST) -> bool:
    """Whether the calls of instances listed for ``func`` (``CallFact.bound``) count among its calls
    from other files where the analysis joins what they pass (a parameter that requires grad, or
    is a tensor, where every call passes one): a class's ``__call__`` or another method that they
    run as written (:meth:`Calls.bound_runs`). A module's ``forward`` is left to the hazard
    analysis's own proof (``hazard.calls_from_elsewhere``), as before."""
    return isinstance(func, FUNCTIONS) and func.name != "forward" and calls.bound_runs(func)


def passes_tensor(call: "CallFact", key: str, position: Optional[int], method: bool) -> bool:
    """Whether a call from another file (``CallFact``) was shown to pass a tensor for parameter
    ``key`` (at ``position``, None: only keywords are sure): by keyword, or by position where the
    positions are the method's own (``inst.m(x)``, bound), not ``Cls.m(obj, x)``'s (the instance first)."""
    return call.called and (key in call.args_tensor or position is not None and (call.bound or not method)
                            and str(position) in call.args_tensor)


def _base_calls(project: "ProjectIndex", bases: Tuple[str, ...], seen: Set[str]) -> bool:
    """Whether one of ``bases`` (qualified names of the run's classes; ``?...`` outside it) or a
    base of theirs binds ``__call__``, as the project index knows them."""
    for base in bases:
        name = project.canonical(base)
        fact = project.classes.get(name)
        if fact is None or name in seen:
            continue
        seen.add(name)
        if f"{fact.qualname}.__call__" in project.functions or "__call__" in fact.assigned \
                or _base_calls(project, fact.bases, seen):
            return True
    return False


def unpassed(tree: Tree, call: ast.Call, func: Function) -> Optional[int]:
    """How many of ``func``'s leading positional parameters ``call`` (one of its sites) does not
    pass itself: 1 for the receiver of a method called on an instance (``obj.m(x)``,
    ``self.m(x)``, ``Cls(d).m(x)``) or of a classmethod; 0 for a function, a staticmethod, or
    a method called through its class (``Cls.m(obj, x)`` passes ``obj`` for ``self``); None
    where it cannot be told (another decorator, a plain method through ``cls``)."""
    cls = tree.parent(func)
    if not isinstance(cls, ast.ClassDef):
        return 0
    decorators = [target_key(d) for d in func.decorator_list]
    if decorators == ["staticmethod"]:
        return 0
    if decorators == ["classmethod"]:
        return 1
    if decorators:
        return None
    head = call.func.value if isinstance(call.func, ast.Attribute) else None
    if isinstance(head, ast.Name) and head.id == cls.name:
        return 0  # through the class: the receiver is the first argument
    if isinstance(head, ast.Name) and head.id == "cls":
        return None  # `cls.m(...)`: a plain method through the class, or a classmethod's own
    return 1 if isinstance(call.func, ast.Attribute) else None


def _dotted(node: ast.expr) -> str:
    """``torch.nn.Module`` of a chain of names; "" for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _plain_construction(tree: Tree, cls: ast.ClassDef, seen: Set[str]) -> bool:
    """Whether ``Cls(a, b)`` surely runs ``Cls.__init__(obj, a, b)``: no metaclass or other
    class keyword, no ``__new__`` (which may return another object, whose ``__init__`` then
    runs or not), and every base ``object``, ``torch.nn.Module`` or a class of this module
    that is so too (a library's base may bring a metaclass whose ``__call__`` does otherwise)."""
    if cls.name in seen or cls.keywords or cls.decorator_list or _names_new(tree, cls) or any(
            isinstance(s, FUNCTIONS) and s.name == "__new__" for s in cls.body):
        return False
    seen.add(cls.name)
    local = {c.name: c for c in tree.module.body if isinstance(c, ast.ClassDef)}
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id == "object":
            continue
        if isinstance(base, ast.Name) and base.id in local:
            if not _plain_construction(tree, local[base.id], seen):
                return False
            continue
        if _dotted(base) not in _module_class_names(tree):
            return False
    return True

def _module_class_names(tree: Tree) -> FrozenSet[str]:
    """How the module's top-level imports name ``torch.nn.Module`` (``nn.Module`` after
    ``from torch import nn``), where no other top-level statement binds the names used
    (worked out once per tree: each walks the whole module)."""
    found = tree.module_class_names
    if found is None:
        found = tree.module_class_names = _read_module_class_names(tree)
    return found


def _read_module_class_names(tree: Tree) -> FrozenSet[str]:
    names: Set[str] = set()
    bound: Dict[str, int] = {}
    for stmt in tree.module.body:
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                local = a.asname or a.name.partition(".")[0]
                bound[local] = bound.get(local, 0) + 1
                if a.name in ("torch", "torch.nn") and a.asname is None:
                    names.add("torch.nn.Module")
                elif a.name == "torch.nn" and a.asname:
                    names.add(f"{a.asname}.Module")
                elif a.name == "torch" and a.asname:
                    names.add(f"{a.asname}.nn.Module")
        elif isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                local = a.asname or a.name
                bound[local] = bound.get(local, 0) + 1
                if stmt.module == "torch" and a.name == "nn" and not stmt.level:
                    names.add(f"{local}.Module")
                elif stmt.module == "torch.nn" and a.name == "Module" and not stmt.level:
                    names.add(local)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound[stmt.name] = bound.get(stmt.name, 0) + 2
    # every name stored anywhere (an import holds none), as the walk listed them
    for n in tree.source.walked(ast.Name):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            bound[n.id] = bound.get(n.id, 0) + 2
    return frozenset(n for n in names if bound.get(n.partition(".")[0], 0) == 1)


def _names_new(tree: Tree, cls: ast.ClassDef) -> bool:
    """Whether a statement of ``cls``'s body names ``__new__`` (a ``Name`` anywhere in it):
    of the module's names listed by the walk, the few so called, followed up to the class."""
    parent = tree.parent
    for n in tree.source.walked(ast.Name):
        if not (isinstance(n, ast.Name) and n.id == "__new__"):
            continue
        child: ast.AST = n
        up: Optional[ast.AST] = parent(n)
        while up is not None and up is not cls:
            child, up = up, parent(up)
        if up is cls and any(child is s for s in cls.body):
            return True
    return False

