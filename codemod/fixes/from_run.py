"""Fixes built from what a run saw, not from a rule's finding (libcst only, no analysis).

The locator names lines and expressions (the write, the save, where a view was made, where an
in-place module was built) whether or not a static rule understood the code there. Each
function here takes libcst's tree of the file (or of one region of it: ``fixes.regions``), the
position the run gave, and builds one candidate :class:`~codemod.findings.Fix`, or None where
that form does not apply. None of them is known to be right: the runtime side verifies each.

- :func:`out_of_place`: every in-place op of the statement in its out-of-place form
  (``q *= s`` -> ``q = q * s``, ``t.mul_(s).add_(m)`` -> ``t = t.mul(s).add(m)``,
  ``F.relu(x, inplace=True)`` -> ``x = F.relu(x)``);
- :func:`clone_before`: ``q = q.clone()`` before the statement that writes ``q`` (or ``q[i]``);
- :func:`clones_of_items`: ``d[k] = d[k].clone()`` before ``d[k][i, :] = v`` (a tensor kept in a
  container), one per level of the indexing;
- :func:`copies_of_views`: ``C`` -> ``tuple(v.clone() for v in C)`` where ``C`` made the views;
- :func:`ordinary_views`: ``x.unbind(d)`` -> ``tuple(x.select(d, i) for i in range(x.size(d)))``,
  ``x.chunk(n, d)`` -> ``x.tensor_split(n, d)``, a tensor iterated (``zip(x, ...)``) ->
  ``(x[i] for i in range(len(x)))``;
- :func:`detached`: ``C`` -> ``C.detach()`` (a view made under ``no_grad``);
- :func:`not_inplace`: ``nn.ReLU(inplace=True)`` -> ``nn.ReLU()`` where a module was built
  (``act(**kw)`` -> ``act(**{**kw, "inplace": False})`` where the flag came in a mapping).
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Sequence, Set, Tuple, cast

from codemod import torch_api
from codemod.findings import Fix
from codemod.fixes import _cst as cst
from codemod.fixes.edits import _dotted, fix_title, insert_before, out_of_place_chain, rebind, right_operand
from codemod.fixes.site import Line

Position = Tuple[int, int]  # (line, character column) in the tree's own coordinates
Span = Tuple[int, int, int, int]  # (line, column, end line, end column)

_MULTI_VIEW_METHODS = ("chunk", "split", "unbind", "split_with_sizes", "tensor_split", "hsplit", "vsplit", "dsplit")


class Positions:
    """Where each node of one libcst tree is, and what holds it."""

    def __init__(self, wrapper: "cst.MetadataWrapper") -> None:
        from libcst.metadata import ParentNodeProvider, PositionProvider

        self.wrapper = wrapper
        self.module = wrapper.module
        self.ranges = dict(wrapper.resolve(PositionProvider))
        self.parents = dict(wrapper.resolve(ParentNodeProvider))
        self.holders: Dict[int, Tuple[Line, int]] = {}  # id(small statement) -> (its line, index)
        for node in self.ranges:
            if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                for i, small in enumerate(node.body):
                    self.holders[id(small)] = (node, i)

    def span(self, node: "cst.CSTNode") -> Span:
        rng = self.ranges[node]
        return rng.start.line, rng.start.column, rng.end.line, rng.end.column

    def expression(self, span: Span) -> Optional["cst.BaseExpression"]:
        """The expression spanning exactly ``span`` (the outermost, parentheses aside)."""
        found = [n for n, r in self.ranges.items() if isinstance(n, cst.BaseExpression)
                 and (r.start.line, r.start.column, r.end.line, r.end.column) == span]
        return cast("Optional[cst.BaseExpression]", found[0]) if found else None

    def made_by(self, span: Span) -> Optional["cst.BaseExpression"]:
        """The expression whose run made something at ``span``: the expression spanning it, or the
        iterable of a ``for`` statement spanning it whole (CPython gives the loop's ``GET_ITER``,
        which iterates a tensor into ``unbind`` views, the whole statement's positions)."""
        found = self.expression(span)
        if found is not None:
            return found
        loops = [n for n, r in self.ranges.items() if isinstance(n, cst.For)
                 and (r.start.line, r.start.column, r.end.line, r.end.column) == span]
        return loops[0].iter if loops else None

    def small_statement(self, at: Position) -> Optional["cst.BaseSmallStatement"]:
        """The small statement holding ``at`` (on a line shared by several, the one whose
        columns cover it)."""
        line, column = at
        found = [n for n, r in self.ranges.items() if isinstance(n, cst.BaseSmallStatement)
                 and id(n) in self.holders and r.start.line <= line <= r.end.line]
        found.sort(key=self.span)
        covering = [n for n in found if self.span(n)[:2] <= (line, column) <= self.span(n)[2:]]
        best = covering or found
        return best[0] if best else None


# ------------------------------------------------------------------ the writing statement
def out_of_place(where: Positions, at: Position) -> Optional[Fix]:
    """The statement at ``at`` with its in-place ops made out-of-place (the names they wrote
    rebound to the results)."""
    small = where.small_statement(at)
    if small is None:
        return None
    new = _out_of_place(small)
    if new is None:
        return None
    return Fix(small, lambda node: _out_of_place(cast("cst.BaseSmallStatement", node)) or node, fix_title(new))


def _rebindable(target: "cst.BaseExpression") -> bool:
    return isinstance(target, cst.Name) or (isinstance(target, cst.Attribute) and _rebindable(target.value))


def _out_of_place(small: "cst.BaseSmallStatement") -> Optional["cst.BaseSmallStatement"]:
    if isinstance(small, cst.AugAssign):
        if not _rebindable(small.target) and not isinstance(small.target, cst.Subscript):
            return None
        # `x[i] += v` stays in place on a tensor after `x[i] = x[i] + v` (the run then still
        # sees the conflict, and the next candidate is taken), not on a list of tensors.
        op = getattr(cst, type(small.operator).__name__[: -len("Assign")], None)
        if op is None:
            return None
        value = cst.BinaryOperation(left=small.target.deep_clone(), operator=op(),
                                    right=right_operand(op, small.value))
        return rebind([small.target], value, like=small)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        call = small.value
        if _inplace_chain(call):
            base = _chain_base(call)
            # An element (`ys[t].unsqueeze_(0)` -> `ys[t] = ys[t].unsqueeze(0)`): on a list the
            # element is rebound; on a tensor the setitem writes again (the run refuses it), as for `x[i] += v`.
            if not _rebindable(base) and not isinstance(base, cst.Subscript):
                return None
            return rebind([cast("cst.BaseAssignTargetExpression", base.deep_clone())], out_of_place_chain(call),
                          like=small)
        receiver = _first_positional(call)
        if (_inplace_keyword(call) is not None or _twin_function(call) is not None) \
                and receiver is not None and _rebindable(receiver):
            return rebind([cast("cst.BaseAssignTargetExpression", receiver.deep_clone())], _without_inplace(call),
                          like=small)
        return None
    if isinstance(small, (cst.Assign, cst.Return, cst.AnnAssign)) and small.value is not None:
        rewritten = cast("cst.BaseSmallStatement", small.visit(_OutOfPlace()))
        return None if rewritten.deep_equals(small) else rewritten
    return None


class _OutOfPlace(cst.CSTTransformer):
    """Every in-place method chain with twins, and every ``inplace=True``, made out-of-place."""

    def leave_Call(self, original: "cst.Call", updated: "cst.Call") -> "cst.BaseExpression":
        if _inplace_chain(updated):
            return out_of_place_chain(updated)
        if _inplace_keyword(updated) is not None or _twin_function(updated) is not None:
            return _without_inplace(updated)
        return updated


def _inplace_chain(call: "cst.Call") -> bool:
    """``x.add_(1)``, ``x.mul_(a).add_(b)``: in-place tensor methods, each with a twin."""
    if _twin_function(call) is not None:
        return False  # `torch.relu_(x)`: a function of a module, not a method of a tensor
    node: cst.BaseExpression = call
    links = 0
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in torch_api.INPLACE_METHODS:
        if not torch_api.INPLACE_METHODS[node.func.attr.value]:
            return False
        links += 1
        node = node.func.value
    return links > 0


def _chain_base(call: "cst.Call") -> "cst.BaseExpression":
    node: cst.BaseExpression = call
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) \
            and node.func.attr.value in torch_api.INPLACE_METHODS:
        node = node.func.value
    return node


def _inplace_keyword(call: "cst.Call") -> Optional["cst.Arg"]:
    return next((a for a in call.args if a.keyword is not None and a.keyword.value == "inplace"
                 and isinstance(a.value, cst.Name) and a.value.value == "True"), None)


def _first_positional(call: "cst.Call") -> Optional["cst.BaseExpression"]:
    return next((a.value for a in call.args if a.keyword is None and not a.star), None)


_ALIASES = {"F": "torch.nn.functional", "nn.functional": "torch.nn.functional", "nn": "torch.nn"}


def _twin_function(call: "cst.Call") -> Optional[str]:
    """``torch.relu_(x)``, ``F.relu_(x)``: the name of the out-of-place twin (``relu``)."""
    func = call.func
    if not isinstance(func, cst.Attribute):
        return None
    owner = _dotted(func.value)
    full = f"{_ALIASES.get(owner, owner)}.{func.attr.value}"
    twin = torch_api.INPLACE_FUNCTIONS.get(full)
    return twin.rsplit(".", 1)[-1] if twin else None


def _without_inplace(call: "cst.Call") -> "cst.Call":
    """``f(x, inplace=True)`` -> ``f(x)``; ``torch.relu_(x)`` -> ``torch.relu(x)``."""
    twin = _twin_function(call)
    if twin is not None:
        return call.with_changes(func=cast("cst.Attribute", call.func).with_changes(attr=cst.Name(twin)))
    args = [a for a in call.args if not (a.keyword is not None and a.keyword.value == "inplace")]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


def clone_before(where: Positions, at: Position) -> Optional[Fix]:
    """``name = name.clone()`` before the statement at ``at``, for the name it writes into
    (``name op= v``, ``name[i] = v``, ``name.add_(v)``): the write goes into a copy."""
    small = where.small_statement(at)
    if small is None:
        return None
    name = _written_name(small)
    if name is None:
        return None
    holder, _ = where.holders[id(small)]
    clone = rebind([name.deep_clone()], _call(name.deep_clone(), "clone"))
    title = fix_title(clone, "Insert")

    def build(node: "cst.CSTNode") -> "cst.CSTNode | cst.FlattenSentinel[cst.CSTNode]":
        line = cast(Line, node)
        index = next((i for i, s in enumerate(line.body) if s.deep_equals(small)), None)
        if index is None:
            return node
        return cast("cst.CSTNode | cst.FlattenSentinel[cst.CSTNode]", insert_before(line, index, clone))

    return Fix(holder, build, title)


def clones_of_items(where: Positions, at: Position) -> List[Fix]:
    """``d[k] = d[k].clone()`` before the statement at ``at`` that writes ``d[k][i, :] = v``
    (or ``d[k][i] += v``): the write goes into a copy of the container's item, one candidate
    per level of the indexing, the innermost first (``clone_before`` copies the name itself).
    Only where every index is a name or a constant (the item is the same each time it is read)."""
    small = where.small_statement(at)
    if small is None:
        return []
    target = _written_target(small)
    if not isinstance(target, cst.Subscript):
        return []
    holder, _ = where.holders[id(small)]
    items = []
    node: cst.BaseExpression = target.value
    while isinstance(node, cst.Subscript):
        if _plain(node):
            items.append(node)
        node = node.value
    fixes = []
    for item in items:
        clone = rebind([cast("cst.BaseAssignTargetExpression", item.deep_clone())], _call(item.deep_clone(), "clone"))

        def build(node: "cst.CSTNode", clone: "cst.BaseSmallStatement" = clone) \
                -> "cst.CSTNode | cst.FlattenSentinel[cst.CSTNode]":
            line = cast(Line, node)
            index = next((i for i, s in enumerate(line.body) if s.deep_equals(small)), None)
            if index is None:
                return node
            return cast("cst.CSTNode | cst.FlattenSentinel[cst.CSTNode]", insert_before(line, index, clone))

        fixes.append(Fix(holder, build, fix_title(clone, "Insert")))
    return fixes


def clones_of_reads(where: Positions, at: Position) -> Optional[Fix]:
    """The reads of the written tensor on the statement's right side copied: ``x[i + 1], _ =
    f(x[i].clone())`` for ``x[i + 1], _ = f(x[i])`` (a rollout into a buffer whose step saves
    what it reads). The right side runs before the write, so a copy of what it reads changes
    no value; a copy before the statement (``clone_before``) would be read and saved again."""
    small = where.small_statement(at)
    if small is None or not isinstance(small, (cst.Assign, cst.AugAssign)):
        return None
    new = _reads_cloned(small)
    if new is None:
        return None
    return Fix(small, lambda node: _reads_cloned(cast("cst.BaseSmallStatement", node)) or node, fix_title(new))


def _reads_cloned(small: "cst.BaseSmallStatement") -> Optional["cst.BaseSmallStatement"]:
    name = _written_name(small)
    value = getattr(small, "value", None)
    if name is None or value is None:
        return None
    reads = _ReadsOf(name.value)
    value.visit(reads)
    if not reads.found:
        return None
    new_value = value.visit(_CloneNodes(reads.found))
    return small.with_changes(value=new_value)


class _ReadsOf(cst.CSTVisitor):
    """The outermost reads of one name on a right side: ``x[i]``, ``x[i][j]``, ``x`` as an
    argument or operand (not ``x.shape``, not inside a lambda or a comprehension)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.found: List["cst.CSTNode"] = []

    def visit_Subscript(self, node: "cst.Subscript") -> bool:
        base: cst.BaseExpression = node
        while isinstance(base, cst.Subscript):
            base = base.value
        if isinstance(base, cst.Name) and base.value == self.name:
            self.found.append(node)
            return False
        return True

    def visit_Attribute(self, node: "cst.Attribute") -> bool:
        if not isinstance(node.value, cst.Name):  # `x.shape`: no read of the values
            node.value.visit(self)
        return False

    def visit_Arg(self, node: "cst.Arg") -> bool:
        node.value.visit(self)  # not the keyword's name
        return False

    def visit_Name(self, node: "cst.Name") -> bool:
        if node.value == self.name:
            self.found.append(node)
        return False

    def visit_Lambda(self, node: "cst.Lambda") -> bool:
        return False

    def visit_ListComp(self, node: "cst.ListComp") -> bool:
        return False

    def visit_GeneratorExp(self, node: "cst.GeneratorExp") -> bool:
        return False

    def visit_DictComp(self, node: "cst.DictComp") -> bool:
        return False

    def visit_SetComp(self, node: "cst.SetComp") -> bool:
        return False


class _CloneNodes(cst.CSTTransformer):
    def __init__(self, nodes: Sequence["cst.CSTNode"]) -> None:
        self.ids = {id(n) for n in nodes}

    def leave_Subscript(self, original: "cst.Subscript", updated: "cst.Subscript") -> "cst.BaseExpression":
        return _call(updated, "clone") if id(original) in self.ids else updated

    def leave_Name(self, original: "cst.Name", updated: "cst.Name") -> "cst.BaseExpression":
        return _call(updated, "clone") if id(original) in self.ids else updated


def rebound_name(where: Positions, at: Position, into_copy: bool = False) -> Optional[str]:
    """The name the run-made rewrite of the statement at ``at`` rebinds instead of writing into
    its object: ``x`` of ``x += v`` / ``x.add_(v)`` (:func:`out_of_place`), or with ``into_copy``
    the name copied before the write (:func:`clone_before`: ``x`` of ``x[i] = v`` too); None
    where the rewrite rebinds no name (``x[i] += v``, ``y = x.add_(v)``)."""
    small = where.small_statement(at)
    if small is None:
        return None
    if into_copy:
        name = _written_name(small)
        return name.value if name is not None else None
    target: Optional[cst.BaseExpression] = None
    if isinstance(small, cst.AugAssign):
        target = small.target
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        target = _call_writes(small.value)
    return target.value if isinstance(target, cst.Name) else None


def _call_writes(call: "cst.Call") -> Optional["cst.BaseExpression"]:
    """What an in-place call writes into: the base of ``x.add_(v).mul_(2)``, the first argument
    of ``F.relu(x, inplace=True)`` or of a function with an in-place twin; else None."""
    if _inplace_chain(call):
        return _chain_base(call)
    if _inplace_keyword(call) is not None or _twin_function(call) is not None:
        return _first_positional(call)
    return None


def _written_target(small: "cst.BaseSmallStatement") -> Optional["cst.BaseExpression"]:
    """What the statement writes into, indexing kept: ``d[k][i, :]`` of ``d[k][i, :] = v``."""
    if isinstance(small, cst.AugAssign):
        return small.target
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        return small.targets[0].target
    return None


def _written_name(small: "cst.BaseSmallStatement") -> Optional["cst.Name"]:
    target: Optional[cst.BaseExpression] = None
    if isinstance(small, cst.AugAssign):
        target = small.target
    elif isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = small.targets[0].target
        if isinstance(target, (cst.Tuple, cst.List)):
            # `x[i + 1], _ = f(x[i])`: the one element written into (the others only bound).
            written = [e.value for e in target.elements if not isinstance(e.value, cst.Name)]
            if len(written) != 1:
                return None
            target = written[0]
        if not isinstance(target, cst.Subscript):
            return None
    elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        target = _call_writes(small.value)
    while isinstance(target, cst.Subscript):
        target = target.value
    return target if isinstance(target, cst.Name) else None


# ------------------------------------------------------------------ where the views were made
def copies_of_views(where: Positions, made: Span) -> Optional[Fix]:
    """``C`` -> ``tuple(v.clone() for v in C)``: the call that made the views hands out copies."""
    expr = where.made_by(made)
    if not _makes_views(expr):
        return None
    call = cast("cst.Call", expr)
    name = _fresh(call, ("view", "part", "piece", "v_"))
    new = _tuple_of(_call(cst.Name(name), "clone"), name, call)
    return Fix(call, lambda node: _tuple_of(_call(cst.Name(name), "clone"), name,
                                            cast("cst.BaseExpression", node)), fix_title(new))


def ordinary_views(where: Positions, made: Span, op: str) -> List[Fix]:
    """The views made at ``made`` as ordinary views of the same memory (writes into them reach
    the tensor viewed, autograd tracking them): ``x.unbind(d)`` -> ``tuple(x.select(d, i) for i
    in range(x.size(d)))``, ``x.chunk(n, d)`` -> ``x.tensor_split(n, d)``; a tensor iterated
    (``for r in x``, ``zip(x, ...)``) -> ``(x[i] for i in range(len(x)))``, one candidate per
    argument that may be the tensor. Only where ``x`` is a name or an attribute (read twice)."""
    expr = where.made_by(made)
    if expr is None:
        return []
    if _makes_views(expr):
        call = cast("cst.Call", expr)
        func = cast("cst.Attribute", call.func)
        base = func.value
        if func.attr.value == "chunk":  # the same views, ordinary ones: any receiver, ``torch`` too
            new = call.with_changes(func=func.with_changes(attr=cst.Name("tensor_split")))
            return [Fix(func.attr, lambda node: cst.Name("tensor_split"), fix_title(new))]
        if func.attr.value in ("split", "split_with_sizes"):
            return _split_at_sums(call, func)
        if not _plain(base) or _dotted(base) == "torch":
            return []
        if func.attr.value == "unbind" and len(call.args) <= 1 and all(
                a.keyword is None or a.keyword.value == "dim" for a in call.args):
            dim = call.args[0].value if call.args else cst.Integer("0")
            i = _fresh(call, ("i", "j", "k", "idx", "_i"))
            selected = cst.Call(cst.Attribute(base.deep_clone(), cst.Name("select")),
                                [cst.Arg(dim.deep_clone()), cst.Arg(cst.Name(i))])
            size = cst.Call(cst.Attribute(base.deep_clone(), cst.Name("size")), [cst.Arg(dim.deep_clone())])
            views = _tuple_of(selected, i, cst.Call(cst.Name("range"), [cst.Arg(size)]))
            return [Fix(call, _replacement(views), fix_title(views))]
        return []
    # A tensor iterated: the expression iterated, or an argument of the call that iterates it.
    iterated: List[cst.BaseExpression] = []
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) \
            and expr.func.value in ("zip", "enumerate", "map", "list", "tuple", "iter", "reversed", "sorted"):
        iterated = [a.value for a in expr.args if a.keyword is None and not a.star]
        if expr.func.value == "map":
            iterated = iterated[1:]
    elif isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
        iterated = []
        clause: Optional[cst.CompFor] = expr.for_in
        while clause is not None:
            iterated.append(clause.iter)
            clause = clause.inner_for_in
    else:
        iterated = [expr]
    fixes = []
    for candidate in iterated:
        if not _plain(candidate):
            continue
        i = _fresh(candidate, ("i", "j", "k", "idx", "_i"))
        item = cst.Subscript(candidate.deep_clone(), [cst.SubscriptElement(cst.Index(cst.Name(i)))])
        length = cst.Call(cst.Name("len"), [cst.Arg(candidate.deep_clone())])
        views = _tuple_of(item, i, cst.Call(cst.Name("range"), [cst.Arg(length)]))
        fixes.append(Fix(candidate, _replacement(views), fix_title(views)))
    return fixes


def _split_at_sums(call: "cst.Call", func: "cst.Attribute") -> List[Fix]:
    """``x.split((a, b, c), d)`` (``torch.split(x, ...)``) -> ``x.tensor_split((a, a + b), d)``:
    sections given as a literal of sizes become the indices where they end (the last is
    implied: split checks that the sizes add up). A single size is left alone (its indices
    need the tensor's size)."""
    at = 1 if _dotted(func.value) == "torch" else 0
    positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
    if len(positional) <= at or any(a.star for a in call.args):
        return []
    index = positional[at]
    sizes = call.args[index].value
    if not isinstance(sizes, (cst.Tuple, cst.List)) or len(sizes.elements) < 2 \
            or any(isinstance(e, cst.StarredElement) for e in sizes.elements):
        return []
    values = [e.value for e in sizes.elements]
    sums: List[cst.BaseExpression] = []
    for value in values[:-1]:
        term = value.deep_clone()
        sums.append(term if not sums else cst.BinaryOperation(sums[-1].deep_clone(), cst.Add(), _summand(term)))
    elements = [cst.Element(v) for v in sums]
    points = cst.Tuple(elements) if isinstance(sizes, cst.Tuple) else cst.List(elements)
    args = list(call.args)
    args[index] = args[index].with_changes(value=points)
    new = call.with_changes(func=func.with_changes(attr=cst.Name("tensor_split")), args=args)
    return [Fix(call, _replacement(new), fix_title(new))]


def _summand(expr: "cst.BaseExpression") -> "cst.BaseExpression":
    """``expr`` as the right operand of ``+`` (parenthesised unless an atom or a number)."""
    if isinstance(expr, (cst.Integer, cst.Float, cst.UnaryOperation)) and not isinstance(
            getattr(expr, "operator", None), cst.Not):
        return expr
    return _atom(expr)


def detached(where: Positions, made: Span) -> Optional[Fix]:
    """``C`` -> ``C.detach()``: a view made under ``no_grad`` stays out of autograd, as PyTorch
    computes the write with grad off (the memory is shared: the writes still reach it)."""
    expr = where.made_by(made)
    if expr is None or _makes_views(expr) or isinstance(expr, (cst.Tuple, cst.List, cst.GeneratorExp)):
        return None  # several views (a tuple): no `.detach()` for it
    new = _call(_atom(expr), "detach")
    return Fix(expr, lambda node: _call(_atom(cast("cst.BaseExpression", node)), "detach"), fix_title(new))


# ------------------------------------------------------------------ where a module was built
def not_inplace(where: Positions, built: Position) -> Optional[Fix]:
    """The ``inplace=True`` (or a positional ``True`` of an activation) dropped from the call
    that built a module, on the line ``built``; where the flag came in a mapping
    (``act_layer(**kwargs)``), ``inplace=False`` put last in it: ``act_layer(**{**kwargs,
    "inplace": False})`` (the call nearest ``built``'s column, where several on the line take one)."""
    line = built[0]
    for node, r in where.ranges.items():
        if isinstance(node, cst.Call) and r.start.line <= line <= r.end.line and _inplace_keyword(node) is not None:
            new = _without_inplace(node)
            return Fix(node, lambda n: _without_inplace(cast("cst.Call", n)), fix_title(new))
    mapped = [(node, r) for node, r in where.ranges.items() if isinstance(node, cst.Call)
              and r.start.line <= line <= r.end.line and _mapping_arg(node) is not None]
    if not mapped:
        return None
    node = min(mapped, key=lambda nr: (abs(nr[1].start.column - built[1]) if nr[1].start.line == line else 1 << 20,
                                       nr[1].end.line - nr[1].start.line))[0]
    new = _inplace_off_in_mapping(node)
    return Fix(node, lambda n: _inplace_off_in_mapping(cast("cst.Call", n)), fix_title(new))


def _mapping_arg(call: "cst.Call") -> Optional[int]:
    """The index of the last ``**mapping`` argument of a call, if any."""
    found = [i for i, a in enumerate(call.args) if a.star == "**"]
    return found[-1] if found else None


def _inplace_off_in_mapping(call: "cst.Call") -> "cst.Call":
    """``f(a, **kw)`` -> ``f(a, **{**kw, "inplace": False})``."""
    index = _mapping_arg(call)
    if index is None:
        return call
    arg = call.args[index]
    merged = cst.Dict([cst.StarredDictElement(arg.value.deep_clone()),
                       cst.DictElement(cst.SimpleString('"inplace"'), cst.Name("False"))])
    args = list(call.args)
    args[index] = arg.with_changes(value=merged)
    return call.with_changes(args=args)


# ------------------------------------------------------------------ helpers
def _replacement(new: "cst.BaseExpression") -> "Callable[[cst.CSTNode], cst.CSTNode]":
    return lambda node: new.deep_clone()


def _makes_views(expr: Optional["cst.BaseExpression"]) -> bool:
    """``x.chunk(3)``, ``torch.split(x, 2)``: a call that returns several views."""
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
        and expr.func.attr.value in _MULTI_VIEW_METHODS


def _plain(expr: "cst.BaseExpression") -> bool:
    """A name, an attribute of one, or such a thing indexed by constants: cheap and the same
    each time it is read."""
    if isinstance(expr, cst.Name):
        return True
    if isinstance(expr, cst.Attribute):
        return _plain(expr.value)
    if isinstance(expr, cst.Subscript):
        return _plain(expr.value) and all(
            isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Integer, cst.Name))
            for e in expr.slice)
    return False


def _call(value: "cst.BaseExpression", method: str) -> "cst.Call":
    return cst.Call(cst.Attribute(_atom(value), cst.Name(method)))


def _atom(expr: "cst.BaseExpression") -> "cst.BaseExpression":
    if expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _tuple_of(element: "cst.BaseExpression", name: str, iterable: "cst.BaseExpression") -> "cst.Call":
    """``tuple(element for name in iterable)``."""
    gen = cst.GeneratorExp(element, cst.CompFor(target=cst.Name(name), iter=iterable), lpar=[], rpar=[])
    return cst.Call(cst.Name("tuple"), [cst.Arg(gen)])


def _names(node: "cst.CSTNode") -> Set[str]:
    found: Set[str] = set()

    class Collect(cst.CSTVisitor):
        def visit_Name(self, name: "cst.Name") -> None:
            found.add(name.value)

    node.visit(Collect())
    return found


def _fresh(node: "cst.CSTNode", choices: Sequence[str]) -> str:
    """A name not used in ``node`` (a generator's own variable: it shadows nothing outside)."""
    used = _names(node)
    return next(iter(c for c in choices if c not in used), "_inplacefix_i")
