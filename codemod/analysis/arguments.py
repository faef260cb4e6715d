"""What the callers of a module's ``forward`` pass it: whether every tensor it is given is the
caller's own, which nothing reads after the call.

A ``forward`` that writes into its input in place (``x /= x.norm(...)``) changes the caller's
tensor; the out-of-place fix (``x = x / ...``) does not. That is the only thing the rewrite
changes besides the fix, so it cannot change a working program where no caller can see the
caller's tensor after the call. This part says so only where the file shows every call:

- the class is only ever built as ``self.<attr> = Cls(...)`` or ``name = Cls(...)`` in a
  function, and that attribute or name is only ever called (no container, no subclass, no
  other use of the class; no other module of the run imports it);
- every call resolves to the class's ``forward`` and passes, for the parameter, a local name
  (not the caller's parameter, not a loop's element, not global) bound only from fresh values
  (arithmetic, a torch op or module that returns a new tensor, a module of the file whose
  summary returns no input);
- the caller does not read that name after the call (or the call's own statement rebinds it),
  reads it nowhere else in the statement, and no other name, container, attribute or callee
  that may keep it holds it (each other read is a torch op or module call, a tensor method or
  attribute).

- no file that can be handed the class's instances (this one, or one linked to it by imports:
  ``ProjectIndex.hooks``) hooks a module's calls (``register_forward_pre_hook``, ``forward =``):
  a hook sees what the call is given, and one registered through an enumeration
  (``net.named_modules()``, ``apply``) may be on any module, so any hook there counts.
- the file reaches no module but by its attribute's name (:func:`reached_unnamed`): no
  ``getattr(self, name)`` whose name could be an attribute the file sets on ``self`` (a
  computed ``"conv_" + str(i)`` that starts none of them cannot), no ``_modules``,
  ``get_submodule``, and no enumeration (``children()``, ``modules()``, ``apply(fn)``) whose
  members are more than inspected (``isinstance(m, ...)``, ``m.weight``): a member so reached
  may be called on a tensor its caller reads again;
- neither ``forward`` nor its class is decorated (a wrapper sees what the call is given).

Anything else leaves the parameter the caller's (``param-mutation``, unsafe).
"""

from __future__ import annotations

import ast
import re
import weakref
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Protocol, Tuple, cast

from codemod import torch_api
from codemod.analysis.branches import within
from codemod.analysis.holders import shares_memory
from codemod.analysis.kinds import Kind
from codemod.analysis.project import extended
from codemod.analysis.summaries import SHARES_INPUT
from codemod.analysis.tensor_kind import LEGACY_CONSTRUCTORS, module_dict_entry
from codemod.analysis.syntax import FUNCTIONS, Function, target_key

if TYPE_CHECKING:
    from codemod.analysis.binder import Binding, Flow
    from codemod.analysis.dataflow import Dataflow
    from codemod.analysis.holders import Holders
    from codemod.analysis.leaves import Leaves
    from codemod.analysis.source import Source
    from codemod.analysis.summaries import Summaries, SummaryFacts

    class ArgumentFacts(SummaryFacts, Protocol):
        """What this part asks of the model: the summaries (what a call runs), the holders, the
        dataflow's alias sources, and whether a module call returns a new tensor."""

        @property
        def summaries(self) -> Summaries: ...

        @property
        def holders(self) -> Holders: ...

        @property
        def dataflow(self) -> Dataflow: ...

        @property
        def source(self) -> Source: ...

        @property
        def leaves(self) -> Leaves: ...

        def returns_fresh(self, call: ast.Call) -> bool: ...

        def _may_return_input(self, call: ast.Call, passed: List[int]) -> Optional[bool]: ...

        def result_kept(self, call: ast.Call) -> bool: ...

        def is_factory(self, call: ast.Call) -> bool: ...


def own_values_passed(model: "ArgumentFacts", func: Function, param: str, depth: int = 0) -> bool:
    """Whether every call of ``func`` the file holds passes, for ``param``, a tensor of the
    caller's own that nothing sees after the call (see the module's docstring): ``func`` is a
    ``forward`` (the instance's calls) or a helper method called only as ``self.<name>(...)``
    from its own class (:func:`_method_calls`). ``depth``: how many callers up this asks."""
    cls = model.parent(func)
    if not isinstance(cls, ast.ClassDef) or model.parent(cls) is not model.module:
        return False
    if func.name != "forward" and (func.name.startswith("__") or func.decorator_list):
        return False  # a dunder runs from anywhere; a decorator may call it otherwise
    if param in {a.arg for a in (*func.args.kwonlyargs,)} or func.args.vararg:
        return False
    plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)][1:]
    if param not in plain:
        return False
    if func.decorator_list or cls.decorator_list:
        return False  # a wrapper the analysis does not follow sees what the call is given
    if _imported_elsewhere(model, cls.name) or _hooked(model) or reached_unnamed(model) is not None:
        return False
    calls = _calls(model, cls)  # a helper's too: an instance that goes anywhere may have it called there
    if calls and func.name != "forward":
        calls = _method_calls(model, cls, func)
    if not calls:
        return False
    for call in calls:
        target = model.summaries.targets.callee(call)
        if not (isinstance(target, tuple) and target[0] is func):
            return False
        if not _passes_own_value(model, call, plain.index(param), param, depth):
            return False
    return True


def private_values_passed(model: "ArgumentFacts", func: Function, param: str) -> bool:
    """Whether ``func`` is a private helper method (``_transform(self, boxes)``: one leading underscore, no
    decorator, of a top-level class without one) every call of which passes, for ``param``, a tensor of the
    caller's own that nothing sees after the call (``self._transform(boxes.clone())``, :func:`_passes_own_value`),
    where the calls are all ``self._transform(...)`` from its own class (:func:`_method_calls`: no class of the
    file derives from it, ``self`` goes nowhere else) and no class of the run may extend it (a subclass of
    another file may call the helper too). Unlike :func:`own_values_passed`, the class may be used anywhere: a
    private helper is its own class's, by the name's convention (code that calls it from outside the class is
    not seen, and this fact only lets a proof go, never makes one)."""
    cls = model.parent(func)
    if not isinstance(cls, ast.ClassDef) or model.parent(cls) is not model.module:
        return False
    if not func.name.startswith("_") or func.name.startswith("__") or func.decorator_list or cls.decorator_list:
        return False
    plain = [a.arg for a in (*func.args.posonlyargs, *func.args.args)][1:]
    if param not in plain or func.args.vararg or _named_otherwise(model, func.name):
        return False
    index = model.calls.project
    if index is None or not model.calls.module_name or extended(index, f"{model.calls.module_name}.{cls.name}"):
        return False  # (a file checked alone: any file may extend the class)
    calls = _method_calls(model, cls, func)
    return bool(calls) and all(_passes_fresh(model, call, plain.index(param), param) for call in calls or ())


def _named_otherwise(model: "ArgumentFacts", name: str) -> bool:
    """The file may reach a method otherwise than by its name: ``getattr`` of a computed name (or of
    ``name``), ``__dict__``, ``vars``, ``__getattribute__``, ``operator.methodcaller``."""
    for node in model.walk(model.module):
        if isinstance(node, ast.Attribute) and node.attr in ("__dict__", "__getattribute__"):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
            called = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
            if called in ("vars", "methodcaller"):
                return True
            if called == "getattr" and (len(node.args) < 2 or not isinstance(node.args[1], ast.Constant)
                                        or node.args[1].value == name):
                return True
    return False


def _passes_fresh(model: "ArgumentFacts", call: ast.Call, index: int, param: str) -> bool:
    """The call passes, for ``param``, a fresh temporary kept by nothing (``self._t(x.clone())``), or a name of
    the caller every binding of which reaching the call makes a fresh tensor (``boxes = boxes.clone()``), that
    no other name, holder or view shares there, and that no later statement of the caller may read (a read in
    the other arm of an ``if`` outside any loop never runs after the call; a closure's read may)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    named = [k.value for k in call.keywords if k.arg == param]
    arg = named[0] if named else call.args[index] if index < len(call.args) else None
    if arg is None:
        return False
    if not isinstance(arg, ast.Name):
        return _fresh(model, arg) and not (isinstance(arg, ast.Call) and model.result_kept(arg))
    owner = model.owner(call)
    if not isinstance(owner, FUNCTIONS):
        return False
    flow, key, stmt = model.flow(owner), arg.id, model.statement_of(call)
    bindings = model.reaching(flow, key, stmt)
    if key in flow.declared or not bindings or any(b.form != "assign" or b.value is None or not _fresh(model, b.value)
                                                   for b in bindings):
        return False
    if model.holders.held_by(flow, key, stmt) is not None:
        return False
    identity, views = model.aliases(flow, key, model.range(stmt)[0])
    if identity - {key} or views:
        return False
    end = model.range(stmt)[1]
    loops = _loops_around(model, stmt, owner)
    arms = [(anc, "body" if any(within(stmt, s) for s in anc.body) else "orelse")
            for anc in model.ancestors(stmt) if isinstance(anc, ast.If) and within(anc, owner)]
    for node in model.walk(owner):
        if not (isinstance(node, ast.Name) and node.id == key and isinstance(node.ctx, ast.Load)) or node is arg:
            continue
        if model.owner(node) is not owner or model.statement_of(node) is stmt:
            return False  # a closure's read (it runs late), or the call's own statement
        if any(within(node, loop) for loop in loops):
            return False  # read on another turn
        if model.range(model.statement_of(node))[0] < end:
            continue
        if any(within(node, s) for test, side in arms for s in (test.orelse if side == "body" else test.body)):
            continue  # the other arm of an `if` holding the call (no loop around it: checked above)
        return False
    return True


def _method_calls(model: "ArgumentFacts", cls: ast.ClassDef, func: Function) -> Optional[List[ast.Call]]:
    """The calls ``self.<name>(...)`` of the helper method ``func`` from ``cls``'s own methods;
    None where it may be called otherwise: a class of the file derives from ``cls``, the name
    is read other than to call it (handed on, as a string), called on another receiver, or
    ``self`` goes anywhere but an attribute read (handed on: anyone may call the helper)."""
    if model.leaves.chains.subclassed(cls):
        return None
    calls = model.leaves.chains.method_calls(func.name)
    if calls is None:
        return None
    for call in calls:
        receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
        if not (isinstance(receiver, ast.Name) and receiver.id == "self" and model.enclosing_class(call) is cls):
            return None
    for node in model.walk(cls):
        if isinstance(node, ast.Name) and node.id == "self" and not isinstance(model.parent(node), ast.Attribute):
            built = model.parent(node)
            if not (isinstance(built, ast.arg) or isinstance(built, ast.Call) and isinstance(built.func, ast.Name)
                    and built.func.id == "super"):
                return None
    return calls


def _imported_elsewhere(model: "ArgumentFacts", name: str) -> bool:
    """Whether code the file does not show may reach the class: a file checked alone (no index:
    any file may import it), or another module of the run imports it, or the module whole."""
    index = model.calls.project
    if index is None or not model.calls.module_name:
        return True
    return index.imported_elsewhere(f"{model.calls.module_name}.{name}", model.calls.module_name)


def _hooked(model: "ArgumentFacts") -> bool:
    """Whether this file, or one the index links to it, hooks a module's calls (see
    :func:`hook_site`); a file checked alone is answered by :func:`_imported_elsewhere`."""
    index = model.calls.project
    return hook_site(model.source) is not None or (index is not None and index.hooks(model.calls.module_name) is not None)


def hook_site(source: "Source") -> Optional[str]:
    """What first hooks a module's calls in ``source`` (no line: another file's line would key the
    cache of every file linked to it), which then hands what it is
    given (or returns) to code of its own: a module hook registered (``register_forward_hook``,
    ``register_full_backward_pre_hook``, the global ``register_module_forward_hook``...), a hook
    table touched (``_forward_pre_hooks``), or a ``forward`` or ``__call__`` replaced
    (``m.forward = wrap(m.forward)``, ``setattr(m, "forward", ...)``). None: nothing.

    The names, attributes and calls the indexing walk listed are looked at first; only a module
    that has such a place is walked again, breadth first, for the first one (what every file
    linked to it is keyed by): a walk of every module cost over a tenth of a cold ``check``."""
    if not _may_hook(source):
        return None
    for node in ast.walk(source.tree):
        found = _hook_of(node)
        if found is not None:
            return found
    return None


def _may_hook(source: "Source") -> bool:
    """Whether some name, attribute or call of ``source`` hooks a module's calls (:func:`_hook_of`),
    each looked at only where its text could (a name with ``hook`` in it, an attribute
    ``forward`` or ``__call__`` stored or deleted, a call of ``setattr``)."""
    attribute, name, load = ast.Attribute, ast.Name, ast.Load
    for node in source.walked(ast.Name):  # (with attributes)
        if node.__class__ is attribute:
            word = node.attr
            if ("hook" in word or word in _REPLACED and node.ctx.__class__ is not load) \
                    and _hook_of(node) is not None:
                return True
        elif "hook" in node.id and _hook_of(node) is not None:  # type: ignore[attr-defined]
            return True
    for node in source.walked(ast.Call):
        func = node.func  # type: ignore[attr-defined]
        if func.__class__ is name and func.id == "setattr" and _hook_of(node) is not None:
            return True
    return False


_REPLACED = ("forward", "__call__")


def _hook_of(node: ast.AST) -> Optional[str]:
    """What ``node`` does to hook a module's calls (see :func:`hook_site`); None: nothing."""
    name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
    if name is not None and "hook" in name and _HOOK.match(name) and name not in _TENSOR_HOOKS:
        return name
    if isinstance(node, ast.Attribute) and node.attr in ("forward", "__call__") \
            and isinstance(node.ctx, (ast.Store, ast.Del)):
        return f"{node.attr} replaced"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr" \
            and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
            and node.args[1].value in ("forward", "__call__"):
        return "setattr"
    return None


def reached_unnamed(model: "ArgumentFacts") -> Optional[str]:
    """Where the file may reach a module otherwise than by its attribute's name, in words: by a
    computed name that could be an attribute the file sets on ``self`` (``getattr(self, name)``,
    ``getattr(self, "blocks")``; not ``getattr(self, "conv_" + str(i))`` where no such attribute
    starts with ``conv_``), through the module table (``self._modules``, ``__dict__``,
    ``vars``, ``get_submodule``), or through an enumeration (``children()``, ``modules()``,
    their ``named_`` forms, ``apply(fn)``) unless it only inspects each member
    (:func:`_only_inspected`). :func:`_calls` sees only the calls of the attribute's name;
    a member reached so may be called on a tensor its caller reads again. None: nowhere.
    Found once per file, from the names, attributes and calls the indexing walk listed."""
    if model not in _REACHED:
        _REACHED[model] = (_reached_unnamed(model),)
    return _REACHED[model][0]


# the answer per model (one file's analysis), found once
_REACHED: "weakref.WeakKeyDictionary[ArgumentFacts, Tuple[Optional[str]]]" = weakref.WeakKeyDictionary()


def _reached_unnamed(model: "ArgumentFacts") -> Optional[str]:
    walked = model.source.walked(ast.Name)  # (with attributes)
    own = {n.attr for n in walked if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)
           and isinstance(n.value, ast.Name) and n.value.id == "self"}
    for node in walked:
        if isinstance(node, ast.Attribute) and node.attr in _MODULE_TABLES:
            return f"`{node.attr}` at line {node.lineno}"
        if isinstance(node, ast.Attribute) and node.attr in _ENUMERATIONS and not _only_inspected(model, node):
            return f"`{node.attr}()` at line {node.lineno}"
    for node in model.source.walked(ast.Call):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "vars"):
            name = node.args[1] if node.func.id == "getattr" and len(node.args) > 1 else None
            literal = isinstance(name, ast.Constant) and isinstance(name.value, str)
            if node.func.id == "vars" or (literal and cast(ast.Constant, name).value in own) \
                    or not literal and not (node.args and model.torch_name(node.args[0]) is not None) \
                    and _may_name(name, own):
                return f"`{node.func.id}` at line {node.lineno}"
    return None


def _may_name(name: Optional[ast.expr], own: "set[str]") -> bool:
    """Whether the computed attribute name ``name`` could be one of ``own`` (the attributes the
    file sets on ``self``): only a name whose text starts with a known string (``"gate" +
    str(i)``, ``f"gate{i}"``) that begins none of them cannot; anything else may."""
    prefix = _known_prefix(name) if name is not None else ""
    return not prefix or any(attr.startswith(prefix) for attr in own)


def _known_prefix(expr: ast.expr) -> str:
    """The string every value of ``expr`` starts with, as far as its text shows ("" where
    nothing is known): a string's own, the left side's of ``+``, an f-string's leading text."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left = _known_prefix(expr.left)
        if isinstance(expr.left, ast.Constant) and isinstance(expr.left.value, str):
            return left + _known_prefix(expr.right)
        return left
    if isinstance(expr, ast.JoinedStr) and expr.values:
        first = expr.values[0]
        return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""
    return ""


# What hands out a module's members by name or wholesale; and what enumerates them.
_MODULE_TABLES = frozenset({"_modules", "__dict__", "get_submodule", "_apply"})
_ENUMERATIONS = frozenset({"children", "named_children", "modules", "named_modules", "apply"})
_INSPECTING = frozenset({"isinstance", "type", "hasattr", "str", "repr", "print"})


def _only_inspected(model: "ArgumentFacts", attr: ast.Attribute) -> bool:
    """``for m in self.modules():`` (``for name, m in ...named_modules():``) whose variable,
    bound nowhere else in its function, is only inspected (:func:`_inspected_only`); or
    ``self.apply(self._init_weights)`` / ``apply(init_fn)`` of a function of the file whose
    last parameter is only inspected. Anything else (a comprehension, ``list(...)``, a lambda,
    a member called or handed on) may call a member."""
    call = model.parent(attr)
    if not (isinstance(call, ast.Call) and call.func is attr):
        return False
    if attr.attr == "apply":
        fn = call.args[0] if len(call.args) == 1 and not call.keywords else None
        target = _function_named(model, fn, attr) if fn is not None else None
        params = [a.arg for a in (*target.args.posonlyargs, *target.args.args)] if target is not None else []
        return target is not None and bool(params) and _inspected_only(model, target, params[-1])
    loop = model.parent(call)
    if call.args or call.keywords or not (isinstance(loop, ast.For) and loop.iter is call):
        return False
    variable = loop.target
    if attr.attr.startswith("named_") and isinstance(variable, ast.Tuple) and len(variable.elts) == 2:
        variable = variable.elts[1]
    owner = model.owner(loop)
    if not isinstance(variable, ast.Name) or not isinstance(owner, FUNCTIONS):
        return False
    flow = model.flow(owner)
    return variable.id not in flow.declared and len(flow.bindings.get(variable.id, [])) == 1 \
        and _inspected_only(model, owner, variable.id)


def _function_named(model: "ArgumentFacts", fn: ast.expr, near: ast.AST) -> Optional[Function]:
    """The method ``self.<name>`` of the class around ``near``, or the top-level function
    ``<name>`` of the file, that ``fn`` names; None for anything else."""
    if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and fn.value.id == "self":
        around = model.enclosing_class(near)
        body = around.body if around is not None else []
        name = fn.attr
    elif isinstance(fn, ast.Name):
        body, name = model.module.body, fn.id
    else:
        return None
    found = [s for s in body if isinstance(s, FUNCTIONS) and s.name == name]
    return found[0] if len(found) == 1 and not found[0].decorator_list else None


def _inspected_only(model: "ArgumentFacts", scope: ast.AST, name: str) -> bool:
    """Every read of ``name`` in ``scope`` inspects the module it holds: the first argument of
    ``isinstance``/``type``/``hasattr``..., or an attribute read that hands the module on to no
    one (``m.weight``, ``m.bias.data``; not ``m.forward``, a method call, a hook)."""
    for node in model.walk(scope):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        parent = model.parent(node)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in _INSPECTING \
                and parent.args[:1] == [node]:
            continue
        if isinstance(parent, ast.Attribute) and not _hands_module_on(model, parent):
            continue  # `m.weight`, `nn.init.zeros_(m.bias)`, `m.parameters()`
        return False
    return True


# a module's hooks (``register_forward_hook``, ``_forward_pre_hooks``...), not a tensor's
_HOOK = re.compile(r"^(register_\w*hook|_\w*(forward|backward)\w*hooks\w*)$")
_TENSOR_HOOKS = frozenset({"register_hook", "register_post_accumulate_grad_hook"})


def _calls(model: "ArgumentFacts", cls: ast.ClassDef) -> Optional[List[ast.Call]]:
    """The calls of every instance of ``cls`` in the file; None where an instance (or the
    class) goes where its calls cannot all be seen."""
    found: List[ast.Call] = []
    for node in model.walk(model.module):
        if not (isinstance(node, ast.Name) and node.id == cls.name and isinstance(node.ctx, ast.Load)):
            continue
        built = model.parent(node)
        if isinstance(built, ast.Call) and isinstance(built.func, ast.Name) and built.func.id == "super" \
                and built.args[:1] == [node] and model.enclosing_class(built) is cls:
            continue  # `super(Cls, self).__init__()`
        if not (isinstance(built, ast.Call) and built.func is node):
            return None  # a base class, handed on, ...
        listed = _module_list_of(model, built)
        made, entry = _module_dict_of(model, listed) if listed is not None else (None, "")
        value = made or listed or built
        stmt = model.parent(value)
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.value is value):
            return None  # in a container, returned, passed, ...
        holder = stmt.targets[0]
        if listed is not None:  # `self.blocks = nn.ModuleList([Cls(d) for _ in range(n)])`
            members = _list_member_calls(model, stmt, holder, entry)
            if members is None:
                return None
            found.extend(members)
            continue
        owner = model.owner(stmt)
        if isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name) and holder.value.id == "self":
            around = model.enclosing_class(stmt)
            if around is None or model.parent(around) is not model.module or _imported_elsewhere(model, around.name):
                return None  # a subclass in another module may call it too
            named = [n for n in model.walk(model.module) if isinstance(n, ast.Attribute) and n.attr == holder.attr]
            if any(not (isinstance(n.value, ast.Name) and n.value.id == "self") and not _tensor_method(model, n)
                   for n in named):
                return None  # `net.norm(v)`: the instance reached from outside its owner
            uses: List[ast.expr] = [n for n in named if isinstance(n.ctx, ast.Load)
                                    and isinstance(n.value, ast.Name) and n.value.id == "self"]
        elif isinstance(holder, ast.Name) and isinstance(owner, FUNCTIONS):
            uses = [n for n in model.walk(owner) if isinstance(n, ast.Name) and n.id == holder.id
                    and isinstance(n.ctx, ast.Load)]
        else:
            return None
        for use in uses:
            call = model.parent(use)
            if isinstance(call, ast.Attribute) and not _hands_module_on(model, call):
                continue  # `net.fc.weight.grad`, `net.train()`: the instance goes nowhere
            if not (isinstance(call, ast.Call) and call.func is use):
                return None
            found.append(call)
    return found


_MODULE_LISTS = ("torch.nn.ModuleList", "torch.nn.modules.container.ModuleList")


def _module_list_of(model: "ArgumentFacts", built: ast.Call) -> Optional[ast.Call]:
    """The ``nn.ModuleList(...)`` call whose list (a literal, or a comprehension's element)
    holds the instance ``built``; None where it sits anywhere else."""
    around = model.parent(built)
    if isinstance(around, ast.ListComp) and around.elt is built or isinstance(around, (ast.List, ast.Tuple)):
        made = model.parent(around)
        if isinstance(made, ast.Call) and made.args == [around] and not made.keywords \
                and model.torch_name(made.func) in _MODULE_LISTS:
            return made
    return None


def _module_dict_of(model: "ArgumentFacts", listed: ast.Call) -> Tuple[Optional[ast.Call], str]:
    """``nn.ModuleDict(dict(h=<listed>, ...))`` (or ``{"h": <listed>}``) and ``"h"``, where the
    list is an entry of a module dict; (None, "") where it is not."""
    around = model.parent(listed)
    if isinstance(around, ast.keyword) and around.arg is not None:
        entry, made = around.arg, model.parent(cast(ast.AST, model.parent(around)))
    elif isinstance(around, ast.Dict):
        key = next((k for k, v in zip(around.keys, around.values) if v is listed), None)
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            return None, ""
        entry, made = key.value, model.parent(around)
    else:
        return None, ""
    if isinstance(made, ast.Call) and isinstance(model.parent(made), ast.Assign) \
            and module_dict_entry([made], entry, model.torch_name, "dict" in model.flow(model.module).bindings) == [listed]:
        return made, entry
    return None, ""


def _entries(made: ast.expr) -> List[str]:
    """The keys of ``nn.ModuleDict(dict(a=..., b=...))`` / ``nn.ModuleDict({"a": ...})``."""
    arg = made.args[0] if isinstance(made, ast.Call) and made.args else None
    if isinstance(arg, ast.Call):
        return [k.arg for k in arg.keywords if k.arg is not None]
    if isinstance(arg, ast.Dict):
        return [k.value for k in arg.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return []


def _list_member_calls(model: "ArgumentFacts", stmt: ast.Assign, holder: ast.expr,
                       entry: str = "") -> Optional[List[ast.Call]]:
    """The calls of the members of the ``nn.ModuleList`` set as ``self.<attr>`` by ``stmt``
    (or as its ``entry`` where ``self.<attr>`` is a ``nn.ModuleDict``): every read of the list
    in the file is a ``for`` over it whose variable (bound nowhere else in its function) is
    only called, an index called (``self.blocks[i](x)``), ``len`` of it, or a method that hands
    no member on; None for any other read (spread into a ``Sequential``, returned, passed, a
    member hooked or reached from outside). A module dict's other reads are its other entries
    by name, or methods that hand no member on (not ``.values()``, not the dict itself)."""
    if not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name) and holder.value.id == "self"):
        return None
    around = model.enclosing_class(stmt)
    if around is None or model.parent(around) is not model.module or _imported_elsewhere(model, around.name):
        return None
    named = [n for n in model.walk(model.module) if isinstance(n, ast.Attribute) and n.attr == holder.attr]
    if any(not (isinstance(n.value, ast.Name) and n.value.id == "self") for n in named):
        return None  # `net.blocks`: the list reached from outside its owner
    if entry:
        lists = []
        for use in named:
            parent = model.parent(use)
            if not isinstance(use.ctx, ast.Load):
                continue
            if not isinstance(parent, ast.Attribute):
                return None  # `self.transformer` itself handed on, indexed, iterated
            if parent.attr == entry:
                lists.append(parent)
            elif parent.attr not in _entries(stmt.value) and (
                    _hands_module_on(model, parent) or parent.attr in ("values", "items")):
                return None
        named = lists
    found: List[ast.Call] = []
    for use in named:
        if not isinstance(use.ctx, ast.Load):
            continue  # the assignment itself (another one makes the callee unresolved: checked by the caller)
        parent = model.parent(use)
        if isinstance(parent, ast.For) and parent.iter is use and isinstance(parent.target, ast.Name):
            calls = _loop_variable_calls(model, parent, parent.target.id)
            if calls is None:
                return None
            found.extend(calls)
        elif isinstance(parent, ast.Subscript) and parent.value is use:
            call = model.parent(parent)
            if not (isinstance(call, ast.Call) and call.func is parent):
                return None
            found.append(call)
        elif isinstance(parent, ast.Call) and parent.args == [use] and isinstance(parent.func, ast.Name) \
                and parent.func.id == "len" and not parent.keywords:
            continue
        elif isinstance(parent, ast.Attribute) and not _hands_module_on(model, parent):
            continue  # `self.blocks.parameters()`
        else:
            return None
    return found


def _loop_variable_calls(model: "ArgumentFacts", loop: ast.For, name: str) -> Optional[List[ast.Call]]:
    """The calls of ``for name in <list>``'s variable, where its function binds it only there
    and reads it only to call it (or a method that hands the member on to no one)."""
    owner = model.owner(loop)
    if not isinstance(owner, FUNCTIONS):
        return None
    flow = model.flow(owner)
    if name in flow.declared or len(flow.bindings.get(name, [])) != 1:
        return None
    found: List[ast.Call] = []
    for node in model.walk(owner):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        parent = model.parent(node)
        if isinstance(parent, ast.Call) and parent.func is node:
            found.append(parent)
        elif not (isinstance(parent, ast.Attribute) and not _hands_module_on(model, parent)):
            return None
    return found


def _tensor_method(model: "ArgumentFacts", attr: ast.Attribute) -> bool:
    """``x.norm(dim=-1)``: a call of a tensor method of that name on a receiver known to be a
    tensor. Not by the name alone: ``net.norm(v)`` on a receiver of unknown kind may be the
    instance held as ``self.norm`` (``norm`` is a tensor method too, since the API table lists
    the methods ``torch/_tensor.py`` defines)."""
    call = model.parent(attr)
    return isinstance(call, ast.Call) and call.func is attr \
        and model.kind(attr.value) in (Kind.TENSOR, Kind.PARAMETER)


def _hands_module_on(model: "ArgumentFacts", attr: ast.Attribute) -> bool:
    """``net.forward``, ``net.__call__``, a hook (``register_forward_hook``: it sees the input),
    any method not known to keep nothing, or one whose result is kept (``net.eval()`` returns
    the instance): a way to call it that is not followed."""
    if attr.attr in ("forward", "__call__", "_call_impl", "apply") or attr.attr.startswith(("register_", "_")):
        return True
    if attr.attr in _GETTERS:
        return False  # what they return is not the instance
    call = model.parent(attr)
    if not (isinstance(call, ast.Call) and call.func is attr):
        return False  # `net.fc.weight`: a member read
    return attr.attr not in _SETTINGS or not isinstance(model.parent(call), ast.Expr)


def _passes_own_value(model: "ArgumentFacts", call: ast.Call, index: int, param: str, depth: int = 0) -> bool:
    """The call passes, for ``param``: a fresh temporary (``enc(proj(x))``: no name holds it), or
    a local name bound from fresh values, or the caller's own parameter where its every caller
    passes its own value (:func:`own_values_passed`, a few calls up) -- and the caller reads
    that name no more after the call, or the call's statement rebinds it (``x, s = f(x)``)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return False
    named = [k.value for k in call.keywords if k.arg == param]
    arg = named[0] if named else call.args[index] if index < len(call.args) else None
    if arg is not None and not isinstance(arg, ast.Name):
        # a temporary: fresh and kept by no code the call runs (`proj(x)`), nobody else holds it
        return _fresh(model, arg) and not (isinstance(arg, ast.Call) and model.result_kept(arg))
    if arg is None:
        return False  # the default: not followed
    owner = model.owner(call)
    if not isinstance(owner, FUNCTIONS):
        return False
    flow = model.flow(owner)
    key = arg.id
    stmt = model.statement_of(call)
    handed = key in flow.params and depth < 3 and own_values_passed(model, owner, key, depth + 1)
    if key in flow.declared or key in flow.params and not handed:
        return False
    if model.holders.held_by(flow, key, stmt) not in ((None, "the caller") if handed else (None,)):
        return False
    bindings = model.reaching(flow, key, stmt)
    if not bindings or any(not (handed and b.form == "param") and (
            b.form != "assign" or not (_fresh(model, b.value) or _hands_back(model, b.value, key)))
            for b in bindings):
        return False
    if all(b.form != "param" and _hands_back(model, b.value, key) for b in bindings):
        return False  # no fresh value the chain starts from
    identity, views = model.aliases(flow, key, model.range(stmt)[0])
    if identity - {key} or views:
        return False
    rebinds = isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _binds_name(stmt.targets[0], key)
    end = model.range(stmt)[1]
    loops = [model.range(a) for a in _loops_around(model, stmt, owner)]
    grads = _gradient_reads(model, flow, key, bindings)
    for pos, load in flow.loads.get(key, []):
        if load is arg:
            continue
        if model.statement_of(load) is stmt:
            return False  # read again by the call's own statement
        if load in grads:
            continue  # `x.grad` of a new leaf: what the write changes is not its gradient
        if rebinds and pos >= end and not any(ls <= pos <= le for ls, le in loops):
            continue  # after `x = block(x)`, outside its loops: the new tensor (or one never passed)
        if not _only_read(model, load):
            return False
    return rebinds or not model.holders.read_after(flow, key, stmt, ignore=grads)


def _gradient_reads(model: "ArgumentFacts", flow: "Flow", key: str, bindings: "List[Binding]") -> FrozenSet[ast.AST]:
    """The loads of ``key`` that read only its gradient (``x`` in ``x.grad``, ``x.grad.norm()``),
    where every binding of ``key`` that reaches the call is a new leaf (a factory's result:
    ``x = torch.randn(n, requires_grad=True)``) and nothing asks it to keep a non-leaf's gradient
    (no ``x.retain_grad()``); empty anywhere else. Such a read cannot see the write the fix takes
    away from the caller: on a leaf that requires grad the write raises where grad is on, and
    under ``no_grad`` it changes the values, never the gradient; on one that does not, the write
    may make it a non-leaf, whose ``.grad`` stays None as the leaf's does, unless it is retained
    (``retain_grad`` after the call: there the caller's ``.grad`` would see the write)."""
    if not bindings or any(b.form != "assign" or not isinstance(b.value, ast.Call) or not model.is_factory(b.value)
                           or not _fresh(model, b.value) or any(k.arg == "out" for k in b.value.keywords)
                           for b in bindings):
        return frozenset()
    reads = set()
    for _, load in flow.loads.get(key, []):
        parent = model.parent(load)
        if isinstance(parent, ast.Attribute) and parent.value is load:
            if parent.attr == "retain_grad":
                return frozenset()
            if parent.attr == "grad" and isinstance(parent.ctx, ast.Load):
                reads.add(load)
    return frozenset(reads)


def _binds_name(target: ast.expr, key: str) -> bool:
    """``x = ...`` or ``x, extra = ...`` (the name itself, not an element of it) binds ``key``."""
    if isinstance(target, ast.Name):
        return target.id == key
    return isinstance(target, (ast.Tuple, ast.List)) and any(isinstance(e, ast.Name) and e.id == key
                                                            for e in target.elts)


def _loops_around(model: "ArgumentFacts", stmt: ast.AST, owner: ast.AST) -> List[ast.stmt]:
    found: List[ast.stmt] = []
    for anc in model.ancestors(stmt):
        if anc is owner:
            break
        if isinstance(anc, (ast.For, ast.AsyncFor, ast.While)):
            found.append(anc)
    return found


def _only_read(model: "ArgumentFacts", load: ast.AST) -> bool:
    """A read of the tensor that keeps no reference to it: an attribute or tensor method of it
    (``x.shape``, ``x.size()``: not a view, an in-place method or one measured to return
    it), an operand of arithmetic, or an argument of a torch op or torch module."""
    parent = model.parent(load)
    if isinstance(parent, ast.Attribute):
        call = model.parent(parent)
        if isinstance(call, ast.Call) and call.func is parent:
            return model.dataflow.alias_source(call)[0] is None
        return parent.attr not in ("data", "T", "mT", "H", "mH", "real", "imag", "grad")
    if isinstance(parent, (ast.BinOp, ast.Compare)) or isinstance(parent, ast.UnaryOp):
        return True
    if isinstance(parent, ast.Call) and load in parent.args and model.dataflow.alias_source(parent)[0] is None:
        if model.torch_name(parent.func) is not None:
            return (model.torch_name(parent.func) or "") not in torch_api.INPLACE_FUNCTIONS
        return model.kind(parent.func) is Kind.MODULE and model.returns_fresh(parent)
    return False


def fresh_temporary(model: "ArgumentFacts", value: ast.expr) -> bool:
    """``value`` (a call's result no name holds) is a new tensor that no one else sees: fresh
    (:func:`_fresh`) and kept by none of the code the call runs (``self.last = out``), nor, for
    a module's result, by a hook the file (or one linked to it) registers: a forward hook sees
    the output (``self.act.register_forward_hook(lambda m, i, o: feats.append(o))``)."""
    if not (isinstance(value, ast.Call) and _fresh(model, value) and not model.result_kept(value)):
        return False
    func = value.func
    op = model.torch_name(func) is not None or (
        isinstance(func, ast.Attribute) and model.kind(func.value) in (Kind.TENSOR, Kind.PARAMETER))
    return op or not _hooked(model)


def _fresh(model: "ArgumentFacts", value: Optional[ast.expr]) -> bool:
    """A value that is a new tensor, no other name's: arithmetic, a torch op that neither
    writes in place nor views or returns its input, a module call known to return a new one."""
    if isinstance(value, ast.BinOp) or isinstance(value, ast.UnaryOp) and not isinstance(value.op, ast.UAdd):
        return True  # (`+x` is `x` itself: torch's `positive` returns its input)
    if not isinstance(value, ast.Call) or model.dataflow.alias_source(value)[0] is not None:
        return False
    func = value.func
    name = model.torch_name(func)
    if shares_memory(value):
        return False  # `torch.from_numpy(arr)`: `arr` sees every write into it
    if name is not None and name.rsplit(".", 1)[-1] in LEGACY_CONSTRUCTORS:
        # `torch.Tensor(n, d)` is new; `torch.Tensor(x)` is `x` itself, `torch.Tensor(arr)` shares
        # a float32 array's memory: one argument only where it is a number or a literal list
        single = value.args[0] if len(value.args) == 1 else None
        return model.is_factory(value) and (single is None or isinstance(single, (ast.List, ast.Tuple, ast.ListComp))
                                            or model.kind(single) is Kind.SCALAR)
    if name is not None:
        return name not in torch_api.INPLACE_FUNCTIONS and name not in torch_api.RETURNS_INPUT_FUNCTIONS \
            and not _inplace_keyword(value)
    if isinstance(func, ast.Attribute) and model.kind(func.value) in (Kind.TENSOR, Kind.PARAMETER):
        return func.attr in torch_api.TENSOR_METHODS and func.attr not in torch_api.INPLACE_METHODS \
            and func.attr not in torch_api.RETURNS_INPUT_METHODS
    if model.returns_fresh(value):
        return True
    # `self.drop(tok + pos)`: a torch module measured to hand its input back (nn.Dropout in eval
    # mode, nn.Identity) returns a new tensor or its input, here a temporary nobody else holds
    return model.kind(func) is Kind.MODULE and model.summaries.of_call(value) is None \
        and len(value.args) == 1 and not value.keywords and not isinstance(value.args[0], ast.Starred) \
        and model._may_return_input(value, [0]) is True and _fresh(model, value.args[0])


def _hands_back(model: "ArgumentFacts", value: Optional[ast.expr], key: str) -> bool:
    """``x = block(x)`` where the call returns the very tensor ``x`` it is given (or a view of
    it: a module of the file whose summary says so, a torch module measured to, like
    ``nn.Dropout`` in eval mode) and keeps nothing it returns: in a loop, ``x`` stays the
    object it was bound to before, as fresh as that one."""
    if not (isinstance(value, ast.Call) and not value.keywords
            and not any(isinstance(a, ast.Starred) for a in value.args)):
        return False
    at = [i for i, a in enumerate(value.args) if isinstance(a, ast.Name) and a.id == key]
    if len(at) != 1 or model.result_kept(value):
        return False
    summary = model.summaries.of_call(value)
    if summary is not None:
        return summary.returns in SHARES_INPUT and summary.returned_input == at[0]
    return len(value.args) == 1 and model.kind(value.func) is Kind.MODULE and model._may_return_input(value, at) is True


def _inplace_keyword(call: ast.Call) -> bool:
    return any(k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
               for k in call.keywords)


# nn.Module methods that return neither the instance nor a way to call it.
_GETTERS = frozenset({"parameters", "named_parameters", "buffers", "named_buffers", "children", "named_children",
                      "state_dict", "load_state_dict", "zero_grad", "extra_repr"})
# nn.Module methods that change the instance's state or placement only (result discarded).
_SETTINGS = frozenset({"train", "eval", "to", "cuda", "cpu", "xpu", "float", "double", "half", "bfloat16", "type",
                       "requires_grad_", "zero_grad", "share_memory"})
