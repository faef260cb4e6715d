"""Whether a call of the file's code hands back a tensor the callee keeps too.

``x = self.block(x); x += b`` writes into what ``self.block`` returned. Where the block keeps
that tensor (``self.last = out; return out``, ``self.cache.append(out)``), the write reaches the
kept one too, and the out-of-place rewrite (``x = x + b``) hides it from whoever reads it there:
the rewrite is no safe fix. This part says a callee keeps nothing only where it sees why:

- every callee the call may run is a function or class of this file (a ``forward``, an
  instance's ``forward``, a ``nn.Sequential`` of torch modules), followed through calls of the
  file's code it returns the result of, a few levels deep;
- no name the returned tensor goes by (what a ``return`` names, what those names were bound
  from, containers built of them) is stored into an attribute or an element, handed to a call
  that is neither torch's nor a module's, declared ``global``/``nonlocal``, or returned as an
  attribute or element of something (``return self.last``).

Anything else: kept (unknown is not "not kept").

The same holds for what a call is *given*: ``remember(h); h += 1`` writes into the tensor a
helper of the file kept (``global LAST; LAST = t``, ``self.seen = t.detach()``), and
``h = h + 1`` hides the write from it (:func:`argument_kept`, :func:`keeps_arguments`).
"""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING, AbstractSet, List, Optional, Protocol, Set, Tuple, cast

from codemod import torch_api
from codemod.analysis.hooks import RETURNS_MODULE, call_hooks, leaf_of_its_own
from codemod.analysis.injected import Foreign
from codemod.analysis.kinds import TENSORISH, Kind
from codemod.analysis.summaries import handed_values, passed_target
from codemod.analysis.super_forward import super_forward
from codemod.analysis.syntax import CONTAINER_FILLING, FUNCTIONS, Function, is_const
from codemod.analysis.tensor_kind import NON_TENSOR_PREFIXES, tensor_only

if TYPE_CHECKING:
    from codemod.analysis.binder import Flow
    from codemod.analysis.dataflow import Dataflow
    from codemod.analysis.facts import Facts
    from codemod.analysis.leaves import Leaves
    from codemod.analysis.tree import Tree
    from codemod.analysis.summaries import Summaries, SummaryFacts

    class KeptFacts(SummaryFacts, Protocol):
        """What this part asks of the model: the summaries (what a call runs), and what a
        module attribute was built from."""

        @property
        def summaries(self) -> Summaries: ...

        @property
        def dataflow(self) -> Dataflow: ...

        def returns_fresh(self, call: ast.Call) -> bool: ...

        def _module_values(self, func: ast.expr) -> Optional[List[object]]: ...

        @property
        def leaves(self) -> Leaves: ...

        @property
        def tree(self) -> Tree: ...

_DEPTH = 4
_SEQUENTIALS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList"})
_KEEP_NOTHING = frozenset({"len", "print", "isinstance", "hasattr", "type", "id", "repr", "str", "range", "int",
                           "float", "bool", "abs", "round", "callable", "format", "hash"})


def result_kept(model: "KeptFacts", call: ast.Call, depth: int = 0) -> bool:
    """Whether what ``call`` returns may also be kept by the code it runs (see the docstring)."""
    if depth > _DEPTH:
        return True
    inner = model.names.identity_argument(call)  # `typing.cast(T, h)`, `torch.jit._unwrap_optional(h)`: `h`
    if inner is not None:  # (a name: what it holds is the rule's to follow; `self.last`: held)
        return result_kept(model, inner, depth + 1) if isinstance(inner, ast.Call) else not isinstance(inner, ast.Name)
    targets = model.summaries.targets
    found = [targets.callee(call), *targets.alternatives(call), *targets.loop_members(call)]
    found = [t for t in found if t is not None]
    if not found:  # torch's (an op, a module, a tensor method) or a builtin keeps nothing; code not seen may
        parent = super_forward(cast("Facts", model), call)  # `super().forward(x)`: the parent's of the file
        if parent is not None:
            return _keeps(model, parent, depth + 1)
        handed = handed_values(targets, call.func)  # `self.act = act`: what every construction passes
        if handed is not None:
            return _handed_keeps(model, handed, depth)
        return not _torch_result(model, call, depth)  # (`self.block = block`, a library's class: `self.last = y`)
    return any(_target_keeps(model, target, depth) for target in found)


def container_fresh(model: "KeptFacts", call: ast.Call) -> bool:
    """What ``call`` returns, and every element of it, is its own: no one else holds them. The
    call runs code of the project only (a function, a module's ``forward``: ``self.head(x)``
    building ``outs = []; outs.append(self.fc(x)); return outs``), which keeps none of it
    (:func:`result_kept`), and each value it puts there is made by it: a torch op's or module's
    result that is no view of its input, arithmetic, a call of the project that hands back none of
    its arguments (``returns_input``), a display of such; no parameter, attribute or element of
    anything. ``x = self.head(h)[0]`` then takes its tensor from a list that dies with the
    statement: a rebinding of ``x`` hides the write from no one."""
    targets = model.summaries.targets
    found = [targets.callee(call), *targets.alternatives(call), *targets.loop_members(call)]
    found = [t for t in found if t is not None]
    if not found or not all(isinstance(t, tuple) and isinstance(t[0], FUNCTIONS) for t in found) \
            or result_kept(model, call):
        return False
    for target in found:
        func = cast(Function, cast(tuple, target)[0])  # type: ignore[type-arg]
        returned = _returned(model, func, 0)
        if returned is None or returned[0] & model.flow(func).params:
            return False  # (`return x, w`: the caller's own tensor)
        if not all(_made_here(model, part) for part in returned[1]):
            return False
    return True


def _made_here(model: "KeptFacts", part: ast.expr) -> bool:
    """A value a function of the project returns (or puts in what it returns) that is a new
    object: no one else may hold it (see :func:`container_fresh`)."""
    if isinstance(part, (ast.Name, ast.Constant, ast.BinOp, ast.UnaryOp, ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return True  # (a name is followed to its bindings; a display's elements are parts of their own)
    if not isinstance(part, ast.Call) or model.dataflow.alias_source(part)[0] is not None \
            or any(k.arg in ("inplace", None) or isinstance(k.value, ast.Starred) for k in part.keywords) \
            or any(isinstance(a, ast.Starred) for a in part.args):
        return False  # `x.view(-1)`, `out[0]`, `self.fc.weight`, `F.relu(x, inplace=True)`
    func = part.func
    if isinstance(func, ast.Name) and func.id in ("list", "dict", "tuple") and not part.args:
        return True  # `outs = list()`
    if model.torch_name(func) is not None:
        return True  # torch's functions: their views and in-place forms are the dataflow's (above)
    if isinstance(func, ast.Attribute) and model.kind(func.value) in TENSORISH and func.attr in torch_api.TENSOR_METHODS:
        return True  # `h.exp()`, `h.sum(1)`: views and in-place methods are the dataflow's (above)
    if isinstance(func, ast.Subscript) and _torch_members(model, func.value):
        return True  # `self.head[i](t)`, `self.head` an `nn.ModuleList` of torch layers
    return model.returns_fresh(part) and not result_kept(model, part)  # `self.fc(x)`, a module of the file


def _torch_members(model: "KeptFacts", holder: ast.expr) -> bool:
    """``self.head``, built only as an ``nn.ModuleList`` / ``nn.Sequential`` of torch layers
    (a display or a comprehension of constructions of torch's module classes) that return a new
    tensor: none hands its input back (``RETURNS_INPUT_MODULES``), none built with ``inplace=``."""
    values = model._module_values(holder)
    if not values:
        return False
    for value in values:
        if not (isinstance(value, ast.Call) and model.torch_name(value.func) in _SEQUENTIALS
                and len(value.args) == 1 and not value.keywords):
            return False
        arg = value.args[0]
        members = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg.elt] if isinstance(arg, ast.ListComp) else []
        if not members:
            return False
        for member in members:
            name = model.torch_name(member.func) if isinstance(member, ast.Call) else None
            if not isinstance(member, ast.Call) or name is None or not name.startswith("torch.nn.") \
                    or not name.rsplit(".", 1)[-1][:1].isupper() or name in _CONTAINERS \
                    or f"torch.nn.{name.rsplit('.', 1)[-1]}" in torch_api.RETURNS_INPUT_MODULES \
                    or any(k.arg in ("inplace", None) for k in member.keywords):
                return False
    attr = holder.attr if isinstance(holder, ast.Attribute) else None
    return attr is not None and not any(  # no member added or replaced later: `self.head.append(Keeper())`
        isinstance(node, ast.Attribute) and node.attr == attr and isinstance(up := model.parent(node), (ast.Attribute, ast.Subscript))
        and (isinstance(up, ast.Attribute) and up.attr in ("append", "extend", "insert", "__setitem__")
             or isinstance(up, ast.Subscript) and not isinstance(up.ctx, ast.Load))
        for node in model.walk(model.module))


def _target_keeps(model: "KeptFacts", target: object, depth: int) -> bool:
    """Whether the code a call runs (a target of ``CallTargets``) may keep what it returns."""
    if isinstance(target, tuple) and isinstance(target[0], FUNCTIONS):
        return _keeps(model, target[0], depth)
    if isinstance(target, ast.Call):  # nn.Sequential(...): what its last member returns
        return _sequential_keeps(model, target, depth)
    return _kept_elsewhere(model, target)  # another file's code its own file could not clear


def _handed_keeps(model: "KeptFacts", handed: List[ast.expr], depth: int) -> bool:
    """``self.act(x)`` where ``self.act = act`` stores a constructor's parameter and every
    construction is seen (``summaries.handed_values``): kept unless each value passed keeps nothing,
    a torch module built there or a torch function (:func:`_torch_value`), or a module or
    function of the project whose code keeps nothing (``summaries.passed_target``)."""
    if not handed:
        return True
    for value in handed:
        if _torch_value(model, value, depth):
            continue
        target = passed_target(model.summaries.targets, value)
        if target is None or _target_keeps(model, target, depth + 1):
            return True
    return False


# torch's modules that hold and run other modules: what they keep is what their members keep.
_CONTAINERS = frozenset({*_SEQUENTIALS, "torch.nn.ModuleDict"})


def _torch_value(model: "KeptFacts", value: ast.expr, depth: int) -> bool:
    """A value handed to a constructor that keeps nothing when called: a torch module built
    there (``nn.Sigmoid()``, also what ``BuiltLayers`` resolves: ``getattr(nn, name)()``), not a
    container; a torch function (``torch.tanh``, ``F.gelu``); the same named by the index for
    another file's construction (``injected.Foreign``)."""
    if isinstance(value, Foreign):
        short = value.name.rsplit(".", 1)[-1]
        if value.kind == "torch-new":
            return value.name.startswith("torch.nn.") and short[:1].isupper() and f"torch.nn.{short}" not in _CONTAINERS
        return value.kind == "torch-def" and value.name.startswith("torch.") and short[:1].islower()
    if isinstance(value, ast.Call):
        called = model.torch_name(value.func) or ""
        return f"torch.nn.{called.rsplit('.', 1)[-1]}" not in _CONTAINERS and _built_keeping_nothing(model, [value], depth)
    name = model.torch_name(value) if isinstance(value, (ast.Name, ast.Attribute)) else None
    return name is not None and name.startswith("torch.") and name.rsplit(".", 1)[-1][:1].islower()


def function_keeps(model: "KeptFacts", func: Function) -> bool:
    """Whether what ``func`` returns may also be kept by the code it runs, as its own file sees
    it (the project index's ``SummaryFact.keeps``)."""
    return _keeps(model, func, 0)


def _kept_elsewhere(model: "KeptFacts", target: object) -> bool:
    """A callee of another file of the run (a qualified name): kept unless the project index
    says its own file saw it keep nothing."""
    project = model.calls.project if isinstance(target, str) else None
    fact = project.summary(target) if project is not None and isinstance(target, str) else None
    return fact is None or fact.keeps


def _sequential_keeps(model: "KeptFacts", chain: ast.Call, depth: int) -> bool:
    """From the last member back: a torch module that returns a new tensor ends it (kept by no
    one); one that may hand its input back (``inplace=``, ``nn.Identity``) passes it on; a
    member of the file's code keeps it where its ``forward`` does."""
    for member in reversed(chain.args):
        if not isinstance(member, ast.Call):
            return True
        name = model.torch_name(member.func)
        if name is not None:
            if name.startswith("torch.nn.") and f"torch.nn.{name.rsplit('.', 1)[-1]}" not in torch_api.RETURNS_INPUT_MODULES \
                    and not any(k.arg == "inplace" for k in member.keywords) and name not in _SEQUENTIALS:
                return False
            if not name.startswith("torch.nn."):
                return True
            continue
        target = model.summaries.targets._class_target(member)  # (the callee CallTargets gives a layer)
        if isinstance(target, ast.Call):
            return _sequential_keeps(model, target, depth + 1)
        if not (isinstance(target, tuple) and isinstance(target[0], FUNCTIONS)):
            return True
        return _keeps(model, target[0], depth + 1)
    return True


def _keeps(model: "KeptFacts", func: Function, depth: int) -> bool:
    returned = _returned(model, func, depth)
    return returned is None or _stores(model, func, returned[0], depth)


def _returned(model: "KeptFacts", func: Function, depth: int) -> Optional[Tuple[Set[str], List[ast.expr]]]:
    """The names what ``func`` returns goes by (what a ``return`` names, what those names were
    bound from or filled with) and every value reached on the way; None where one is held by
    something else (``return self.last``, ``out = self.last``) or by a call that may keep it."""
    values = [n.value for n in model.walk(func) if isinstance(n, ast.Return) and n.value is not None
              and model.owner(n) is func]
    names: Set[str] = set()
    pending = list(values)
    reached: List[ast.expr] = []
    flow = model.flow(func)
    while pending:
        value = pending.pop()
        for part in _parts(value):
            reached.append(part)
            if part not in values and _held_source(model, flow, part, names, pending):
                return None  # `out = self.last; return out`, `return self.buf.view(-1)`: the object's
            if isinstance(part, ast.Name):
                if part.id in names:
                    continue
                names.add(part.id)
                if part.id not in flow.bindings and part.id not in flow.declared:
                    return None  # a module-level name (`return CACHE`): its module keeps it
                for b in flow.bindings.get(part.id, []):
                    if b.value is not None:
                        pending.append(b.value)
                    elif b.form == "other" and isinstance(b.stmt, ast.Assign):
                        pending.append(b.stmt.value)  # `a, b = self.pair`: what the unpacked value holds
                    elif b.form == "other" and isinstance(b.stmt, (ast.For, ast.AsyncFor)):
                        pending.append(b.stmt.iter)  # `for k, v in self.table.items()`
                    elif b.form != "param":
                        return None  # `with ... as t`, a comprehension's or a pattern's name: not followed
                pending.extend(_put_into(model, func, part.id))  # `outs.append(self.last)`: its elements
            elif isinstance(part, (ast.Attribute, ast.Subscript)) and part in values:
                return None  # `return self.last`, `return cache[k]`
            elif isinstance(part, ast.Call) and _builds_from(model, part):
                pending.extend(a.value if isinstance(a, ast.Starred) else a for a in part.args)  # `tuple(outs)`
            elif isinstance(part, ast.Call) and _array_library(model, part):
                pending.extend(a.value if isinstance(a, ast.Starred) else a for a in part.args)  # `np.stack(parts)`:
                pending.extend(k.value for k in part.keywords)  # no tensor of torch's, a view of its arguments at most
            elif isinstance(part, ast.Call) and model.torch_name(part.func) is None \
                    and result_kept(model, part, depth + 1):
                return None  # `return self.block(x)`, `return grab(x)`: what that code keeps
            elif isinstance(part, ast.Call) and _unplaced_attribute_keeps(model, part, depth):
                return None
    return names, reached


_BUILDERS = frozenset({"builtins.tuple", "builtins.list", "builtins.dict", "builtins.set", "builtins.sorted",
                       "builtins.reversed"})


def _builds_from(model: "KeptFacts", call: ast.Call) -> bool:
    """``tuple(outs)``, ``list(feats)``: a new container of what it is given (the builtin, not shadowed)."""
    return bool(model.qualified_names(call.func) & _BUILDERS) and not call.keywords


def _array_library(model: "KeptFacts", call: ast.Call) -> bool:
    """A function of numpy, math, random... (``tensor_kind``'s non-tensor libraries): it keeps
    nothing of its own; what it returns is new or one of its arguments (or a view of one)."""
    return any(q.startswith(NON_TENSOR_PREFIXES) for q in model.qualified_names(call.func))


def _held_source(model: "KeptFacts", flow: "Flow", part: ast.expr, names: Set[str], pending: List[ast.expr]) -> bool:
    """A value the callee returns (or a name it returns was bound from) that is, or views, what
    something else holds: an attribute or element of an object (``self.last``, ``self.buf.view(-1)``,
    ``self.pair[0]``), a parameter's or a global's element. A view of a local name (``out[:, 0]``,
    ``out.T``) is that name's: it is followed (``pending``) instead."""
    if isinstance(part, ast.Name):
        return False
    source, _ = model.dataflow.alias_source(part)
    if source is None:
        return False
    if "." in source:
        return True  # `self.last`, `self.buf.view(-1)`, `obj.x`
    if source in flow.declared or source not in flow.bindings:
        return True  # `CACHE[k]`: a global's element
    if source in flow.params:
        return False  # the caller's own tensor handed back: ``returned_alias``'s question, not this one
    if source not in names:
        pending.append(ast.Name(id=source, ctx=ast.Load()))
    return False


_FILLING = CONTAINER_FILLING | {"extendleft"}


def _put_into(model: "KeptFacts", func: Function, name: str) -> List[ast.expr]:
    """What ``func`` puts into the container ``name`` holds: ``name.append(v)``, ``name.insert(i, v)``,
    ``name[k] = v``: the elements a caller finds in it besides its display's. A tensor holds no
    element: ``boxes[..., 3] = width`` copies ``width``'s values."""
    found: List[ast.expr] = []
    for node in model.walk(func):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILLING \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name \
                and model.kind(node.func.value) not in TENSORISH:
            found.extend(a.value if isinstance(a, ast.Starred) else a for a in node.args)
            found.extend(k.value for k in node.keywords)
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name
                   and model.kind(t.value) not in TENSORISH for top in targets for t in ast.walk(top)):
                found.append(node.value)
    return found


def _unplaced_attribute_keeps(model: "KeptFacts", call: ast.Call, depth: int) -> bool:
    """``return self.act(x)`` (or a name bound from it), where the kind of ``self.act`` is not
    known, built from what the file shows: a table (``self.act = ACTS[name]``) or an instance of
    a class of the file. The module it holds may keep what it returns (``self.last = y; return
    y``): kept unless every such value keeps nothing (:func:`_table_module`, the class's
    ``forward``). A value the file does not show (a constructor's parameter: a loss function
    the caller hands in; a library's class) is code not seen: kept unless torch's, as a direct
    call's result is (:func:`result_kept`)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self") \
            or model.torch_name(func) is not None or model.kind(func) is not Kind.UNKNOWN:
        return False
    targets = model.summaries.targets
    if targets.callee(call) is not None or targets.alternatives(call) or handed_values(targets, func) is not None:
        return result_kept(model, call, depth + 1)  # a function or module of the project, what is handed in
    final = model.summaries.chains.decided.final(func)
    values = final if final is not None else model._module_values(func) or []
    for value in values:
        for part in _parts(value) if isinstance(value, ast.expr) else []:
            item = part.func if isinstance(part, ast.Call) else part
            if isinstance(item, ast.Subscript) and not _table_module(model, part, depth):
                return True  # a table entry that may keep, or a table the file changes
            target = model.summaries.targets._class_target(part) if isinstance(part, ast.Call) \
                and isinstance(part.func, ast.Name) else None
            if isinstance(target, tuple) and isinstance(target[0], FUNCTIONS):
                if _keeps(model, target[0], depth + 1):
                    return True  # `self.act = Keeper()`
            elif not isinstance(item, ast.Subscript) and not _built_keeping_nothing(model, [part], depth):
                return True  # `self.act = act` (a constructor's parameter), `self.act = Lib()`: not seen
    return not values and not _torch_result(model, call, depth)


def _stores(model: "KeptFacts", func: Function, names: Set[str], depth: int) -> bool:
    """Whether ``func`` keeps a tensor one of ``names`` holds beyond its call: stores it into an
    attribute or an element (also through a container bound from it), hands it to a call that
    may keep it, declares it ``global``/``nonlocal``, or a nested function or lambda reads it."""
    flow = model.flow(func)
    if names & set(flow.declared):
        return True
    # Other names bound from containers holding the returned ones (`d = {"o": out}`).
    for name, bindings in flow.bindings.items():
        if any(b.value is not None and any(isinstance(p, ast.Name) and p.id in names for p in _parts(b.value))
               for b in bindings):
            names.add(name)
    for node in model.walk(func):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any((isinstance(t, (ast.Attribute, ast.Subscript)) or isinstance(t, (ast.Tuple, ast.List))
                    and any(isinstance(e, (ast.Attribute, ast.Subscript, ast.Starred)) for e in t.elts))
                   and not _fills(t, names) for t in targets) and _mentions(node.value, names):
                return True  # `self.last = out`
        elif isinstance(node, ast.Call) and any(_mentions(a, names) for a in (*node.args, *(k.value for k in node.keywords))) \
                and not _fills(node, names) and _call_keeps(model, node, depth + 1):
            return True  # `self.cache.append(out)`, `setattr(self, "last", out)`
        elif isinstance(node, (*FUNCTIONS, ast.Lambda)) and node is not func and any(
                isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)):
            return True  # `self.hook = lambda: out`: a closure keeps it
    return False


def _fills(node: ast.AST, names: Set[str]) -> bool:
    """``outs.append(t)``, ``outs[k] = t``: a tensor put into a container that is itself returned
    (one of ``names``): the caller gets it there, nothing else keeps it (``_put_into``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FILLING:
        return isinstance(node.func.value, ast.Name) and node.func.value.id in names
    return isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in names


def keeps_arguments(model: "KeptFacts", call: ast.Call) -> bool:
    """Whether the code ``call`` runs may keep a tensor it is given beyond the call: a function
    or module of this file where :func:`argument_kept` says so; torch's ops and modules, tensor
    methods and read-only builtins keep nothing (:func:`_torch_call`); other code may."""
    return _call_keeps(model, call, 0)


def _call_keeps(model: "KeptFacts", call: ast.Call, depth: int) -> bool:
    """:func:`keeps_arguments` at ``depth``: a function or module of the file is followed
    (``self.block(t)`` whose ``forward`` stores ``t``) before torch's modules are trusted."""
    if _function_called(model, call) is not None:
        return argument_kept(model, call, depth)
    members = _functions_run(model, call)
    if members:  # `blk(c)` in a loop over `self.blocks`: what every member's forward keeps
        return hooks_may_keep(model) or any(_given_kept(model, call, f, depth) for f in members)
    return not _torch_call(model, call, depth)


def _functions_run(model: "KeptFacts", call: ast.Call) -> List[Function]:
    """The functions of the file a call with no one callee runs: ``self.unit(x)``, the unit set to
    modules of the file on branches, or ``blk(x)`` in a loop over a class's layers (every member
    runs it: ``summaries.targets``); empty where one of them is no function of the file."""
    targets = model.summaries.targets
    found = targets.alternatives(call) or targets.loop_members(call)
    funcs = [t[0] for t in found if isinstance(t, tuple) and isinstance(t[0], FUNCTIONS)]
    return funcs if len(funcs) == len(found) else []


def _given_kept(model: "KeptFacts", call: ast.Call, func: Function, depth: int) -> bool:
    """:func:`argument_kept` for ``func``, one of the functions ``call`` may run."""
    if depth > _DEPTH:
        return True
    given = _given_parameters(model, call, func)
    return given is None or _parameters_kept(model, func, given, depth)


def _function_called(model: "KeptFacts", call: ast.Call) -> Optional[Function]:
    target = model.summaries.targets.callee(call)
    return target[0] if isinstance(target, tuple) and isinstance(target[0], FUNCTIONS) else None


def _torch_call(model: "KeptFacts", call: ast.Call, depth: int = 0) -> bool:
    """A call that keeps none of its arguments: torch's (an op, a module: ``self.bn`` built as
    ``nn.BatchNorm2d(c) if norm else None`` too), a module, or a builtin that keeps nothing."""
    if model.torch_name(call.func) is not None:
        return True
    if hooks_may_keep(model):  # a forward hook of the file may keep what a module's call sees
        return False
    if model.kind(call.func) is Kind.MODULE:
        return True
    func = call.func
    if isinstance(func, ast.Subscript) and _torch_members(model, func.value):
        return True  # `self.head[i](t)`, `self.head` an `nn.ModuleList` of torch layers
    if isinstance(func, ast.Attribute) and func.attr != "set_" and model.kind(func.value) in TENSORISH \
            and (func.attr in torch_api.TENSOR_METHODS or func.attr in torch_api.INPLACE_METHODS):
        return True  # `out.scatter_add(dim, index, src)`: a tensor method reads the values it is given
    if isinstance(call.func, ast.Name) and call.func.id in _KEEP_NOTHING:
        return True
    handed = handed_values(model.summaries.targets, call.func)  # `self.act = act`, each construction passing torch's
    if handed and all(_torch_value(model, v, depth) for v in handed):
        return True
    values = model._module_values(call.func) or []  # what `self.bn` was built from
    if _built_keeping_nothing(model, values, depth):
        return True
    func = call.func  # `if act == "mish": self.act = ACTS[act]`, never run: only what `__init__` leaves
    final = model.summaries.chains.decided.final(func) if isinstance(func, ast.Attribute) \
        and isinstance(func.value, ast.Name) and func.value.id == "self" else None
    if bool(final) and _built_keeping_nothing(model, cast(List[object], final), depth):
        return True
    return _named_torch_module(model, call)


def _named_torch_module(model: "KeptFacts", call: ast.Call) -> bool:
    """``self.llm.model.embed_tokens(ids)`` (VILA, realworld set2/116): a module the hook facts
    name (``hooks.ModuleNames``: a class of the file and an attribute chain from it, here
    ``TinyLLM`` and ``model.embed_tokens``) that the class sets (``self.model.embed_tokens =
    nn.Embedding(...)``) only to torch modules returning a new tensor (no container, none handing
    its input back, none built with ``inplace=`` or ``**``), where no other place of the file
    stores or deletes an attribute of a name in the chain (``net.llm.model.embed_tokens =
    Keeper()``) nor calls ``setattr``/``delattr``, and no forward hook of the file may keep what
    a module's call is given or returns (:func:`hooks_may_keep`): calling it runs torch's
    ``forward``, which keeps nothing."""
    named = model.leaves.hooked.names.identity(call.func, model.statement_of(call), 0)
    if named is None or not named[1]:
        return False
    cls, chain = named
    allowed = {".".join(("self",) + chain[:k]) for k in range(1, len(chain) + 1)}
    text = ".".join(("self",) + chain)
    stores = [n for n in model.walk(cls) if isinstance(n, ast.Assign) and len(n.targets) == 1
              and isinstance(n.targets[0], ast.Attribute) and ast.unparse(n.targets[0]) in allowed]
    built = [n.value for n in stores if ast.unparse(n.targets[0]) == text]
    if not built or not all(_torch_layer(model, v) for v in built):
        return False
    counted = {id(n.targets[0]) for n in stores}
    if any(isinstance(n, ast.Attribute) and n.attr in chain and not isinstance(n.ctx, ast.Load)
           and id(n) not in counted for n in model.tree.nodes(ast.Attribute)):
        return False
    if any(isinstance(n.func, ast.Name) and n.func.id in ("setattr", "delattr")  # type: ignore[attr-defined]
           for n in model.tree.nodes(ast.Call)):
        return False
    return not hooks_may_keep(model)


def _torch_layer(model: "KeptFacts", value: ast.expr) -> bool:
    """A construction of a torch module class that returns a new tensor: not a container, not one
    that may hand its input back (``nn.Identity``, ``inplace=``), no ``**`` keywords."""
    if not isinstance(value, ast.Call):
        return False
    name = model.torch_name(value.func) or ""
    short = name.rsplit(".", 1)[-1]
    return name.startswith("torch.nn.") and short[:1].isupper() and f"torch.nn.{short}" not in _CONTAINERS \
        and f"torch.nn.{short}" not in torch_api.RETURNS_INPUT_MODULES \
        and not any(k.arg in ("inplace", None) for k in value.keywords)


def hooks_may_keep(model: "KeptFacts") -> bool:
    """Whether a hook this file registers on modules' calls (``hooks.call_hooks``: a forward hook
    or pre-hook, on a module or torch's global one) may keep what a call of a module is given or
    returns beyond the call: ``SEEN.append(output)``, ``feats[name] = out.detach()`` (a view of
    the output), a lambda doing so, a hook handing back another tensor, a hook the analysis
    cannot see into, or one put into a hook table. Where one may, a rewrite of a write into a
    module's result (``h = self.fc(x); h += 1`` -> ``h = h + 1``) would hide the write from it:
    :func:`_named_torch_module` then recognises nothing. A hook that keeps nothing
    (``output.requires_grad_(True)``, reading ``out.shape``) changes nothing. Hooks registered
    by other files are not seen here. :func:`_torch_call` asks it for every module's call (a
    module's result or argument is held by such a hook), a torch function's call not."""
    tree = model.tree  # (the key: the model itself may be a weak proxy, ``Holders.fresh_container``'s)
    if tree not in _HOOKS_KEEP:
        _HOOKS_KEEP[tree] = True  # (while asked: a hook's own calls count as keeping)
        hooks = call_hooks(tree)
        _HOOKS_KEEP[tree] = hooks is None or any(_hook_keeps(model, h) for h in hooks)
    return _HOOKS_KEEP[tree]


# the answer per file's tree (one file's analysis), found once
_HOOKS_KEEP: "weakref.WeakKeyDictionary[Tree, bool]" = weakref.WeakKeyDictionary()


def _hook_keeps(model: "KeptFacts", hook: ast.expr) -> bool:
    """Whether ``hook`` (a lambda, or a name or ``self.<method>`` the hook facts resolve to a
    ``def``) may keep what it sees (every parameter but the module) beyond its call, or hands
    back a value other than one of them (which the call then returns)."""
    if isinstance(hook, ast.Lambda):
        seen = {a.arg for a in (*hook.args.posonlyargs, *hook.args.args, *hook.args.kwonlyargs)[1:]}
        body = hook.body
        if isinstance(body, ast.Constant) and body.value is None or leaf_of_its_own(hook) is True:
            return False  # (`lambda m, i, o: o.detach().requires_grad_()`: a new leaf no one else holds)
        return not (isinstance(body, ast.Call) and isinstance(body.func, ast.Attribute)
                    and body.func.attr == "requires_grad_" and isinstance(body.func.value, ast.Name)
                    and body.func.value.id in seen and not any(_holds(a, seen) for a in body.args)
                    and not body.keywords)  # `lambda m, i, o: o.requires_grad_(True)` hands `o` back
    func = model.leaves.hooked._hook_function(hook)
    if not isinstance(func, FUNCTIONS):
        return True
    args = func.args
    params = [a.arg for a in (*args.posonlyargs, *args.args)][1 if isinstance(hook, ast.Attribute) else 0:]
    seen = {*params[1:], *(a.arg for a in args.kwonlyargs), *(a.arg for a in (args.vararg, args.kwarg) if a is not None)}
    returns = [r.value for r in model.tree.returns(func) if r.value is not None and not is_const(r.value, None)]
    # a hook handing back a leaf of its own (captum's `leaf = output.detach().requires_grad_()`,
    # kept and returned): the module's call returns that leaf, which requires grad, so a write into
    # it is refused at the write with grad on; what the hook keeps of it is no working run's state
    leaves = {v.id for v in returns if isinstance(v, ast.Name)} \
        if model.leaves.hooked._effect(hook) is True else set()
    if _parameters_kept(model, func, seen, 0, exempt=leaves):
        return True
    return any(not (isinstance(v, ast.Name) and v.id in seen | leaves) for v in returns)


def _torch_result(model: "KeptFacts", call: ast.Call, depth: int) -> bool:
    """What ``call`` returns no one else keeps: a call of torch's, a module's or a builtin's
    (:func:`_torch_call`), or a method only tensors have called on a value of unknown kind
    (``h.clone()``, ``feats[i].sigmoid()``: the kind model counts its result a tensor, any other
    receiver would raise)."""
    if _torch_call(model, call, depth):
        return True
    func = call.func
    if not (isinstance(func, ast.Attribute) and tensor_only(func.attr) and model.kind(func.value) is Kind.UNKNOWN):
        return False
    if model.kind(call) is Kind.TENSOR:
        return True
    own = _own_methods_named(model, func.attr)  # `x.reciprocal()`, a class of the file defining `reciprocal`
    return bool(own) and not model.qualified_names(func) and not call.args and not call.keywords \
        and all(_returns_its_own(model, m, depth + 1) for m in own)


def _own_methods_named(model: "KeptFacts", name: str) -> List[Function]:
    """The methods called ``name`` the classes of the module define (at any depth)."""
    return [f for c in model.walk(model.module) if isinstance(c, ast.ClassDef)
            for f in c.body if isinstance(f, FUNCTIONS) and f.name == name]


def _returns_its_own(model: "KeptFacts", method: Function, depth: int) -> bool:
    """``x.reciprocal()``, ``x`` of unknown kind, where a class of the file defines ``reciprocal``
    too: on a tensor, torch's method returns a new tensor; on an instance of that class, the
    method is undecorated, takes no argument but ``self``, its class has no base (so it is no
    tensor), and no class of the file defines an in-place tensor method or ``__getattr__`` (so an
    in-place tensor method on anything the class hands back raises, before the rewrite as after).
    What it returns must then be its own: it keeps nothing of it and hands back no parameter
    (:func:`_returned`), or it is a new instance of a plain class (:func:`_returns_new_instances`)."""
    cls = model.parent(method)
    args = method.args
    if not (isinstance(cls, ast.ClassDef) and not cls.bases and not cls.keywords and not method.decorator_list
            and len(args.posonlyargs) + len(args.args) == 1 and not args.kwonlyargs and args.vararg is None
            and args.kwarg is None):
        return False
    if any(m.name in torch_api.INPLACE_METHODS or m.name in ("__getattr__", "__getattribute__")
           for c in model.walk(model.module) if isinstance(c, ast.ClassDef) for m in c.body if isinstance(m, FUNCTIONS)):
        return False
    returned = _returned(model, method, depth)
    if returned is not None and not returned[0] & model.flow(method).params \
            and not _stores(model, method, returned[0], depth):
        return True
    return _returns_new_instances(model, method, depth)


def _returns_new_instances(model: "KeptFacts", func: Function, depth: int) -> bool:
    """Every ``return`` of ``func`` gives a new instance of a plain class of the file (no base, so
    never a tensor; no ``__new__``, and an ``__init__`` that hands ``self`` to no one), directly or
    through a function of the file that does the same (``return unary(op, self)``, ``unary``
    returning ``Tensor(op(arg.data))``): no tensor anyone else holds."""
    values = [n.value for n in model.walk(func) if isinstance(n, ast.Return) and model.owner(n) is func]
    if depth > _DEPTH or not values:
        return False
    for value in values:
        top = model.summaries.targets._top_level().get(value.func.id) \
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and len(model.flow(model.module, nested=False).bindings.get(value.func.id, [])) == 1 else None
        if isinstance(top, ast.ClassDef):
            if top.bases or top.keywords or top.decorator_list or not _init_keeps_self_to_itself(top):
                return False
        elif not (isinstance(top, FUNCTIONS) and _returns_new_instances(model, top, depth + 1)):
            return False
    return True


def _init_keeps_self_to_itself(cls: ast.ClassDef) -> bool:
    """No ``__new__``, and ``__init__`` reads ``self`` only as ``self.<attr>``: constructing the
    class hands the new instance to no one."""
    methods = {m.name: m for m in cls.body if isinstance(m, FUNCTIONS)}
    if "__new__" in methods:
        return False
    init = methods.get("__init__")
    if init is None:
        return True
    attribute_values = {id(n.value) for n in ast.walk(init) if isinstance(n, ast.Attribute)}
    return all(id(n) in attribute_values for n in ast.walk(init) if isinstance(n, ast.Name) and n.id == "self")


def _built_keeping_nothing(model: "KeptFacts", values: List[object], depth: int) -> bool:
    """Every value a module attribute may be built from is a module that keeps none of its
    arguments: torch's, or an entry of a table of them (:func:`_table_module`), or None."""
    if not values or not all(isinstance(v, ast.expr) for v in values):
        return False
    parts = [_module_itself(model, p) for v in values if isinstance(v, ast.expr) for p in _parts(v)]
    return all(isinstance(p, ast.Constant) and p.value is None or isinstance(p, ast.Call)
               and (model.torch_name(p.func) or "").startswith("torch.nn.") or _table_module(model, p, depth)
               or _torch_forward_class(model, p) or _built_by_name(model, p) for p in parts)


def _module_itself(model: "KeptFacts", part: ast.expr) -> ast.expr:
    """``nn.Linear(4, 4).half()`` -> ``nn.Linear(4, 4)``: a torch module's method that hands back
    the module itself (``to``, ``float``, ``eval``...: ``hooks.RETURNS_MODULE``), called on a
    construction of torch's or one ``BuiltLayers`` resolves."""
    inner = part
    while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr in RETURNS_MODULE:
        inner = inner.func.value
    if inner is not part and isinstance(inner, ast.Call) \
            and ((model.torch_name(inner.func) or "").startswith("torch.nn.") or _built_by_name(model, inner)):
        return inner
    return part


def _built_by_name(model: "KeptFacts", part: ast.expr) -> bool:
    """``getattr(nn, act)()``, ``ACTS[name]()``, ``get_act(name)``, ``self.make_gate(kind)``: a
    construction whose every possible module is a torch module class the analysis knows
    (``BuiltLayers.modules``, the same answer that says what the layer saves), none a container."""
    if not isinstance(part, ast.Call):
        return False
    built = model.summaries.chains.built.modules(part)
    return built is not None and bool(built) and all(cls not in _CONTAINERS for cls, _ in built)


# What a class may define or call to run code of its own when an instance is called.
_OWN_CALL = frozenset({"forward", "__call__", "_call_impl", "__getattr__", "__getattribute__", "__new__",
                       "__init_subclass__", "__class__"})


def _torch_forward_class(model: "KeptFacts", part: ast.expr) -> bool:
    """``EsmFoldLinear(c, c, init="gating")``: an instance of a top-level class of the file whose
    every base is a torch module that returns a tensor (``nn.Linear``; not ``nn.Module`` nor a
    container) and that defines no ``forward`` (nor ``__call__``, ``__getattr__``...), takes no
    metaclass or decorator and names no hook: calling it runs torch's ``forward``, which keeps
    neither what it is given nor what it returns."""
    if not (isinstance(part, ast.Call) and isinstance(part.func, ast.Name)):
        return False
    cls = model.summaries.targets._top_level().get(part.func.id)
    if not isinstance(cls, ast.ClassDef) or not cls.bases or cls.keywords or cls.decorator_list \
            or not all(model.torch_name(b) in torch_api.TENSOR_MODULES for b in cls.bases):
        return False
    for node in ast.walk(cls):
        name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) \
            else node.name if isinstance(node, (*FUNCTIONS, ast.ClassDef)) and node is not cls else None
        if name is not None and (name in _OWN_CALL or "hook" in name.lower()):
            return False
    return True


def _table_module(model: "KeptFacts", part: ast.expr, depth: int) -> bool:
    """``self.act = ACTS[name](inplace=True)`` / ``self.act = ACTS[name]``, ``ACTS`` a dict
    display of the file read only (``ChosenLayers._entries``: nothing replaces an entry or hands
    the dict on): a module that keeps none of its arguments where every entry the key may pick
    is a torch module class (called here), or a module built in the display: torch's, or a
    class of the file whose ``forward`` keeps none of its parameters nor what it returns
    (``"mish": Mish()``)."""
    called = isinstance(part, ast.Call)
    item = part.func if isinstance(part, ast.Call) else part
    if not isinstance(item, ast.Subscript):
        return False
    entries = model.summaries.chains.chosen._entries(item)
    if not entries:
        return False
    for entry in entries:
        if called:
            name = model.torch_name(entry) if isinstance(entry, (ast.Name, ast.Attribute)) else None
            if name is None or not name.startswith("torch.nn.") or not name.rsplit(".", 1)[-1][:1].isupper() \
                    or name in _SEQUENTIALS:
                return False
            continue
        if not isinstance(entry, ast.Call):
            return False
        if (model.torch_name(entry.func) or "").startswith("torch.nn."):
            if model.torch_name(entry.func) in _SEQUENTIALS:
                return False
            continue
        target = model.summaries.targets._class_target(entry)
        if not (isinstance(target, tuple) and isinstance(target[0], FUNCTIONS)) \
                or _parameters_kept(model, target[0], _forward_parameters(model, target[0]), depth + 1) \
                or _keeps(model, target[0], depth + 1):
            return False  # (what it is given, or what it returns: `self.cache = x * 2; return self.cache`)
    return True


def _forward_parameters(model: "KeptFacts", func: Function) -> Set[str]:
    """Every parameter of a module's ``forward`` but ``self``: what a call of the instance may give it."""
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)][1:]
    extra = [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return {*plain, *(a.arg for a in args.kwonlyargs), *extra}


def _parts(value: ast.expr) -> list:  # type: ignore[type-arg]
    """The expressions ``value`` may evaluate to, or hold as an element."""
    if isinstance(value, ast.IfExp):
        return _parts(value.body) + _parts(value.orelse)
    if isinstance(value, (ast.Tuple, ast.List, ast.Set)):
        return [p for e in value.elts for p in _parts(e.value if isinstance(e, ast.Starred) else e)]
    if isinstance(value, ast.Dict):
        return [p for e in value.values for p in _parts(e)]
    if isinstance(value, ast.NamedExpr):
        return [value.target, *_parts(value.value)]
    return [value]


def _mentions(value: ast.expr, names: Set[str]) -> bool:
    return any(isinstance(p, ast.Name) and p.id in names for p in _parts(value))


def argument_kept(model: "KeptFacts", call: ast.Call, depth: int = 0) -> bool:
    """Whether a function of this file that ``call`` runs may keep what it is given: it stores a
    parameter the call passes (or a name bound from one, a view, element or method result of
    one: ``self.seen = t.detach()``, ``t[0]``) into a global or nonlocal name, an attribute or
    an element of anything, hands one to a call that is neither torch's, a module's nor a
    function of the file seen to keep nothing (``cache.append(t)``), or a function nested in
    it reads one (a closure cell). Parameters the call leaves at their defaults hold no tensor
    of the caller's. Calls of code the file does not show are not answered here
    (:func:`keeps_arguments` counts them as keeping)."""
    if depth > _DEPTH:
        return True
    func = _function_called(model, call)
    if func is None:
        return False
    given = _given_parameters(model, call, func)
    if given is None:
        return True  # `f(*xs)`, `f(**kw)`: which parameter gets what is not seen
    return _parameters_kept(model, func, given, depth)


def _parameters_kept(model: "KeptFacts", func: Function, given: Set[str], depth: int,
                     exempt: AbstractSet[str] = frozenset()) -> bool:
    """:func:`argument_kept` for the parameters ``given`` of ``func`` (``exempt``: names bound
    from them whose keeping does not count)."""
    if depth > _DEPTH:
        return True
    flow = model.flow(func)
    names = set(given)
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) and model.owner(n) is func for n in model.walk(func)):
        return True  # a generator function: its frame keeps what it is given until it is exhausted
    for _ in range(_DEPTH):  # names bound from them
        names |= {name for name, bindings in flow.bindings.items()
                  if name not in exempt and any(b.value is not None and _holds(b.value, names) for b in bindings)}
    for node in model.walk(func):
        if isinstance(node, (*FUNCTIONS, ast.Lambda, ast.GeneratorExp)) and node is not func \
                and not _consumed_at_once(model, node) \
                and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)):
            return True  # a closure over it; a generator expression's iterator over it
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                and _holds(node.value, names):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            stored = [t for top in targets for t in ast.walk(top) if isinstance(t, (ast.Name, ast.Attribute, ast.Subscript))
                      and not isinstance(t.ctx, ast.Load)]
            if any(not isinstance(t, ast.Name) or t.id in flow.declared for t in stored):
                return True  # `LAST = t` (global), `self.last = t`, `cache[k] = t`
        elif isinstance(node, ast.Call) and any(_holds(a, names) for a in (*node.args, *(k.value for k in node.keywords))) \
                and _call_keeps(model, node, depth + 1):
            return True  # `cache.append(t)`, `setattr(obj, "t", t)`, a helper keeping it
    return False


_EAGER = frozenset({"sum", "tuple", "list", "set", "dict", "min", "max", "any", "all", "sorted", "len"})


def _consumed_at_once(model: "KeptFacts", node: ast.AST) -> bool:
    """A generator expression that the call it is handed to runs to its end there
    (``sum(r for r in t)``, ``torch.stack(tuple(...))``): nothing keeps its iterator."""
    call = model.parent(node)
    return isinstance(node, ast.GeneratorExp) and isinstance(call, ast.Call) and node in call.args \
        and (isinstance(call.func, ast.Name) and call.func.id in _EAGER or model.torch_name(call.func) is not None)


def _given_parameters(model: "KeptFacts", call: ast.Call, func: Function) -> Optional[Set[str]]:
    """The parameters of ``func`` that receive ``call``'s arguments (the others keep their
    defaults); None where a starred argument hides which."""
    args = func.args
    plain = [a.arg for a in (*args.posonlyargs, *args.args)]
    if isinstance(model.parent(func), ast.ClassDef) and plain[:1] in (["self"], ["cls"]):
        plain = plain[1:]  # a method or a module's forward, called on its instance: not given
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords) \
            or len(call.args) > len(plain) and args.vararg is None:
        return None
    given = set(plain[:len(call.args)]) | {k.arg for k in call.keywords if k.arg is not None}
    if len(call.args) > len(plain) and args.vararg is not None:
        given.add(args.vararg.arg)
    if any(k.arg not in plain and k.arg not in {a.arg for a in args.kwonlyargs} for k in call.keywords) \
            and args.kwarg is not None:
        given.add(args.kwarg.arg)
    return given


def _holds(value: ast.expr, names: Set[str]) -> bool:
    """``value`` may be, hold or view a tensor of ``names``: one of them, an element, attribute
    or method result of one (``t[0]``, ``t.detach()``), what a call given one returns
    (``torch.flatten(t)`` is a view), or a container of such; not its metadata (``t.shape``)."""
    for part in _parts(value.value if isinstance(value, ast.Starred) else value):
        while isinstance(part, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(part, ast.Call):
                if isinstance(part.func, ast.Attribute) and part.func.attr in _METADATA_METHODS:
                    break  # `t.size()`, `t.dim()`: numbers, no tensor of ``t``'s
                if any(_holds(a, names) for a in (*part.args, *(k.value for k in part.keywords))):
                    return True  # `torch.flatten(t)`, `ident(t)`: may be a view of it, or it
                if not isinstance(part.func, ast.Attribute):
                    break
                part = part.func
            elif isinstance(part, ast.Attribute) and part.attr in _METADATA_ATTRIBUTES:
                break  # `t.shape`, `t.dtype`
            part = part.value
        if isinstance(part, ast.Name) and part.id in names:
            return True
    return False


# What a tensor tells of itself without sharing its storage (a method only where called:
# ``t.size`` uncalled is a bound method holding ``t``).
_METADATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout", "requires_grad"})
_METADATA_METHODS = frozenset({"size", "dim", "numel", "nelement", "ndimension", "element_size", "stride",
                               "item", "tolist", "is_contiguous", "is_floating_point"})
