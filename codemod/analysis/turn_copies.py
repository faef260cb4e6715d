"""A copy another binding left behind, and what a loop's module calls hand back.

``for i, blk in enumerate(self.blocks): c = blk(c)`` / ``if i == 0: acc = c`` / ``else: acc
+= c`` (mmocr's FPEM_FFM): the dataflow's aliases read each name's last binding in source
order, so ``c`` counts as ``acc``'s other name at the write. It is not: the write runs on a
later turn, after ``c = blk(c)`` bound ``c`` to a new tensor. Two facts settle such a shape:

- :func:`stale_copies`: a name the write's target was copied from (``acc = c``) that a binding
  of a new tensor (:func:`fresh_binding`) has left on every path from the copy to the write: its
  one binding reaching the write is a plain statement of a block that holds both the copy and the
  write, after the copy (``d = h; h = relu(x); d *= 5``), or before the ``if`` whose two branches
  hold the copy and the write (the loop's shape above: a path from the copy to the write runs the
  block again from its top). Every binding of the name reaching the copy is a new tensor too, so
  the copy named no tensor that anything else made or holds (a view of another, a parameter).
- :func:`tensor_binding`: a binding that gives a tensor, followed through copies (``acc = c``)
  and through tuples handed back by the file's functions (``a, b = blk(x)``, where ``blk`` is a
  loop's member, an attribute, a function: what ``summaries.targets`` resolves), whose every
  ``return`` gives a tuple display with a tensor at that place.

Anything else: no fact (unknown is neither stale nor a tensor). These facts only let a rebinding
fix leave a name out that no longer shares the tensor (``acc = acc + c``), and know the target
is a tensor; whoever else may hold the tensor is still the rules' to ask (``rules/safety.py``).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, FrozenSet, List, Optional, Protocol, Sequence

from codemod.analysis.branches import block_holding, never_falls_off
from codemod.analysis.kinds import Kind
from codemod.analysis.syntax import FUNCTIONS, Function, Located, own_returns

if TYPE_CHECKING:
    from codemod.analysis.binder import Binding, Flow
    from codemod.analysis.dataflow import Dataflow
    from codemod.analysis.summaries import Summaries, SummaryFacts

    class TurnFacts(SummaryFacts, Protocol):
        """What this part asks of the model: what a call runs (the summaries), the dataflow's
        alias sources, and whether a module call returns a new tensor."""

        @property
        def summaries(self) -> Summaries: ...

        @property
        def dataflow(self) -> Dataflow: ...

        def returns_fresh(self, call: ast.Call) -> bool: ...


_DEPTH = 3


def called_functions(model: "TurnFacts", call: ast.Call) -> Optional[List[Function]]:
    """The functions of this file ``call`` may run (a ``forward``, a helper, every member of a
    loop over layers); None where one target is no function of the file (another file's, a
    ``nn.Sequential``) or none is known."""
    targets = model.summaries.targets
    found = targets.callee(call)
    candidates = [found] if found is not None else (targets.alternatives(call) or targets.loop_members(call))
    funcs: List[Function] = []
    for target in candidates:
        if not (isinstance(target, tuple) and isinstance(target[0], FUNCTIONS)) or _may_be_overridden(model, call, target[0]):
            return None
        funcs.append(target[0])
    return funcs or None


def _may_be_overridden(model: "TurnFacts", call: ast.Call, func: Function) -> bool:
    """``func`` is decorated (a wrapper returns what it likes), or ``call`` is ``self.<m>(...)`` of a
    method whose class another class of the file derives from: a subclass's override may run instead
    (``class Other(Feedback): def _prepare(...)``)."""
    if func.decorator_list:
        return True
    cls = model.enclosing_class(func)
    if cls is None or not (isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name)
                           and call.func.value.id == "self"):
        return False
    return any(isinstance(c, ast.ClassDef) and any(
        isinstance(b, (ast.Name, ast.Attribute)) and (b.id if isinstance(b, ast.Name) else b.attr) == cls.name
        for b in c.bases) for c in ast.walk(model.module))


def _returned_pieces(model: "TurnFacts", binding: "Binding") -> Optional[List[ast.expr]]:
    """``a, b = f(x)`` binding ``b``: what every ``return`` of each function ``f`` may run gives
    at ``b``'s place (each a tuple display of the target's width, no starred piece); None otherwise."""
    stmt = binding.stmt
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Tuple)
            and isinstance(stmt.value, ast.Call)):
        return None
    elts = stmt.targets[0].elts
    if any(isinstance(e, ast.Starred) for e in elts):
        return None
    place = next((i for i, e in enumerate(elts) if isinstance(e, ast.Name) and e.id == binding.key), None)
    funcs = called_functions(model, stmt.value) if place is not None else None
    if place is None or funcs is None:
        return None
    pieces: List[ast.expr] = []
    for func in funcs:
        returns = own_returns(func)
        if not returns:
            return None
        for ret in returns:
            value = ret.value
            if not (isinstance(value, ast.Tuple) and len(value.elts) == len(elts)
                    and not any(isinstance(e, ast.Starred) for e in value.elts)):
                return None
            pieces.append(value.elts[place])
    return pieces


def _reaching(model: "TurnFacts", key: str, at: Located) -> List["Binding"]:
    """``key``'s bindings that reach ``at`` but its in-place updates (which keep the object)."""
    flow = model.flow(model.owner(at))
    return [b for b in model.reaching(flow, key, at) if b.form != "aug"]


def tensor_binding(model: "TurnFacts", binding: "Binding", depth: int = 0) -> bool:
    """``binding`` gives a tensor (see the module's docstring)."""
    if depth > _DEPTH:
        return False
    if binding.form == "assign" and binding.value is not None:
        value = binding.value
        if model.kind(value) is Kind.TENSOR:
            return True
        if isinstance(value, ast.Name) and isinstance(binding.stmt, ast.Assign):
            found = _reaching(model, value.id, binding.stmt)
            return bool(found) and all(tensor_binding(model, b, depth + 1) for b in found)
        if isinstance(value, ast.Call) and isinstance(binding.stmt, ast.Assign):
            return _returns_tensors(model, value, depth)
        return False
    if binding.form == "other":
        pieces = _returned_pieces(model, binding)
        return bool(pieces) and all(_tensor_piece(model, p, depth + 1) for p in pieces or ())
    return False


def _returns_tensors(model: "TurnFacts", call: ast.Call, depth: int) -> bool:
    """Every function of the file ``call`` may run returns a tensor on every path (``blk(x)``
    in a loop over layers, each member's ``forward`` ending ``return self.act(y)``)."""
    funcs = called_functions(model, call)
    if funcs is None:
        return False
    for func in funcs:
        returns = own_returns(func)
        if not returns or not never_falls_off(func.body) \
                or not all(r.value is not None and _tensor_piece(model, r.value, depth + 1) for r in returns):
            return False
    return True


def _tensor_piece(model: "TurnFacts", piece: ast.expr, depth: int) -> bool:
    if model.kind(piece) is Kind.TENSOR:
        return True
    if not isinstance(piece, ast.Name):
        return False
    found = _reaching(model, piece.id, model.statement_of(piece))
    return bool(found) and all(tensor_binding(model, b, depth + 1) for b in found)


def fresh_binding(model: "TurnFacts", binding: "Binding", depth: int = 0) -> bool:
    """``binding`` gives a tensor no other object held before it ran: an arithmetic result
    (``a + b``), a module call known to return a new tensor (``returns_fresh``), or a piece of
    a tuple the file's functions hand back that each of their ``return``\\ s gives so (a name
    bound only so, in the callee)."""
    if depth > _DEPTH:
        return False
    if binding.form == "assign":
        return _fresh_value(model, binding.value, depth)
    if binding.form == "other":
        pieces = _returned_pieces(model, binding)
        return bool(pieces) and all(_fresh_value(model, p, depth + 1) for p in pieces or ())
    return False


def _fresh_value(model: "TurnFacts", value: Optional[ast.AST], depth: int) -> bool:
    if isinstance(value, ast.BinOp) and not isinstance(value.op, ast.MatMult) \
            and model.kind(value) is Kind.TENSOR:
        return True  # (`a @ b` too makes a new tensor; left out with the rest: the kind says tensor)
    if isinstance(value, ast.Call):
        return model.returns_fresh(value)
    if isinstance(value, ast.Name):
        found = _reaching(model, value.id, model.statement_of(value))
        return bool(found) and all(fresh_binding(model, b, depth + 1) for b in found)
    return False


def stale_copies(model: "TurnFacts", target: ast.Name, names: Sequence[str], write: Located) -> FrozenSet[str]:
    """The names of ``names`` (the write's target's identity aliases, as the dataflow counts
    them) that no longer name its tensor at ``write`` (see the module's docstring)."""
    flow = model.flow(model.owner(write))
    copies = _reaching(model, target.id, write)
    if len(copies) != 1 or copies[0].form != "assign" or not isinstance(copies[0].stmt, ast.Assign):
        return frozenset()
    copy = copies[0]
    copied = copy.stmt
    source, how = model.dataflow.alias_source(copy.value)
    if source is None or how != "identity" or source not in names or "." in source \
            or not isinstance(copy.value, ast.Name) or not isinstance(copied, ast.Assign) \
            or source in flow.declared or _not_local(flow, target.id):
        return frozenset()
    rebound = _reaching(model, source, write)
    before = _reaching(model, source, copied)
    rebinding = rebound[0].stmt if len(rebound) == 1 else None
    if not isinstance(rebinding, ast.Assign) or not before \
            or not all(fresh_binding(model, b) for b in (*rebound, *before)):
        return frozenset()
    return frozenset({source}) if _passed_between(model, rebinding, copied, write) else frozenset()


def _not_local(flow: "Flow", key: str) -> bool:
    return key in flow.declared or key in flow.params


def _passed_between(model: "TurnFacts", rebinding: ast.stmt, copy: ast.stmt, write: Located) -> bool:
    """Every path from ``copy`` to ``write`` runs ``rebinding`` (a plain statement): the three
    sit in one block (a statement list), the rebinding a statement of it before the one holding
    the write, and the copy in a statement before the rebinding, after the write's, or in the
    other branch of the ``if`` that holds the write. Control enters a block at its top, and an
    ``if`` runs one branch: a path from the copy back to the write runs the block's statements
    before the write's, the rebinding among them."""
    block = block_holding(model.parent(rebinding), rebinding)
    if block is None:
        return False
    at_r = next(i for i, s in enumerate(block) if s is rebinding)
    at_w = _index_within(model, block, write)
    at_c = _index_within(model, block, copy)
    if at_w is None or at_c is None or not at_r < at_w:
        return False
    if at_c < at_r or at_c > at_w:
        return True
    if at_c != at_w or not isinstance(block[at_w], ast.If):
        return False
    branch = block[at_w]
    assert isinstance(branch, ast.If)
    in_body = [_index_within(model, branch.body, n) is not None for n in (copy, write)]
    in_else = [_index_within(model, branch.orelse, n) is not None for n in (copy, write)]
    return in_body == [True, False] and in_else == [False, True] or in_body == [False, True] and in_else == [True, False]


def _index_within(model: "TurnFacts", block: List[ast.stmt], node: Located) -> Optional[int]:
    """The index of the statement of ``block`` that is or holds ``node`` (not through a nested
    function or class: another scope's code)."""
    here: Optional[ast.AST] = node
    while here is not None:
        for i, s in enumerate(block):
            if s is here:
                return i
        if isinstance(here, (*FUNCTIONS, ast.ClassDef, ast.Lambda)) and here is not node:
            return None
        here = model.parent(here)
    return None
