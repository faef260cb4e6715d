"""What one module contributes to the project index (``analysis.project``), read off its model.

The top of the analysis: ``collect`` reads a module's definitions, imports and call sites from
its ``SemanticModel`` (tree, grad mode, holders) into plain :class:`ModuleFacts`, and
``summaries_of`` its functions' and classes' summaries into :class:`SummaryFact`; the index
those make is handed to other files' models, below which it sits. What each call passes
(``call_arguments``, ``call_savings``) is read only when some analysis asks about these calls.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
from typing import Callable, Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple, Union, cast

from codemod.analysis.arguments import hook_site
from codemod.analysis.dtype import indexed_other_dtype
from codemod.analysis.factories import Factories
from codemod.analysis.grad_mode import GradOffDecorators
from codemod.analysis.hazard import LEAF_HANDED, refused_view
from codemod.analysis.consumed import stores_nothing
from codemod.analysis.kept import function_keeps
from codemod.analysis.model import SemanticModel
from codemod.analysis.kinds import TENSORISH
from codemod.analysis.project import (CallFact, ClassFact, FunctionFact, ModuleFacts, Passed, Saving, SummaryFact,
                                      is_library)
from codemod.analysis.requires_grad import Constants
from codemod.analysis.source import Source
from codemod.analysis.summaries import Returns, Saved, Summary, encode_built, set_through_another_receiver
from codemod.analysis.syntax import FUNCTIONS, Function, Owner, target_key
from codemod.analysis.tree import Tree
from codemod.analysis.views import fresh_items


def collect(model: SemanticModel, module: str, project_modules: FrozenSet[str],
            is_package: bool = False, arguments: bool = True, later: bool = False) -> ModuleFacts:
    """The facts one module contributes (``model``: its ``SemanticModel``; ``is_package``: the
    file is a package's ``__init__.py``, which relative imports start from). ``arguments``:
    also what each call passes (``CallFact.args_read_after``, ``args_grad``); without it those
    are left empty and :func:`call_arguments` gives them when some analysis asks (the
    ``ModuleFacts`` says which: ``argued``). ``later``: the module's other dtype and hooks are
    worked out from its source when first asked (``ModuleFacts.resolved``), not now: a run asks
    them of a few modules (the first of each connected part that has one)."""
    tree = model.tree
    functions: List[FunctionFact] = []
    local = _local_functions(model, module)
    decorators = GradOffDecorators(model.grad)  # one for the module: it keeps what it walked
    constants = None if later else Constants(model)
    returned = None if later else _own_returns(model)
    for func, qual in local.items():
        params = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if params and params[0] in ("self", "cls") and isinstance(tree.parent(func), ast.ClassDef):
            params = params[1:]
        params += [a.arg for a in func.args.kwonlyargs]
        own = model.grad.local_reason(func.body[0]) if func.body else None
        top = tree.parent(func) is model.module
        functions.append(FunctionFact(qual, tuple(params), own is not None or model.calls.is_autograd_kernel(func),
                                      decorators.needs(func, False) if top else None,
                                      decorators.needs(func, True) if top else None,
                                      None if constants is None or returned is None
                                      else _constant_returns(model, constants, func, returned),
                                      _fresh_returns(model, func) if not later
                                      else ("?",) if _holds_grad_off(model, func) else None))
    resolver = _Resolver(model, module, project_modules, is_package, _imports(model), frozenset(local.values()))
    found: List[CallFact] = []
    libraries: Dict[str, str] = {}
    for site, callee, bound in _call_sites(model, resolver, libraries):
        called = isinstance(site, ast.Call)
        owner = tree.owner(site)
        caller = _caller_name(tree, owner, local)
        grad_off = model.grad.local_reason(site) in _GRAD_OFF
        ignored = called and isinstance(tree.parent(site), ast.Expr)
        read, grad, tensor, _, _ = _arguments(model, resolver, site, callee, grad_off) if arguments else _NONE
        saved, refused = _saving(model, resolver, site, callee, grad_off, tensor) if arguments else ((), frozenset())
        describe = None if resolver.stays_here(callee) else functools.partial(handed, model, resolver)  # (read elsewhere only)
        values = argument_values(site, describe) if isinstance(site, ast.Call) and not bound else ()
        found.append(CallFact(callee, caller, grad_off, called, ignored, read, grad, tensor, saved, bound, refused,
                              values))
    # a name of the run's modules, or one of them itself (``import keys as k``: a top-level
    # module, which ``in_project`` (a name inside a module) leaves out)
    exports = {k: v for k, v in resolver.imports.items() if resolver.in_project(v) or v in resolver.project}
    strings, names, ints = _module_strings(model)
    facts = ModuleFacts(module, functions, found, exports, libraries, argued=arguments,
                        classes=_classes(model, resolver), strings=strings, names=names, stars=_stars(model, resolver),
                        ints=ints)
    if later:
        facts.later = functools.partial(worked_out_later, model.source, module)
    else:
        facts.other_dtype, facts.hooks = dtype_and_hooks(model.source)
    return facts


def dtype_and_hooks(source: Source) -> Tuple[Optional[str], Optional[str]]:
    """``ModuleFacts.other_dtype`` and ``hooks`` of a module's source."""
    return indexed_other_dtype(source), hook_site(source)


def worked_out_later(source: Source, module: str) -> Tuple[Optional[str], Optional[str],
                                                           List[Optional[Tuple[str, ...]]],
                                                           List[Optional[Tuple[str, ...]]]]:
    """What ``collect(..., later=True)`` leaves for when first asked (``ModuleFacts.resolved``):
    the other dtype, the hooks, and each indexed function's ``constant_returns`` and
    ``fresh_returns`` (in the order of ``ModuleFacts.functions``), on a model of its own over the
    source, as ``collect`` reads them (only methods returning what is not their receiver's, and
    functions holding a grad-off ``with``, are analysed: few are ever asked)."""
    model = SemanticModel(source)
    constants, returned = Constants(model), _own_returns(model)
    local = _local_functions(model, module)
    found = [_constant_returns(model, constants, func, returned) for func in local]
    return (*dtype_and_hooks(source), found, [_fresh_returns(model, func) for func in local])


def _holds_grad_off(model: SemanticModel, func: Function) -> bool:
    """``func`` is a module-level function with a ``with`` of its own that turns grad off: the
    functions whose ``FunctionFact.fresh_returns`` is worked out (few: the index stays cheap)."""
    return model.tree.parent(func) is model.module and any(
        isinstance(n, (ast.With, ast.AsyncWith)) and model.tree.owner(n) is func and model.grad.with_grad_state(n) is False
        for n in _statements(model.tree, func))


def _statements(tree: Tree, func: Function) -> Iterator[ast.AST]:
    """The nodes of ``tree.walk(func)`` that may be statements of ``func``'s own (``tree.owner``),
    in the walk's order: expressions (which hold no statement) and the functions defined in it
    (whose statements are theirs) are not entered, most of a function's nodes."""
    kids, skipped = tree.source.children, (ast.expr, *FUNCTIONS)
    todo: List[ast.AST] = [func]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(k for k in kids[node] if not isinstance(k, skipped))


def _fresh_returns(model: SemanticModel, func: Function) -> Optional[Tuple[str, ...]]:
    """``FunctionFact.fresh_returns`` of ``func``, where it holds a grad-off ``with``."""
    if not _holds_grad_off(model, func):
        return None
    return fresh_items(model.views.inputs, func)


def _own_returns(model: SemanticModel) -> Dict[ast.AST, List[ast.Return]]:
    """function -> its own ``return`` statements."""
    returned: Dict[ast.AST, List[ast.Return]] = {}
    for node in model.tree.source.walked(ast.Return):
        returned.setdefault(model.tree.owner(node), []).append(cast(ast.Return, node))
    return returned


def _constant_returns(model: SemanticModel, constants: Constants, func: Function,
                      returned: Dict[ast.AST, List[ast.Return]]) -> Optional[Tuple[str, ...]]:
    """``FunctionFact.constant_returns``: a method, undecorated or a ``staticmethod``/``classmethod``
    (its receiver: the first parameter, but a staticmethod's). Module functions are left out: only
    methods are read through the index (``helper_returns.HelperCalls.foreign``)."""
    decorators = [d.id for d in func.decorator_list if isinstance(d, ast.Name)]
    if len(decorators) != len(func.decorator_list) or len(decorators) > 1 \
            or decorators and decorators[0] not in ("staticmethod", "classmethod"):
        return None
    if not isinstance(model.tree.parent(func), ast.ClassDef):
        return None
    receiver = None
    if decorators != ["staticmethod"]:
        positional = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
        if not positional:
            return None
        receiver = positional[0]
    returns = returned.get(func, [])
    if not returns or any(n.value is None or receiver is not None and any(
            isinstance(x, ast.Name) and x.id == receiver for x in ast.walk(n.value)) for n in returns):
        return None  # (read off the syntax first: most methods return what their receiver holds)
    found = constants.returns_constant(func, receiver)
    if found is None:
        return None
    kind = "static" if receiver is None else "class" if decorators == ["classmethod"] else "bound"
    return (kind, *(f"{k}:{n}:{int(m)}" for k, n, m in found))


def _classes(model: SemanticModel, resolver: "_Resolver") -> List[ClassFact]:
    """``ModuleFacts.classes``: the module's top-level classes, bases resolved by ``resolver``."""
    found = []
    for cls in model.module.body:
        if not isinstance(cls, ast.ClassDef):
            continue
        bases = []
        for base in cls.bases:
            name = resolver.resolve(base) if isinstance(base, (ast.Name, ast.Attribute)) else None
            bases.append(name if name is not None else "?" + (target_key(base) or ""))
        defined: Dict[str, int] = {}
        assigned: Set[str] = set()
        for stmt in cls.body:
            if isinstance(stmt, FUNCTIONS):
                defined[stmt.name] = defined.get(stmt.name, 0) + 1
                continue
            for node in model.tree.walk(stmt):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    assigned.add(node.id)
                elif isinstance(node, (*FUNCTIONS, ast.ClassDef)):
                    assigned.add(node.name)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    assigned.update((a.asname or a.name).split(".")[0] for a in node.names)
        assigned.update(name for name, count in defined.items() if count > 1)
        found.append(ClassFact(f"{resolver.module}.{cls.name}", tuple(bases), tuple(sorted(assigned))))
    return found


def _module_strings(model: SemanticModel) -> Tuple[Tuple[str, ...], Tuple[str, ...], Tuple[str, ...]]:
    """``ModuleFacts.strings``, ``names`` and ``ints``: the names the module's top level binds only to
    string literals, the others it binds (a ``global`` name of a function among them), and of those the
    ones it binds only to int literals or to other such names (``R: Final[int] = position``)."""
    declared = _declared_in_functions(model) if "global" in model.source.text else set()
    strings, names = [], []
    bound = sorted(model.flow(model.module, nested=False).bindings.items())
    for name, bindings in bound:
        if name not in declared and bindings and all(
                b.form in ("assign", "ann") and isinstance(b.value, ast.Constant) and isinstance(b.value.value, str)
                for b in bindings):
            strings.append(name)
        else:
            names.append(name)
    ints: Set[str] = set()
    for _ in range(4):  # (a name of a name of an int...: a few steps)
        ints |= {name for name, bindings in bound if name not in declared and bindings and all(
            b.form in ("assign", "ann") and (isinstance(b.value, ast.Constant) and type(b.value.value) is int
                                             or isinstance(b.value, ast.Name) and b.value.id in ints) for b in bindings)}
    return tuple(strings), tuple(names + sorted(declared - set(names))), tuple(sorted(ints))


def _declared_in_functions(model: SemanticModel) -> Set[str]:
    """The names the module's functions declare ``global`` or ``nonlocal`` (each function's
    ``Flow.declared``, joined), read off the syntax: a statement whose nearest enclosing
    ``def`` or ``class`` is a function (working out every function's dataflow for it cost
    more than the rest of the module's facts; so did walking the module for them: the walk that
    indexed the tree lists them, ``Source.walked``)."""
    parent, found = model.tree.parent, set()
    for node in model.tree.source.walked(ast.Global):  # (and ``nonlocal`` ones)
        scope = parent(node)
        while scope is not None and not isinstance(scope, (*FUNCTIONS, ast.ClassDef, ast.Module)):
            scope = parent(scope)
        if isinstance(scope, FUNCTIONS):
            found.update(cast(Union[ast.Global, ast.Nonlocal], node).names)
    return found


def _stars(model: SemanticModel, resolver: "_Resolver") -> Tuple[str, ...]:
    """``ModuleFacts.stars``: the run's modules the module's top level imports with ``*``, in order."""
    found = []
    for stmt in model.module.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.names[0].name == "*":
            base = resolver._absolute(stmt)
            if base is not None and base in resolver.project:
                found.append(base)
    return tuple(found)


def argument_values(call: ast.Call, describe: Optional[Callable[[ast.expr], Optional[str]]] = None
                    ) -> Tuple[Tuple[str, bool, object], ...]:
    """``CallFact.args_values``: each argument as written, with its value where it is a literal
    (a string, a number, a bool, None), or what it names where ``describe`` can say (``handed``);
    a spread as "*" or "**", and nothing after a ``*args``."""
    found: List[Tuple[str, bool, object]] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            found.append(("*", False, None))
            break
        found.append((str(i), *_literal(arg, describe)))
    for keyword in call.keywords:
        found.append((keyword.arg, *_literal(keyword.value, describe)) if keyword.arg else ("**", False, None))
    return tuple(found)


def _literal(node: ast.expr, describe: Optional[Callable[[ast.expr], Optional[str]]] = None) -> Tuple[bool, object]:
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (str, bool, int, float))):
        return True, node.value
    return False, describe(node) if describe is not None else None


def handed(model: SemanticModel, resolver: "_Resolver", expr: ast.expr, depth: int = 0) -> Optional[str]:
    """What an argument that is no literal names, as ``project.HANDED`` writes it: ``RMSELoss()``
    or ``losses.RMSELoss(d)`` (a project name called: ``new:``), ``swish`` (a project function by
    name: ``def:``), ``nn.ReLU()`` (``torch-new:``), ``torch.tanh`` (``torch-def:``), ``lambda
    i, o: Net(i, o)`` (``lambda:`` and what its body names), or a local name bound only to one
    of those in its function. None for anything else (a parameter, a subscript of a registry, a
    name bound otherwise): what the callee's file then says is unknown."""
    if depth > 3:
        return None
    if isinstance(expr, ast.Lambda):
        inner = handed(model, resolver, expr.body, depth + 1)
        return f"lambda:{inner}" if inner is not None and not inner.startswith("lambda:") else None
    func = expr.func if isinstance(expr, ast.Call) else expr
    if not isinstance(func, (ast.Name, ast.Attribute)):
        return None
    name = model.torch_name(func)
    if name is not None and name.startswith("torch."):
        short = name.rsplit(".", 1)[-1]
        if isinstance(expr, ast.Call):
            return f"torch-new:{name}" if name.startswith("torch.nn.") and short[:1].isupper() else None
        return f"torch-def:{name}" if short[:1].islower() else None
    if isinstance(expr, ast.Name) and not isinstance(model.tree.owner(expr), ast.Module):
        owner = model.tree.owner(expr)
        bindings = model.binder.flow(owner).bindings.get(expr.id, [])
        if bindings:  # a local name: bound once, by a whole assignment
            if len(bindings) != 1 or bindings[0].form != "assign" or bindings[0].value is None:
                return None
            return handed(model, resolver, bindings[0].value, depth + 1)
    if (target_key(func) or "self").split(".")[0] in ("self", "cls"):
        return None  # a method: bound to an instance, not a name of the module
    qual = resolver.resolve(func)
    if qual is None:
        return None
    return f"new:{qual}" if isinstance(expr, ast.Call) else f"def:{qual}"


def call_arguments(model: SemanticModel, module: str, project_modules: FrozenSet[str], is_package: bool,
                   positions: Iterable[int]) -> Dict[int, Passed]:
    """(``args_read_after``, ``args_grad``, ``args_tensor``) of the calls at ``positions`` of
    :func:`collect`'s list: what ``collect(..., arguments=False)`` left out, for when some
    analysis asks about these calls. What autograd saved and which are refused views
    (``Passed.saved``, ``refused``) are left empty: :func:`call_savings` gives them, for the few
    calls whose callee writes into them."""
    resolver = _resolver(model, module, project_modules, is_package)
    return {i: _arguments(model, resolver, site, callee, grad_off)
            for i, site, callee, grad_off in _sites_at(model, resolver, positions)}


def call_savings(model: SemanticModel, module: str, project_modules: FrozenSet[str], is_package: bool,
                 positions: Iterable[int]) -> Dict[int, Saving]:
    """(``args_saved``, ``args_refused``) of the calls at ``positions`` of :func:`collect`'s
    list: asked only where another file's analysis reads them (a write into the callee's
    parameter, ``hazard.calls_from_elsewhere``), each a question to the caller's hazard analysis."""
    resolver = _resolver(model, module, project_modules, is_package)
    found: Dict[int, Saving] = {}
    for i, site, callee, grad_off in _sites_at(model, resolver, positions):
        tensor = _arguments(model, resolver, site, callee, grad_off, tensors_only=True).tensor
        found[i] = _saving(model, resolver, site, callee, grad_off, tensor)
    return found


def _sites_at(model: SemanticModel, resolver: "_Resolver",
              positions: Iterable[int]) -> Iterator[Tuple[int, ast.AST, str, bool]]:
    """(position, site, callee, grad off) of the call sites at ``positions`` of :func:`collect`'s
    list, in its order; the walk stops after the last one wanted."""
    wanted = set(positions)
    left = len(wanted)
    for i, (site, callee, _) in enumerate(_call_sites(model, resolver, {})):
        if left and i in wanted:
            left -= 1
            yield i, site, callee, isinstance(site, ast.Call) and model.grad.local_reason(site) in _GRAD_OFF
        if not left:
            return


def _resolver(model: SemanticModel, module: str, project_modules: FrozenSet[str], is_package: bool) -> "_Resolver":
    return _Resolver(model, module, project_modules, is_package, _imports(model),
                     frozenset(_local_functions(model, module).values()))


_GRAD_OFF = ("no-grad", "optimizer", "grad-guard")
_NONE = Passed(frozenset(), frozenset(), frozenset())


def _local_functions(model: SemanticModel, module: str) -> Dict[Function, str]:
    """The module's indexed functions (module-level ones, methods of module-level classes) by
    their qualified names, in the walk's order."""
    tree = model.tree
    local: Dict[Function, str] = {}
    for node in tree.source.walked(ast.FunctionDef):  # and async ones
        if isinstance(node, FUNCTIONS):
            parent = tree.parent(node)
            if parent is model.module:
                local[node] = f"{module}.{node.name}"
            elif isinstance(parent, ast.ClassDef) and tree.parent(parent) is model.module:
                local[node] = f"{module}.{parent.name}.{node.name}"
    return local


def _imports(model: SemanticModel) -> List[Union[ast.Import, ast.ImportFrom]]:
    return [cast(Union[ast.Import, ast.ImportFrom], n) for n in model.tree.source.walked(ast.Import)]


def _call_sites(model: SemanticModel, resolver: "_Resolver", libraries: Dict[str, str]
                ) -> Iterator[Tuple[Union[ast.Call, ast.Name, ast.Attribute], str, bool]]:
    """(site, callee, bound) of each use of a project function (the call where it is called),
    then of each call of an instance of a class of another module (:func:`_instance_calls`,
    ``bound``), in one order :func:`collect` and :func:`call_arguments` share. The instances'
    calls are looked for only where the module constructs a class of another module: such a
    construction (``Block(...)``, ``blocks.Block(...)``) is a use of a project name, among the
    first (every use that may resolve is; those that resolve to nothing have no callee)."""
    parents = model.tree.source.parents
    constructs_elsewhere = False
    for node, callee in _sites(model, resolver, libraries):
        parent = parents.get(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            constructs_elsewhere = constructs_elsewhere or not resolver.stays_here(callee)
            yield parent, callee, False
        else:
            yield node, callee, False
    if not constructs_elsewhere:
        return
    for call, callee in _instance_calls(model, resolver):
        yield call, callee, True


def _instance_calls(model: SemanticModel, resolver: "_Resolver") -> Iterator[Tuple[ast.Call, str]]:
    """(call, ``mod.Cls.forward``) of each call of an instance of a class of another module of
    the run: ``self.block(x)`` where the class sets ``self.block`` only to ``Cls(...)``, ``block(x)``
    where the function binds ``block`` only so, ``Cls(d)(x)``; then (call, ``mod.Cls.__call__``) of
    the same call (a plain class's ``__call__``, a transform's: listed for both, the index knows
    which the class defines). A method's call through such an instance, ``block.m(x)``,
    ``self.block.m(x)``, ``Cls(d).m(x)``, is (call, ``mod.Cls.m``), unless the module sets that
    attribute on the receiver (``block.m = other``). Their positions are the callee's after
    ``self`` (``CallFact.bound``)."""
    tree = model.tree
    calls = tree.source.walked(ast.Call)
    assigns = [(tree.parent(c), c) for c in calls]
    built_here = {t.id for a, c in assigns if isinstance(a, ast.Assign) and a.value is c
                  and resolver.resolve(cast(ast.Call, c).func) is not None
                  for t in a.targets if isinstance(t, ast.Name)}  # (names a local instance may be)
    stored: Optional[Set[Tuple[str, str]]] = None  # (receiver, attribute) of `recv.attr = ...`
    for call in calls:
        if not isinstance(call, ast.Call):
            continue
        func, method, named = call.func, None, call.func
        if isinstance(named, ast.Attribute) and not (named.attr.startswith("__") and named.attr.endswith("__")):
            receiver = named.value  # `block.m(x)`, `self.block.m(x)`, `Cls(d).m(x)`
            if isinstance(receiver, ast.Call) or isinstance(receiver, ast.Name) and receiver.id in built_here \
                    or (target_key(receiver) or "").count(".") == 1 and (target_key(receiver) or "").startswith("self."):
                func, method = receiver, named.attr
        if isinstance(func, ast.Name) and func.id not in built_here:
            continue
        qual = _instance_class(model, resolver, func)
        if qual is None:
            continue
        if method is None:
            yield call, f"{qual}.forward"
            yield call, f"{qual}.__call__"
            continue
        if stored is None:
            stored = {(target_key(n.value) or "", n.attr) for n in tree.source.walked(ast.Name)
                      if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
        if (target_key(func) or "?", method) not in stored:
            yield call, f"{qual}.{method}"


def _instance_class(model: SemanticModel, resolver: "_Resolver", func: ast.expr) -> Optional[str]:
    """The one class of another module of the run that every construction an instance called
    as ``func`` comes from names (:func:`_instances`); None where they are not all known or name
    more than one."""
    built = _instances(model, func)
    if not built:
        return None
    classes = {resolver.resolve(b.func) for b in built}
    qual = classes.pop() if len(classes) == 1 else None
    return None if qual is None or resolver.stays_here(qual) else qual


def _instances(model: SemanticModel, func: ast.expr) -> List[ast.Call]:
    """The constructions an instance called as ``func`` comes from, where they are all it may
    hold (empty otherwise): ``Cls(d)`` of ``Cls(d)(x)``; of ``self.attr`` every value the class
    sets it to, none of them other than a call of a name (``Cls(...)``, ``mod.Cls(...)``); of a
    local name every binding in its function."""
    def constructions(values: List[object]) -> List[ast.Call]:
        calls = [v for v in values if isinstance(v, ast.Call) and isinstance(v.func, (ast.Name, ast.Attribute))]
        return calls if calls and len(calls) == len(values) else []

    if isinstance(func, ast.Call):
        return constructions([func])
    key = target_key(func)
    if key is None:
        return []
    if key.startswith("self.") and key.count(".") == 1:
        cls = model.tree.enclosing_class(func)
        if cls is None or any(isinstance(s, FUNCTIONS) and s.name == key[5:] for s in cls.body) \
                or set_through_another_receiver(model, key[5:]) or _derived_here(model, cls):
            return []  # a method; `unit.block = Other()` or a subclass here: not the class's values alone
        return constructions(list(model.class_attrs(cls).get(key[5:], [])))
    if "." in key or not isinstance(func, ast.Name):
        return []
    owner = model.tree.owner(func)
    if not isinstance(owner, FUNCTIONS):
        return []
    bindings = model.binder.flow(owner).bindings.get(key, [])
    if not bindings or any(b.form != "assign" for b in bindings):
        return []
    return constructions([b.value for b in bindings])


def _derived_here(model: SemanticModel, cls: ast.ClassDef) -> bool:
    """A class of the module names ``cls`` among its bases (it may set the attributes otherwise)."""
    return any(isinstance(c, ast.ClassDef) and any((target_key(b) or "").rpartition(".")[2] == cls.name
                                                   for b in c.bases)
               for c in model.tree.source.walked(ast.ClassDef))


def _sites(model: SemanticModel, resolver: "_Resolver",
           libraries: Dict[str, str]) -> Iterator[Tuple[Union[ast.Name, ast.Attribute], str]]:
    """(use, callee) of each use of a project function in the module, in the walk's order (the
    outermost part of a chain: ``mod.f``, not ``mod``); the library callees met on the way go
    into ``libraries``."""
    parents, heads, Name, Attribute, Load = model.tree.source.parents, resolver.heads, ast.Name, ast.Attribute, ast.Load
    aliased = resolver.aliased
    for node in model.tree.source.walked(Name):  # names and attributes
        if parents.get(node).__class__ is Attribute:
            continue  # the outermost part of a chain only
        head = node
        while head.__class__ is Attribute:
            head = head.value
        # (a use whose head names nothing the project or a library may hold resolves to nothing)
        if head.__class__ is Name and head.id in heads and node.ctx.__class__ is Load:  # type: ignore[attr-defined]
            callee = resolver.resolve(node)
            if callee is None:
                library = resolver.library_callee(node)
                if library is not None:
                    libraries[library[0]] = library[1]
                continue
            if id(node) in aliased:
                continue  # (``denorm = helpers.denorm``: its uses are the sites, as an import's)
            yield cast(Union[ast.Name, ast.Attribute], node), callee


def _arguments(model: SemanticModel, resolver: "_Resolver", site: ast.AST, callee: str,
               grad_off: bool, tensors_only: bool = False) -> Passed:
    """What a call site passes: the arguments its caller reads afterwards, those its analysis
    shows require grad (asked only of a call with grad on, to another module) and those it shows
    are tensors (of a call to another module; with ``tensors_only``, those alone)."""
    if not isinstance(site, ast.Call):
        return _NONE
    tree = model.tree
    read: Set[str] = set()
    grad: Set[str] = set()
    tensor: Set[str] = set()
    if not resolver.stays_here(callee):
        tensor.update(name for name, value in _passed_values(site) if model.kind(value) in TENSORISH)
    if tensors_only:
        return Passed(frozenset(), frozenset(), frozenset(tensor))
    if not grad_off and not resolver.stays_here(callee):
        requirement, stmt = model.views.requirement, tree.statement_of(site)
        grad.update(str(i) for i, a in enumerate(site.args) if not isinstance(a, ast.Starred)
                    and not any(isinstance(b, ast.Starred) for b in site.args[:i])
                    and requirement.requires_grad(a, stmt) == "yes")
        grad.update(kw.arg for kw in site.keywords if kw.arg and requirement.requires_grad(kw.value, stmt) == "yes")
    keyed = [(str(i), key) for i, key in enumerate(map(target_key, site.args)) if key]
    keyed += [(kw.arg, key) for kw, key in ((kw, target_key(kw.value) if kw.arg else None)
                                            for kw in site.keywords) if kw.arg and key]
    if keyed:  # the caller's flow only for arguments that name something
        flow = model.binder.flow(tree.owner(site))
        stmt = tree.statement_of(site)
        read.update(name for name, key in keyed if model.holders.argument_read_after(flow, key, stmt))
    return Passed(frozenset(read), frozenset(grad), frozenset(tensor))


def _saving(model: SemanticModel, resolver: "_Resolver", site: ast.AST, callee: str, grad_off: bool,
            tensor: FrozenSet[str]) -> Saving:
    """(``args_saved``, ``args_refused``) of a call site with grad on to another module (its
    ``tensor`` arguments: ``args_tensor``): the tensors autograd saved before it, and the outputs
    of a multi-view op it passes (a write into either in the callee breaks backward)."""
    if not isinstance(site, ast.Call) or grad_off or resolver.stays_here(callee):
        return (), frozenset()
    refused = frozenset(name for name, value in _passed_values(site) if refused_view(model, site, value) is not None)
    return _saved_arguments(model, site, tensor), refused


def _saved_arguments(model: SemanticModel, site: ast.Call, tensor: FrozenSet[str]) -> Tuple[Tuple[str, str], ...]:
    """(argument, why) of the tensors a call to another module passes that its caller's
    analysis proves autograd saved for a backward still to run (``h = F.relu(...)`` then
    ``merge(h, skip)``): a write into one in the callee breaks backward. The same question a
    file asks of its own calls (``Hazards._from_callers``: the call taken as a write into the
    argument); proven answers only."""
    found: List[Tuple[str, str]] = []
    for name, value in _passed_values(site):
        hazard = model.hazards.explain(site, value) if name in tensor else None
        if hazard is not None and hazard.proven:
            found.append((name, hazard.reason))
            continue
        leaf = _known_leaf(model, site, value)
        if leaf is not None:
            found.append((name, leaf))
    return tuple(found)


def _known_leaf(model: SemanticModel, site: ast.Call, value: ast.expr) -> Optional[str]:
    """``init.he_init(conv.weights, ...)`` with grad on: the caller hands a leaf that requires grad
    (``Leaves.origin``, known: an ``nn.Parameter``, a parameter of a module the file builds, reached
    with grad on), which the callee cannot write into in place. Why, in words; None if not shown."""
    if not isinstance(value, (ast.Name, ast.Attribute)) or model.intended_reason(site, None):
        return None
    origin = model.leaves.origin(value, model.statement_of(site))
    if origin is None or not origin.known or origin.hooked:
        return None
    return f"{origin.what}, {LEAF_HANDED}"


def _passed_values(site: ast.Call) -> List[Tuple[str, ast.expr]]:
    """(position or keyword, value) of what a call passes, up to its first ``*args`` (after
    it, positions are not known); ``**kwargs`` left out."""
    found: List[Tuple[str, ast.expr]] = []
    for i, a in enumerate(site.args):
        if isinstance(a, ast.Starred):
            break
        found.append((str(i), a))
    found += [(kw.arg, kw.value) for kw in site.keywords if kw.arg]
    return found


def parameter_writers(tree: ast.AST) -> Set[str]:
    """The names of the functions in ``tree`` that write into one of their parameters in place
    (``x += y``, ``x[i] = v``, ``x.add_(y)``, through attributes and items of it too): the ones
    a caller's tensor can reach, and through a loop over one (``for t, m in zip(tensor, mean):
    t.sub_(m)``: the rows of a tensor parameter). One walk of the tree, no model: asked of a file
    that never names torch, to know whether other files' calls may hand it tensors (``engine.pipeline``)."""
    found: Set[str] = set()
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = func.args
        params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)}
        for loop in ast.walk(func):
            if isinstance(loop, (ast.For, ast.AsyncFor)):
                iterated = loop.iter.args if isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name) \
                    and loop.iter.func.id in ("zip", "enumerate", "reversed") else [loop.iter]
                if any(isinstance(i, ast.Name) and i.id in params for i in iterated):
                    params |= {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
        for node in ast.walk(func):
            targets: List[ast.expr] = []
            if isinstance(node, ast.AugAssign):
                targets = [node.target]
            elif isinstance(node, ast.Assign):
                targets = [t for t in node.targets if isinstance(t, ast.Subscript)]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr.endswith("_") \
                    and not node.func.attr.startswith("_"):
                targets = [node.func.value]
            for base in targets:
                while isinstance(base, (ast.Subscript, ast.Attribute, ast.Call)):
                    base = base.func if isinstance(base, ast.Call) else base.value
                if isinstance(base, ast.Name) and base.id in params:
                    found.add(func.name)
    return found


def summaries_of(model: SemanticModel, module: str, names: FrozenSet[str],
                 callers_unseen: bool = False) -> Dict[str, SummaryFact]:
    """Summaries of the module's top-level functions and classes (with a ``forward``) among
    ``names``, as their own file sees them: what they call from other files stays unseen
    (``callers_unseen``: an installed library's, whose callers pass what its file cannot show)."""
    found: Dict[str, SummaryFact] = {}
    summaries = model.summaries
    summaries.chains.callers_unseen = callers_unseen
    for stmt in model.module.body:
        if not isinstance(stmt, (ast.ClassDef, *FUNCTIONS)) or stmt.name not in names:
            continue
        if isinstance(stmt, ast.ClassDef):
            target, of = summaries.targets.forward_of(stmt), "class"
        elif isinstance(stmt, FUNCTIONS):
            target, of = (stmt, stmt.name), "function"
        else:
            continue
        if target is None:
            continue
        summary = summaries.of_function(*target)
        builds = _builds(model, stmt) if isinstance(stmt, FUNCTIONS) else None
        trained = model.views.trained  # a class owning parameters; a builder of a module that surely does
        parametric = trained.parametric_class(stmt, set()) if isinstance(stmt, ast.ClassDef) \
            else trained.parametric_function(stmt, set())
        if summary is None and (builds is not None or parametric):  # (a builder: what calling it returns is a module)
            summary = Summary(stmt.name, (), Saved.UNKNOWN, Returns.UNKNOWN, None, frozenset(), ())
        if summary is not None:
            fact = dataclasses.replace(
                summary.fact(of), keeps=function_keeps(model, target[0]), builds=builds, parametric=parametric,
                stores_nothing=of == "function" and stores_nothing(model, stmt))
            found[f"{module}.{stmt.name}"] = fact
    return found


def _builds(model: SemanticModel, func: Function) -> Optional[Tuple[str, ...]]:
    """A builder function's torch modules (``BuiltLayers.returned_modules``), as
    ``SummaryFact.builds`` holds them; None where it is no such builder. Read for callers in
    other files: no test or dict key of the builder is decided by what this file's own calls
    pass (every branch, every entry)."""
    plain = Factories(model, lambda test: None, lambda expr: None)
    built = model.summaries.chains.built.returned_modules(func, factories=plain)
    return tuple(encode_built(cls, flag, guards) for cls, flag, guards in built) if built else None


def _imported_module(value: ast.expr) -> Optional[str]:
    """``import_module("pkg.mod")`` (``importlib.`` or not) -> ``pkg.mod``; with ``.name`` after
    it -> ``pkg.mod.name``. A literal, absolute name only."""
    attr = None
    if isinstance(value, ast.Attribute):
        attr, value = value.attr, value.value
    if not (isinstance(value, ast.Call) and target_key(value.func) in ("import_module", "importlib.import_module")
            and len(value.args) == 1 and not value.keywords and isinstance(value.args[0], ast.Constant)
            and isinstance(value.args[0].value, str) and not value.args[0].value.startswith(".")):
        return None
    return value.args[0].value + (f".{attr}" if attr else "")


def _module_attribute_aliases(model: SemanticModel) -> Iterator[Tuple[str, ast.Attribute]]:
    """``Block, Head = blocks.Block, blocks.Head`` (or ``Block = blocks.Block``) at the module's
    top level: each name with the attribute it takes, as ``from blocks import Block, Head``
    binds them. Only names bound there once (a name rebound later may hold anything)."""
    bindings = model.binder.flow(model.module, nested=False).bindings
    for stmt in model.module.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        pairs: List[Tuple[ast.expr, ast.expr]] = []
        if isinstance(target, ast.Name):
            pairs = [(target, value)]
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            pairs = list(zip(target.elts, value.elts))
        for name, attr in pairs:
            if isinstance(name, ast.Name) and isinstance(attr, ast.Attribute) and isinstance(attr.value, ast.Name) \
                    and len(bindings.get(name.id, [])) == 1:
                yield name.id, attr


def _only_called(model: SemanticModel, name: str) -> bool:
    """The module loads ``name`` at least once, and only as the function of a call (``name(x)``)."""
    parents = model.tree.source.parents
    loads = [n for n in model.tree.source.walked(ast.Name) if isinstance(n, ast.Name) and n.id == name
             and not isinstance(n.ctx, ast.Store)]
    return bool(loads) and all(isinstance(parents.get(n), ast.Call) and cast(ast.Call, parents.get(n)).func is n
                               for n in loads)


def _declared_global(model: SemanticModel) -> Set[str]:
    """The names some ``global`` statement of the module declares (no ``global`` in its text:
    none, and the module is not walked)."""
    if "global" not in model.source.text:
        return set()
    return {n for g in ast.walk(model.module) if isinstance(g, ast.Global) for n in g.names}


def _caller_name(tree: Tree, owner: Owner, local: Dict[Function, str]) -> str:
    """The indexed function holding ``owner`` (itself, or around a nested function)."""
    cur: Owner = owner
    while not isinstance(cur, ast.Module):
        if cur in local:
            return local[cur]
        cur = tree.owner(cur)
    return ""


@functools.lru_cache(maxsize=4)
def _packages(project_modules: FrozenSet[str]) -> FrozenSet[str]:
    """The names that lie above a module of the run (``pkg`` for ``pkg.mod``), once per run."""
    return frozenset(".".join(m.split(".")[:i]) for m in project_modules for i in range(1, m.count(".") + 1))


class _Resolver:
    """Qualified names of the project's functions at their uses in one module."""

    def __init__(self, model: SemanticModel, module: str, project_modules: FrozenSet[str],
                 is_package: bool, imports: List[Union[ast.Import, ast.ImportFrom]],
                 local: FrozenSet[str] = frozenset()) -> None:
        self.model = model
        self.local = local  # the qualified names of the module's indexed functions
        self.module = module
        self.project = project_modules
        self.package = module if is_package else module.rpartition(".")[0]
        self.top: Dict[str, str] = {}
        self.imports: Dict[str, str] = {}
        self.imported_from: Set[str] = set()  # the names an absolute ``from ... import`` binds
        self._inside: Dict[str, bool] = {}  # name -> ``in_project(name)``
        for stmt in model.module.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.top[stmt.name] = f"{module}.{stmt.name}"
        for stmt in model.module.body:  # `helpers = import_module("helpers")`, `f = import_module("m").f`
            if isinstance(stmt, ast.Assign) and all(isinstance(t, ast.Name) for t in stmt.targets):
                loaded = _imported_module(stmt.value)  # (`thops = modules = import_module("m")`: both names)
                for target in stmt.targets if loaded is not None else ():
                    self.imports.setdefault(cast(ast.Name, target).id, cast(str, loaded))
        for node in imports:
            if isinstance(node, ast.ImportFrom) and node.names[0].name != "*":
                base = self._absolute(node)
                if base is None:
                    continue
                for a in node.names:
                    self.imports.setdefault(a.asname or a.name, f"{base}.{a.name}")
                    if not node.level:  # a relative import is the project's own code
                        self.imported_from.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.imports.setdefault(a.asname, a.name)
                    else:
                        head = a.name.split(".")[0]
                        self.imports.setdefault(head, head)
        # (the attribute an alias takes is no use of its own: the alias's uses are, as an import's)
        # (a name a function declares ``global`` may be rebound there: its attribute stays a use)
        self.aliased: Set[int] = set()
        # (nor one the module never calls, or loads other than to call it: ``SCORE = helpers.f``
        # is there to be handed on)
        declared: Optional[Set[str]] = None  # (walked for only where an alias is met)
        for name, value in _module_attribute_aliases(model):
            base = self.imports.get(value.value.id) if isinstance(value.value, ast.Name) else None
            if base is not None and name not in self.imports:
                self.imports[name] = f"{base}.{value.attr}"
                if declared is None:
                    declared = _declared_global(model)
                if name not in declared and _only_called(model, name):
                    self.aliased.add(id(value))
        # The heads of the uses that may resolve: the module's own names, ``self``/``cls``, the
        # names imported from what may hold a module of the run, and (library callees) the
        # names an absolute ``from ... import`` binds.
        inside = _packages(project_modules)
        self.heads = {"self", "cls", *self.top, *self.imported_from}
        self.heads.update(h for h, target in self.imports.items() if target in inside or self.in_project(target + ".*"))
        # ``self.x`` names a function of the index only as a method of its class: where no class
        # of the module could be taken elsewhere (its name imported too, or a module of the run),
        # the others name nothing the index is asked about.
        self.methods: Optional[Set[str]] = {q.rpartition(".")[2] for q in local if q.count(".") > module.count(".") + 1}
        for cls in model.tree.source.walked(ast.ClassDef):
            name = f"{module}.{cls.name}"  # type: ignore[attr-defined]
            if cls.name in self.imports or name in project_modules or name in inside:  # type: ignore[attr-defined]
                self.methods = None

    def _absolute(self, node: ast.ImportFrom) -> Optional[str]:
        if not node.level:
            return node.module
        parts = self.package.split(".") if self.package else []
        if node.level - 1 > len(parts):
            return None
        base = parts[: len(parts) - (node.level - 1)]
        return ".".join(base + ([node.module] if node.module else []))

    def resolve(self, node: ast.AST) -> Optional[str]:
        head_node = node
        while isinstance(head_node, ast.Attribute):
            head_node = head_node.value
        if not isinstance(head_node, ast.Name):
            return None  # (``target_key`` is None)
        first = head_node.id
        if first not in self.top and first not in self.imports and first not in ("self", "cls"):
            return None  # names nothing of the project: most uses (locals, builtins, torch)
        key = target_key(node)
        if key is None:
            return None
        head, _, rest = key.partition(".")
        if head in ("self", "cls"):
            if self.methods is not None and rest not in self.methods:
                return None  # no method of the module's classes: names no indexed function
            cls = self.model.tree.enclosing_class(node)
            if cls is None or "." in rest or not rest:
                return None
            name = f"{self.module}.{cls.name}.{rest}"
            if self.methods is not None and name not in self.local:
                return None
        elif head in self.top:
            name = self.top[head] + (f".{rest}" if rest else "")
        elif head in self.imports:
            name = self.imports[head] + (f".{rest}" if rest else "")
        else:
            return None
        return name if self.in_project(name) else None

    def library_callee(self, node: ast.AST) -> Optional[Tuple[str, str]]:
        """(local name, qualified name) when ``node`` calls a name imported from outside the
        project (``Mlp(...)`` after ``from timm.layers import Mlp``); torch (measured facts)
        and the standard library are left out."""
        if not (isinstance(node, ast.Name) and node.id in self.imported_from and node.id not in self.top):
            return None
        call = self.model.tree.parent(node)
        if not (isinstance(call, ast.Call) and call.func is node):
            return None
        target = self.imports[node.id]
        return (node.id, target) if is_library(target) and not self.in_project(target) else None

    def stays_here(self, callee: str) -> bool:
        """Whether the index takes ``callee`` (resolved here) to this module whatever the other
        modules say: a name of its own (not one it also imports from the project, which the
        index follows) that is not also a module of the run. Other files ask what a call passes
        (``ProjectIndex.calls_from_elsewhere``) only of calls made in another module than the
        callee's: what calls of this module's own functions pass is never asked of the index."""
        if not callee.startswith(self.module + "."):
            return False
        head = callee[len(self.module) + 1:].partition(".")[0]
        return not (head in self.imports and self.in_project(self.imports[head])) \
            and f"{self.module}.{head}" not in self.project

    def in_project(self, name: str) -> bool:
        """Whether ``name`` lies inside one of the run's modules (remembered: the uses of a
        module name few callees, each many times)."""
        known = self._inside.get(name)
        if known is None:
            parts = name.split(".")
            known = self._inside[name] = any(".".join(parts[:i]) in self.project for i in range(len(parts) - 1, 0, -1))
        return known
