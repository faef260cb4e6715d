"""Fix safety, decided in one place: safe, unsafe, manual or skipped, and the reason.

Every rule asks :func:`assess` about its candidate; the analysis supplies facts (tensor kind,
grad mode, aliases, dtype), this module turns them into the policy users read about in the
rules' "Fix safety" sections and in ``inplacefix rules``.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Tuple

from codemod.analysis.branches import within
from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import Located, bound_names, has_call, target_key
from codemod.findings import Status

if TYPE_CHECKING:
    from codemod.analysis.binder import Binding, Flow
    from codemod.analysis.model import SemanticModel

# The rest of the analysis is imported where a verdict is made: the rules' table (codes, names,
# documentation), which a rerun answered from the cache reads, is then had without it.


# Mutation contracts: the function mutates a parameter on purpose, so the fix is skipped; a
# hazard there is still reported (``Rule.report``): the write breaks backward all the same.
CONTRACTS = ("trailing-underscore", "mutation-as-output", "callers-rely-on-mutation")


@dataclasses.dataclass
class Verdict:
    """What a rule may do with one in-place candidate."""

    status: Optional[Status]  # None: not a candidate (known not to be a tensor)
    reason: Optional[str] = None
    also_rebind: Tuple[str, ...] = ()  # identity aliases that a rebinding fix must bind too


def assess(
    model: SemanticModel,
    node: ast.AST,
    target: ast.AST,
    *,
    operands: Sequence[ast.AST] = (),
    creates_binding: bool = True,
    dtype_neutral: bool = False,
    require_known: bool = False,
    known_tensor: bool = False,
    leaf_rule: bool = False,
) -> Verdict:
    """The one decision procedure for "rewrite the in-place op at ``node`` on ``target``".

    ``operands``: the other inputs of the op (for dtype promotion); ``creates_binding``: the
    fix writes ``target = ...`` where the original did not bind it; ``require_known``: an
    unknown type gets no fix at all (for fixes that would crash on a non-tensor);
    ``known_tensor``: the op itself shows the target is a tensor (a torch function's input);
    ``leaf_rule``: IPF005 asks, about a leaf it rewrites out of place (a hooked module's output).
    """
    from codemod.analysis.dataflow import AliasReport
    from codemod.analysis.hazard import read_as_tensor, rebound_parameter, tensor_on_live_paths
    from codemod.analysis.tensor_kind import used_as_container
    from codemod.analysis.turn_copies import stale_copies, tensor_binding

    kind = model.kind(target)
    if kind is Kind.UNKNOWN and (known_tensor or read_as_tensor(model, target, node)
                                 or tensor_on_live_paths(model, target, node)
                                 or tensor_on_every_binding(model, target, node, tensor_binding)):
        kind = Kind.TENSOR
    if kind in (Kind.SCALAR, Kind.OTHER, Kind.MODULE):
        return Verdict(None)
    if kind is Kind.UNKNOWN and (used_as_integer(model, target, node) or used_as_container(model, target, node)):
        return Verdict(None)  # integer arithmetic (a length), a list or a dict: never a tensor fix
    intended = model.intended_reason(node, target)
    if intended:
        return Verdict(Status.SKIPPED, intended)
    stmt = model.statement_of(node)
    if model.views.cloned_just_before(target, stmt):
        return Verdict(Status.SKIPPED, "cloned-before")  # IPF004/IPF006's own clone-first fix
    leaf = model.leaves.origin(target, stmt)
    if leaf is not None and not leaf_rule:  # PyTorch refuses the update (or may): IPF005's fix (no_grad, or the copy), no competing one
        return Verdict(Status.MANUAL, "leaf-update")
    view = model.views.origin(target, stmt)
    if view is not None and model.views.refused(target, stmt, operands) is not None \
            or view is None and model.views.viewed_by(target, stmt, operands) is not None:
        return Verdict(Status.MANUAL, "view-write")  # PyTorch refuses it: IPF006's fix
    if view is None and model.views.viewed_by(target, stmt, operands, allowed_too=True) is not None:
        return Verdict(Status.MANUAL, "view-alias")  # `a, b = buf.chunk(2); buf.mul_(2)`: a must see it
    if view is not None and any(model.used_after(model.flow(model.owner(stmt)), k, model.range(stmt))
                                for k in view.sharers):
        return Verdict(Status.MANUAL, "view-alias")  # `a, b = buf.chunk(2)`: buf must see the write
    if kind is Kind.PARAMETER:
        return Verdict(Status.MANUAL, "parameter")
    key = target_key(target)
    if key is None:
        return Verdict(Status.MANUAL, "side-effect-target" if has_call(target) else "unsupported-target")
    if view_attribute(model, target):
        return Verdict(Status.MANUAL, "view-attribute")
    if creates_binding:
        problem = model.rebinding_problem(target)
        if problem:
            return Verdict(Status.MANUAL, problem)

    def unsafe(reason: str) -> Verdict:
        """An unsafe rewrite, or none where the fix would crash on a non-tensor (``require_known``:
        IPF004's ``.clone()`` of a dict, mig40); the checks below run before the unknown type's."""
        if kind is Kind.UNKNOWN and require_known:
            return Verdict(Status.MANUAL, "unknown-type")
        return Verdict(Status.UNSAFE, reason)

    if model.shared_name(target):
        return unsafe("shared-name")
    alias = model.alias_report(target, stmt)
    stale: "frozenset[str]" = frozenset()
    if alias.also_rebind and isinstance(target, ast.Name):
        # `if i == 0: acc = c` / `else: acc += c` after `c = blk(c)`: `c` is another tensor at the write
        stale = stale_copies(model, target, alias.also_rebind, stmt)
        alias = AliasReport(alias.reason, tuple(n for n in alias.also_rebind if n not in stale))
    if alias.reason is None and isinstance(target, ast.Name) and rebound_parameter(model, key, stmt):
        # `x = same(x)` (a helper handing back its argument) before the write: still the caller's tensor
        returns = model.flow(model.owner(stmt)).returns_value
        alias = AliasReport("param-mutation" if returns else "mutation-as-output")
    if alias.reason in ("param-mutation", "mutation-as-output"):
        contract = model.contract(target)
        if contract:  # the function mutates its argument on purpose: never rewritten
            return Verdict(Status.SKIPPED, contract)
    if alias.reason == "param-mutation" and model.own_values_passed(target):
        # a forward's input every call of which passes a tensor nothing sees after the call
        alias = model.alias_report(target, stmt, own_param=True)
    if alias.reason == "view-alias" and kind is Kind.UNKNOWN:
        return Verdict(Status.MANUAL, "unknown-type")  # `a = b[0]` may not be a view at all
    if alias.reason in ("view-alias", "mutation-as-output"):
        return Verdict(Status.MANUAL, alias.reason)
    returned = model.returned_alias(target, stmt) if alias.reason is None else None
    if returned is not None and returned[1]:
        return Verdict(Status.MANUAL, "view-alias")  # `y = helper(x)` returning `x[0]`: y must see the write
    handed = model.returned_argument(target, stmt) if alias.reason is None else None
    if handed is not None:  # `y = helper(x)` handing `x` back, `x` read after: x must see the write
        return Verdict(Status.MANUAL, "view-alias") if handed[1] else unsafe("call-may-alias")
    if isinstance(target, ast.Name):
        lost = model.holders.rebinding_loses(target, stmt)
        if lost is not None:  # a rebinding would hide the change from whoever else holds it
            contract = model.contract_through_container(target, stmt)
            if contract:  # an element of a parameter the function fills on purpose (kernels)
                return Verdict(Status.SKIPPED, contract)
            reason, holder = lost
            if holder == "the loop's iterable":
                # `for store in data.stores: store[k] = v`, `for m in self.mems: m.zero_()`: the
                # loop updates what its iterable holds (a mutation contract); a rebinding (or a
                # clone first) would update nothing, in any tier
                return Verdict(Status.MANUAL, reason)
            return Verdict(Status.MANUAL, reason) if reason == "dead-store" else unsafe(reason)
        flow = model.flow(model.owner(stmt))
        identity, _ = model.aliases(flow, target.id, model.range(stmt)[0])
        never_runs = model.summaries.chains.decided.never_runs  # (a branch no instance takes binds nothing)
        if kind is not Kind.UNKNOWN and any(  # (unknown: the unknown type's reason below says more)
                b.form == "assign" and isinstance(b.value, ast.Call) and model.result_kept(b.value)
                and not (isinstance(b.stmt, ast.stmt) and never_runs(b.stmt))
                for key in {target.id, *identity} if "." not in key for b in model.reaching(flow, key, stmt)):
            # `x = self.block(x)`, the block keeping `out`; or `h = self.block(x); d = h.exp_()`
            # before `d *= 5`: a rebinding of both names hides the write from the kept one
            return unsafe("held-elsewhere")
        if alias.reason == "alias" and only_local_names(model, flow, {target.id, *identity} - stale, stmt):
            alias = AliasReport(None, alias.also_rebind)  # `d = b.exp_(); d *= 5`: `d = b = d * 5` hides nothing
            returned = model.returned_alias(target, stmt)
            if returned is not None and returned[1]:
                return Verdict(Status.MANUAL, "view-alias")
    if kind is Kind.UNKNOWN and require_known:
        return Verdict(Status.MANUAL, "unknown-type")
    if isinstance(target, ast.Attribute) and model.holders.attribute_handed_out(target):
        return Verdict(Status.UNSAFE, "held-elsewhere")  # `return self.keys`: the caller keeps the old tensor
    if isinstance(target, ast.Attribute) and model.holders.attribute_set_elsewhere(target):
        return Verdict(Status.UNSAFE, "set-elsewhere")  # a parent class in another file made it
    rebind = alias.also_rebind
    if rebind and kind is Kind.UNKNOWN:  # a number's other name never saw the change: rebinding
        return Verdict(Status.MANUAL, "unknown-type")  # it is right only for a tensor (stop 45's sweep)
    if rebind and picked_by_a_condition(model, {key, *rebind}, stmt):
        return Verdict(Status.MANUAL, "conditional-alias")  # `loc = h if rev else w`: no rebinding is right
    if rebind and isinstance(target, ast.Name) and not aliases_hold(model, {key, *rebind}, stmt):
        return Verdict(Status.MANUAL, "alias")  # `d = h; h = relu(...)`: `d = h = d * 5` would give h d's values
    if alias.reason:
        return Verdict(Status.UNSAFE, alias.reason, rebind)
    if returned is not None:
        return Verdict(Status.UNSAFE, "call-may-alias", rebind)  # `y = helper(x)`, helper unseen: it may return x
    if kind is Kind.UNKNOWN:
        return Verdict(Status.UNSAFE, "unknown-type")  # (no name to rebind: see above)
    if not dtype_neutral and model.may_promote(key, operands, target, node):
        return Verdict(Status.UNSAFE, "dtype-promotion", rebind)
    if isinstance(target, ast.Name) and _stored_by_any(model, target, stmt):
        return Verdict(Status.UNSAFE, "held-elsewhere", rebind)  # `keep = [h]` (or `keep.append(h)`) before `h += 1`
    missed = _bound_on_one_path(model, target, stmt) if isinstance(target, ast.Name) else None
    if missed is not None:  # `if c: e = h` / `else: e = w` before `h *= 5`
        return Verdict(Status.MANUAL if missed == "view" else Status.UNSAFE,
                       "view-alias" if missed == "view" else "alias", rebind)
    return Verdict(Status.SAFE, None, rebind)


def tensor_on_every_binding(model: SemanticModel, target: ast.AST, node: ast.AST,
                            gives_tensor: "Callable[[SemanticModel, Binding], bool]") -> bool:
    """``target`` (a name) is a tensor at the write: each binding of it that reaches the write
    but its in-place updates gives one (``gives_tensor``: ``turn_copies.tensor_binding``, a copy
    of a name, a piece of a tuple a module of the file hands back), and one does."""
    if not isinstance(target, ast.Name):
        return False
    stmt = model.statement_of(node)
    found = [b for b in model.reaching(model.flow(model.owner(stmt)), target.id, stmt) if b.form != "aug"]
    return bool(found) and all(gives_tensor(model, b) for b in found)


def _bound_on_one_path(model: SemanticModel, target: ast.Name, stmt: Located) -> Optional[str]:
    """"identity" or "view" where another name, read after the write, has a binding that may
    reach it from the target's tensor (or from one of its local aliases) that ``aliases`` does
    not count: it reads only each name's last binding in source order, and ``if c: e = h`` /
    ``else: e = w`` leaves ``e`` the tensor on one path. A rebinding of the written names leaves
    ``e`` the old tensor there. None: no such name."""
    from codemod.analysis.dataflow import _branches

    flow = model.flow(model.owner(stmt))
    identity, views = model.aliases(flow, target.id, model.range(stmt)[0])
    keys = {target.id, *identity}
    rebound = {n for t in stmt.targets for n in bound_names(t)} if isinstance(stmt, ast.Assign) else set()
    for other in flow.bindings:
        if other in keys or other in views or other in rebound or "." in other:
            continue  # (`d = h.exp_()` in a loop: later reads of `d` see this statement's binding)
        for b in model.reaching(flow, other, stmt):
            if b.form == "assign":
                sources = [model.dataflow.alias_source(v) for v in _branches(b.value)]
            elif b.form == "other" and isinstance(b.stmt, ast.Assign):
                sources = [model.dataflow._unpacked_source(b.stmt, other)]
            else:
                continue
            found = next((how for source, how in sources if source in keys), None)
            if found is not None and model.holders.read_after(flow, other, stmt):
                return "view" if found == "view" else "identity"
    return None


def _stored_by_any(model: SemanticModel, target: ast.Name, stmt: ast.AST) -> bool:
    """:func:`stored_before` for the target's name and every local name bound to its tensor."""
    flow = model.flow(model.owner(stmt))
    identity, _ = model.aliases(flow, target.id, model.range(stmt)[0])
    return any(stored_before(model, flow, key, stmt) for key in {target.id, *identity} if "." not in key)


# Calls that keep none of their arguments (builtins that read them only).
_READ_ONLY_BUILTINS = frozenset({"len", "print", "isinstance", "hasattr", "type", "id", "repr", "str", "float",
                                 "int", "bool", "range", "enumerate", "zip", "min", "max", "abs", "round"})


def stored_before(model: SemanticModel, flow: Flow, key: str, stmt: ast.AST) -> bool:
    """``key``'s tensor is put where a rebinding at ``stmt`` would not reach, before the write
    (in its own operands too, or anywhere in a loop around both): into a list, tuple, set or
    dict display, as an element or attribute value (``d[k] = h``, ``self.last = h``), handed to a call that is not torch's,
    a module's or a read-only builtin (``keep.append(h)``, a user function), yielded or returned.
    In place, those holders see the write; after ``h = h + 1`` they keep the old tensor."""
    start = model.range(stmt)[0]
    owner = model.owner(stmt)
    loops = []  # the loops around the write that carry the tensor to the next turn (not rebound in their body first)
    for up in model.ancestors(stmt):
        if up is owner:
            break
        if isinstance(up, (ast.For, ast.AsyncFor, ast.While)) and not any(
                b.form != "aug" and model.parent(b.stmt) is up and b.end <= start for b in flow.bindings.get(key, [])):
            loops.append(up)
    written = {id(b) for b in model.reaching(flow, key, stmt) if b.form != "aug"}
    for pos, load in flow.loads.get(key, []):
        early = pos < start or within(load, stmt) or any(within(load, loop) for loop in loops)
        if model.owner(load) is not owner:
            # a nested function reads the name, not the tensor: it sees the rebinding, unless it
            # hands the tensor out (`def grab(): return h`, `lambda: h`) and may run before the write
            inner = model.flow(model.owner(load))
            if early and (key not in inner.bindings or key in inner.declared) and _handed_out_by_nested(model, load):
                return True  # (a nested function binding `key` itself reads its own name)
            continue
        if not early:
            continue  # (the write's own operands are read before it: `x += f(keep(x))`)
        if model.summaries.chains.decided.never_runs(model.statement_of(load)):
            continue  # `if self.attention is not None: out = self.attention_module(out)`, never taken
        seen = {id(b) for b in model.reaching(flow, key, model.statement_of(load)) if b.form != "aug"}
        if seen & written and _escapes(model, load):  # (a load of an earlier tensor the name held: another object)
            return True
    return False


def _handed_out_by_nested(model: SemanticModel, load: ast.AST) -> bool:
    """A nested function's read that gives the tensor itself to whoever calls it (returned, the
    lambda's value, yielded) or puts it in a holder (:func:`_escapes`)."""
    node, parent = load, model.parent(load)
    while isinstance(parent, (ast.IfExp, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred)) \
            and not (isinstance(parent, ast.IfExp) and node is parent.test):
        node, parent = parent, model.parent(parent)
    if isinstance(parent, (ast.Return, ast.Yield, ast.YieldFrom)):
        return True
    return _escapes(model, load)  # (a lambda's value, `lambda: h`, is its check too)


def _escapes(model: SemanticModel, load: ast.AST) -> bool:
    parent = model.parent(load)
    node: ast.AST = load
    while isinstance(parent, ast.IfExp) and node is not parent.test:
        node, parent = parent, model.parent(parent)  # `h if c else g`: the value itself
    if isinstance(parent, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred)):
        while isinstance(parent, (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Starred)):
            node, parent = parent, model.parent(parent)
        if isinstance(parent, ast.Return):  # `return h, w`: as `return h`
            return _before_a_finally(model, parent)
        # `torch.cat([h, x])`: read, not kept; any other display holds it (`keep = [h]`)
        return not (isinstance(parent, ast.Call) and model.torch_name(parent.func) is not None)
    if isinstance(parent, ast.Lambda) and parent.body is node:
        # `grab = lambda: h`: whoever calls it gets the tensor. A lambda is no owner
        # (`Tree.owner`), so its read at the function's own level comes here from
        # `stored_before` directly, and one inside a nested function through
        # `_handed_out_by_nested` (tests/test_sound38.py: both)
        return True
    if isinstance(parent, ast.keyword):
        node, parent = parent, model.parent(parent)
    if isinstance(parent, ast.Return):
        # the call ends there: no write of that call follows it, but one in a `finally` around it
        return _before_a_finally(model, parent)
    if isinstance(parent, (ast.Yield, ast.YieldFrom)):
        return True
    if isinstance(parent, (ast.Assign, ast.AnnAssign)) and parent.value is node:
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        return any(isinstance(t, (ast.Attribute, ast.Subscript, ast.Tuple, ast.List)) for t in targets)
    if isinstance(parent, ast.Call) and node is not parent.func:
        if isinstance(parent.func, ast.Name) and parent.func.id in _READ_ONLY_BUILTINS:
            return False
        # a function or module of the file that may keep it (`remember(h)`, a block storing
        # `self.seen = inp.detach()`), or unknown code; torch's ops and modules and tensor
        # methods (`x.copy_(h)`) copy or read the values
        return model.keeps_arguments(parent)
    return False


def _before_a_finally(model: SemanticModel, stmt: ast.AST) -> bool:
    """``stmt`` sits in a ``try`` of its function whose ``finally`` runs this function's code
    after it returns."""
    owner = model.owner(stmt)
    for up in model.ancestors(stmt):
        if up is owner:
            return False
        if isinstance(up, (ast.Try, getattr(ast, "TryStar", ast.Try))) and up.finalbody \
                and not any(within(stmt, s) for s in up.finalbody):
            return True
    return False


def picked_by_a_condition(model: SemanticModel, keys: "set[str]", stmt: ast.AST) -> bool:
    """One of ``keys`` (the write's target and the names a fix would rebind with it) is bound,
    where it reaches the write, by a conditional expression that picks among the others (``loc =
    h if rev else w``, ``a or b``): another tensor on each path. A rebinding of all the names (``loc = h = w =
    loc.clone()``) gives the one the condition did not pick the other's values, and a rebinding
    of fewer hides the write from the one it picked: no rewrite is right, in any tier."""
    flow = model.flow(model.owner(stmt))
    return any(isinstance(b.value, (ast.IfExp, ast.BoolOp)) and _picks_among(b.value, keys)
               for key in keys if "." not in key for b in model.reaching(flow, key, stmt) if b.form == "assign")


def _picks_among(value: ast.expr, keys: "set[str]") -> bool:
    """A branch of ``value`` (``h`` of ``h if rev else w``, an operand of ``a or b``) is one of
    ``keys``: the names then hold one tensor on some paths only (``x = a if c else b; y = x``,
    ``a`` and ``b`` not rebound, is one tensor under two names on every path)."""
    todo, found = [value], []
    while todo:
        node = todo.pop()
        if isinstance(node, ast.IfExp):
            todo += [node.body, node.orelse]
        elif isinstance(node, ast.BoolOp):
            todo += node.values
        else:
            found.append(target_key(node))
    return any(k in keys for k in found if k is not None)


def aliases_hold(model: SemanticModel, keys: "set[str]", stmt: ast.AST) -> bool:
    """The names a rebinding fix would bind together (the write's target and its identity
    aliases) name one tensor at the write on every path: each has one binding reaching it (an
    in-place update aside), and one that copies another of them (``d = h``, ``d = b.exp_()``)
    comes after that one's own binding reaching the write (``d = h; h = relu(...)`` leaves ``d``
    the old tensor, in a straight line or a loop) and runs on every path to the write (``if i ==
    0: acc = c`` / ``else: acc += c`` in a loop: ``c`` is another turn's tensor there, mmocr's
    FPEM_FFM shape). Otherwise ``d = h = d * 5`` would hand ``h`` values it never had."""
    # Imported here: a warm rerun answered from the cache imports no heavy analysis module
    # (tests/test_speed27.py's ``_LIGHT``), and the rules are imported by every run.
    from codemod.analysis.dataflow import on_every_path

    flow = model.flow(model.owner(stmt))
    reaching = {}
    for key in keys:
        found = [b for b in model.reaching(flow, key, stmt) if b.form != "aug"]
        if len(found) != 1:
            return False
        reaching[key] = found[0]
    for key, binding in reaching.items():
        if binding.form != "assign":
            continue
        source, how = model.dataflow.alias_source(binding.value)
        if source is None or how != "identity" or source == key or source not in reaching:
            continue
        if not (reaching[source].end <= binding.start
                and on_every_path(model.tree, binding.stmt, stmt, model.owner(stmt))):  # type: ignore[arg-type]
            return False
    return True


def only_local_names(model: SemanticModel, flow: Flow, keys: "set[str]", stmt: ast.AST) -> bool:
    """The names bound to one tensor (the write's target and its identity aliases) are all the
    references to it there are, on every path: each a local name of the function (no attribute,
    parameter, ``global``/``nonlocal``) whose one non-augmented binding reaching the write is the
    last one before it and binds one tensor (no conditional expression: so the alias holds on
    every path), and nothing held the tensor before it was bound (a loop's iterable, a container
    or object it came from)."""
    if isinstance(model.owner(stmt), ast.Module):
        return False
    start = model.range(stmt)[0]
    for key in keys:
        if "." in key or key in flow.declared or key in flow.params:
            return False
        reaching = [b for b in model.reaching(flow, key, stmt) if b.form != "aug"]
        earlier = [b for b in flow.bindings.get(key, []) if b.end <= start and b.form != "aug"]
        if len(reaching) != 1 or reaching[0].form != "assign" or not earlier or earlier[-1] is not reaching[0]:
            return False
        if isinstance(reaching[0].value, (ast.IfExp, ast.BoolOp)):
            # `loc = h if rev else w`: one binding, but another tensor on each path; no
            # rebinding (`loc = h = w = loc.clone()`) says "the one the condition picked"
            return False
        if model.holders.held_by(flow, key, stmt) is not None:
            return False
    return True


# Keywords that take Python ints (lengths, dimensions): a name passed there is a number.
_INT_KEYWORDS = frozenset({"n", "s", "dim", "dims", "size", "length", "num_classes"})


def used_as_integer(model: SemanticModel, target: ast.AST, node: ast.AST) -> bool:
    """``target`` (a name) or a name bound to the same object is read as a Python int in its
    function: a slice bound (``x[..., :fft_len]``), an argument of ``range``, or a length or
    dimension keyword (``torch.fft.rfft(u, n=pad)``). Such a value is no tensor autograd could
    save, and rebinding an alias of an int (``pad *= 2`` with ``pad = fft_len``) changes what
    the alias holds."""
    if not isinstance(target, ast.Name):
        return False
    stmt = model.statement_of(node)
    flow = model.flow(model.owner(stmt))
    identity, _ = model.aliases(flow, target.id, model.range(stmt)[0])
    for key in (target.id, *identity):
        for _, load in flow.loads.get(key, []):
            parent = model.parent(load)
            if isinstance(parent, ast.Slice):
                return True
            if isinstance(parent, ast.keyword) and parent.arg in _INT_KEYWORDS:
                return True
            if isinstance(parent, ast.Call) and load in parent.args and isinstance(parent.func, ast.Name) \
                    and parent.func.id == "range":
                return True
    return False


def view_attribute(model: SemanticModel, target: ast.AST) -> bool:
    """Whether ``target`` is read through a tensor's view attribute (``y.real``, ``h.T``,
    ``p.data.imag``): a view made at each read, no binding. ``y.real = t`` copies ``t`` into
    ``y`` (still in place; ``T`` cannot be assigned at all), and ``w = y.real = ...`` makes
    ``w`` a new tensor where it was a view of ``y``: no rebinding rewrite holds. An attribute
    of a module or another object (``self.T``, a buffer named ``T``) is not one."""
    from codemod.analysis.dataflow import VIEW_ATTRIBUTES

    node = target
    while isinstance(node, ast.Attribute):
        if node.attr in VIEW_ATTRIBUTES and model.kind(node.value) not in (Kind.MODULE, Kind.OTHER, Kind.SCALAR) \
                and not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return True
        node = node.value
    return False
