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
helper of the file kept (``global LAST; LAST = t``), and ``h = h + 1`` hides the write from it
(:func:`argument_kept`).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, List, Optional, Protocol, Set

from codemod import torch_api
from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import FUNCTIONS, Function, Located

if TYPE_CHECKING:
    from codemod.analysis.summaries import Summaries, SummaryFacts

    class KeptFacts(SummaryFacts, Protocol):
        """What this part asks of the model: the summaries (what a call runs), and what a
        module attribute was built from."""

        @property
        def summaries(self) -> Summaries: ...

        def _module_values(self, func: ast.expr) -> Optional[List[object]]: ...

_DEPTH = 4
_SEQUENTIALS = frozenset({"torch.nn.Sequential", "torch.nn.ModuleList"})
_KEEP_NOTHING = frozenset({"len", "print", "isinstance", "hasattr", "type", "id", "repr", "str"})


def result_kept(model: "KeptFacts", call: ast.Call, depth: int = 0) -> bool:
    """Whether what ``call`` returns may also be kept by the code it runs (see the docstring)."""
    if depth > _DEPTH:
        return True
    targets = model.summaries.targets
    found = [targets.callee(call), *targets.alternatives(call), *targets.loop_members(call)]
    found = [t for t in found if t is not None]
    if not found:
        return False  # a torch op or module (what the summaries saw of it decides the rest)
    for target in found:
        if isinstance(target, tuple) and isinstance(target[0], FUNCTIONS):
            if _keeps(model, target[0], depth):
                return True
        elif isinstance(target, ast.Call):  # nn.Sequential(...): what its last member returns
            if _sequential_keeps(model, target, depth):
                return True
        else:
            return True  # another file's code: not seen here
    return False


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
    values = [n.value for n in model.walk(func) if isinstance(n, ast.Return) and n.value is not None
              and model.owner(n) is func]
    names: Set[str] = set()
    pending = list(values)
    flow = model.flow(func)
    while pending:
        value = pending.pop()
        for part in _parts(value):
            if isinstance(part, ast.Name):
                if part.id in names:
                    continue
                names.add(part.id)
                pending.extend(b.value for b in flow.bindings.get(part.id, []) if b.value is not None)
            elif isinstance(part, (ast.Attribute, ast.Subscript)) and part in values:
                return True  # `return self.last`, `return cache[k]`
            elif isinstance(part, ast.Call) and model.torch_name(part.func) is None \
                    and model.kind(part.func) is Kind.MODULE and result_kept(model, part, depth + 1):
                return True
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
            if any(isinstance(t, (ast.Attribute, ast.Subscript)) or isinstance(t, (ast.Tuple, ast.List))
                   and any(isinstance(e, (ast.Attribute, ast.Subscript, ast.Starred)) for e in t.elts)
                   for t in targets) and _mentions(node.value, names):
                return True  # `self.last = out`
        elif isinstance(node, ast.Call) and not _torch_call(model, node) \
                and any(_mentions(a, names) for a in (*node.args, *(k.value for k in node.keywords))):
            return True  # `self.cache.append(out)`, `setattr(self, "last", out)`
    return False


def _torch_call(model: "KeptFacts", call: ast.Call) -> bool:
    """A call that keeps none of its arguments: torch's (an op, a module: ``self.bn`` built as
    ``nn.BatchNorm2d(c) if norm else None`` too), a module, or a builtin that keeps nothing."""
    if model.torch_name(call.func) is not None or model.kind(call.func) is Kind.MODULE:
        return True
    if isinstance(call.func, ast.Name) and call.func.id in _KEEP_NOTHING:
        return True
    values = model._module_values(call.func) or []  # what `self.bn` was built from
    if not values or not all(isinstance(v, ast.expr) for v in values):
        return False
    parts = [p for v in values if isinstance(v, ast.expr) for p in _parts(v)]
    return all(isinstance(p, ast.Constant) and p.value is None or isinstance(p, ast.Call)
                and (model.torch_name(p.func) or "").startswith("torch.nn.") for p in parts)


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


def given_to_keeper(model: "KeptFacts", key: str, stmt: Located) -> bool:
    """Whether, before ``stmt``, the tensor ``key`` holds there was handed to a function of
    this file that may keep it (:func:`argument_kept`)."""
    flow = model.flow(model.owner(stmt))
    here = [id(b) for b in model.reaching(flow, key, stmt)]
    start = model.range(stmt)[0]
    for pos, load in flow.loads.get(key, []):
        call = model.parent(load)
        if pos >= start or not isinstance(call, ast.Call) or load is call.func:
            continue
        if not any(id(b) in here for b in model.reaching(flow, key, model.statement_of(load))):
            continue  # another tensor of that name
        if argument_kept(model, call):
            return True
    return False


def argument_kept(model: "KeptFacts", call: ast.Call) -> bool:
    """Whether a function of this file that ``call`` runs may keep what it is given: it stores a
    parameter (or a name bound from one, a view or element of one) into a global or nonlocal
    name, an attribute or an element of anything, hands one to a call that is neither torch's
    nor a module's (``cache.append(t)``), or a function nested in it reads one (a closure
    cell). Calls of code the file does not show are not answered here."""
    target = model.summaries.targets.callee(call)
    if not (isinstance(target, tuple) and isinstance(target[0], FUNCTIONS)):
        return False
    func = target[0]
    flow = model.flow(func)
    names = set(flow.params)
    positional = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if isinstance(model.parent(func), ast.ClassDef) and positional and positional[0] in ("self", "cls"):
        names.discard(positional[0])  # the instance, not what the call is given
    for _ in range(_DEPTH):  # names bound from them
        names |= {name for name, bindings in flow.bindings.items()
                  if any(b.value is not None and _holds(b.value, names) for b in bindings)}
    for node in model.walk(func):
        if isinstance(node, (*FUNCTIONS, ast.Lambda)) and node is not func \
                and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node)):
            return True  # a closure over it
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None \
                and _holds(node.value, names):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            stored = [t for top in targets for t in ast.walk(top) if isinstance(t, (ast.Name, ast.Attribute, ast.Subscript))
                      and not isinstance(t.ctx, ast.Load)]
            if any(not isinstance(t, ast.Name) or t.id in flow.declared for t in stored):
                return True  # `LAST = t` (global), `self.last = t`, `cache[k] = t`
        elif isinstance(node, ast.Call) and not _torch_call(model, node) \
                and any(_holds(a, names) for a in (*node.args, *(k.value for k in node.keywords))):
            return True  # `cache.append(t)`, `setattr(obj, "t", t)`
    return False


def _holds(value: ast.expr, names: Set[str]) -> bool:
    """``value`` may be, hold or view a tensor of ``names``: one of them, an element, attribute
    or method result of one (``t[0]``, ``t.detach()``), or a container of such."""
    for part in _parts(value.value if isinstance(value, ast.Starred) else value):
        while isinstance(part, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(part, ast.Call):
                if not isinstance(part.func, ast.Attribute):
                    break
                part = part.func
            part = part.value
        if isinstance(part, ast.Name) and part.id in names:
            return True
    return False
