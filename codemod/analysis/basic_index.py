"""Basic and copying indexes: which subscripts are views of what they index.

``x[i, :2]`` (ints, slices, ``None``, ``...``) is a view of ``x``; ``x[idx]`` with ``idx`` a tensor (but a
0-d integer one), a list of ints or a mask is an advanced-index copy that shares nothing with ``x``.
Unknown is not yes: a piece the analysis cannot type (an unannotated parameter, an attribute set to
a tensor) may be either. The hazard analysis (a save read through the view) and the summaries (a
parameter saved through an index of it) ask the same test, here."""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set

from codemod.analysis.facts import project_name
from codemod.analysis.kinds import TENSORISH, Kind
from codemod.analysis.project import int_constant
from codemod.analysis.syntax import FUNCTIONS, Function
from codemod.analysis.tensor_kind import KindFacts


def _uninverted(part: ast.expr) -> ast.expr:
    """``m`` of ``~m`` (of ``~~m``...): an index of the same kind (a mask's inverse is a mask; an
    index tensor's, an index tensor; a Python int's, an int)."""
    while isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Invert):
        part = part.operand
    return part


def _copying_index(model: KindFacts, sub: ast.Subscript) -> bool:
    """``sub`` may copy: a piece of its index is not known to be basic (:func:`_known_basic`: an int, a
    slice, ``None``, ``...``), nor a 0-d integer tensor, which only ``scores.argmax()``
    (:func:`_zero_dim_index`) or ``torch.tensor(0)`` is shown to be. A tensor (``src``,
    ``torch.nonzero(m).squeeze(1)``) copies; a piece of unknown kind (``self.indices``, a parameter) may
    be either, and unknown is not yes: what is proven through the view is possible at most."""
    pieces = [_uninverted(p) for p in (sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice])]
    return any(not _known_basic(model, p) and not _zero_dim_index(model, p) for p in pieces)


_SIZES = frozenset({"size", "dim", "ndimension", "numel", "nelement", "item"})  # (a tensor's: Python numbers)


def _known_basic(model: KindFacts, piece: ast.expr, depth: int = 0) -> bool:
    """``piece`` is known to index basically (a view): a slice, an int, ``None``, ``...``, a tuple of them,
    ``slice(...)``, a Python number (``model.kind``: ``n``, ``len(x) - 1``, ``x.shape[0]``, a ``range``'s
    turn), ``t.size(0)`` of a tensor; a name bound only to such (``k = 1``), a parameter annotated ``slice``,
    or ``self.<attr>`` that only its own class sets, and only to such. (An ``int`` annotation is
    ``model.kind``'s.)"""
    if isinstance(piece, ast.Slice):
        return True
    if isinstance(piece, ast.Constant):
        return piece.value is None or piece.value is Ellipsis or type(piece.value) is int
    if isinstance(piece, ast.Tuple):
        return all(_known_basic(model, e, depth) for e in piece.elts)
    if _known_int(model, piece):
        return True
    if isinstance(piece, ast.Call) and "builtins.slice" in model.qualified_names(piece.func) \
            or isinstance(piece, ast.Name) and "builtins.Ellipsis" in model.qualified_names(piece):
        return True  # `slice(0, 2)`, `Ellipsis`: the builtins, not shadowed
    if depth >= 3:
        return False
    if isinstance(piece, (ast.Name, ast.Attribute)) and model.project is not None:
        name = project_name(model, piece)
        if name is not None and int_constant(model.project, name):
            return True  # `x[rows.R]`, `R: Final[int] = 0` in another module of the run
    if isinstance(piece, ast.Call) and isinstance(piece.func, ast.Name):
        helper = _module_function(model, piece.func.id)  # `clipped = rows_of(x)`, each return `slice(0, 2)`
        if helper is None or piece.keywords and helper.decorator_list:
            return False
        decided = _literal_params(model, helper, piece)  # `pick(out, False)`: only the returns it may reach
        returns = [r.value for r in model.walk(helper) if isinstance(r, ast.Return) and model.owner(r) is helper
                   and not _arm_excluded(model, helper, r, decided)]
        return bool(returns) and all(r is not None and _known_basic(model, r, depth + 1) for r in returns)
    if isinstance(piece, ast.Name):
        owner = model.owner(piece)
        reaching = model.reaching(model.flow(owner), piece.id, model.statement_of(piece))
        return bool(reaching) and all(
            b.form == "assign" and b.value is not None and _known_basic(model, b.value, depth + 1)
            or b.form == "param" and _annotated_slice(owner, piece.id) for b in reaching)
    if isinstance(piece, ast.Attribute) and isinstance(piece.value, ast.Name) and piece.value.id == "self":
        cls = model.enclosing_class(piece)
        values = list(model.class_attrs(cls).get(piece.attr, [])) if cls is not None else []
        related = _related_classes(model, cls) if cls is not None else set()
        return bool(values) and all(isinstance(v, ast.expr) and _known_basic(model, v, depth + 1) for v in values) \
            and all(isinstance(w, ast.Attribute) and isinstance(w.value, ast.Name) and w.value.id == "self"
                    and (model.enclosing_class(w) is cls or model.enclosing_class(w) not in related)
                    for w in model.attribute_writes(piece.attr))  # (another class's `self.x`: its own instances)
    return False


_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def _known_int(model: KindFacts, expr: ast.expr) -> bool:
    """A Python int (or a number, which as an index raises before anything): ``model.kind`` says a
    scalar (``n``, ``len(x) - 1``, ``x.shape[0]``, a ``range``'s turn, an ``int`` annotation), ``t.size(0)``,
    ``t.dim()``, ``t.item()`` of what is not known to be something other than a tensor, or ``+ - * // %``
    of such."""
    if isinstance(expr, ast.Constant):
        return type(expr.value) is int
    if model.kind(expr) is Kind.SCALAR:
        return True
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _INT_OPS):
        return _known_int(model, expr.left) and _known_int(model, expr.right)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _known_int(model, expr.operand)
    if isinstance(expr, ast.Name):
        return _enumerate_count(model, expr)
    if isinstance(expr, ast.Subscript) and not isinstance(expr.slice, ast.Slice):
        return _known_int(model, expr.slice) and _int_sequence(model, expr.value) \
            or _int_dict(model, expr.value)  # `self.parent[i - 1]`, `item_index[key]`
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _SIZES \
        and model.torch_name(expr.func) is None and model.kind(expr.func.value) in (*TENSORISH, Kind.UNKNOWN)


def _enumerate_count(model: KindFacts, name: ast.Name) -> bool:
    """``name`` is bound only as the count of ``for k, item in enumerate(...)`` (the builtin
    ``enumerate``, not shadowed): an int."""
    reaching = model.reaching(model.flow(model.owner(name)), name.id, model.statement_of(name))
    return bool(reaching) and all(
        b.form == "other" and isinstance(b.stmt, (ast.For, ast.AsyncFor)) and isinstance(b.stmt.target, ast.Tuple)
        and len(b.stmt.target.elts) == 2 and isinstance(b.stmt.target.elts[0], ast.Name)
        and b.stmt.target.elts[0].id == name.id and isinstance(b.stmt.iter, ast.Call)
        and "builtins.enumerate" in model.qualified_names(b.stmt.iter.func) for b in reaching)


def _int_sequence(model: KindFacts, expr: ast.expr, depth: int = 0) -> bool:
    """``expr`` is a list or tuple of int literals, or a name of the module's top level (read, not bound, where
    it is read) or ``self.<attr>`` that only its own class sets, bound only to one, and whose list nothing
    writes (no item store, no method called on it)."""
    if isinstance(expr, (ast.List, ast.Tuple)):
        return all(isinstance(e, ast.Constant) and type(e.value) is int for e in expr.elts)
    if depth >= 3:
        return False
    if isinstance(expr, ast.Name) and expr.id not in model.flow(model.owner(expr)).bindings \
            or isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        if isinstance(expr, ast.Name):
            bound = model.flow(model.module, nested=False).bindings.get(expr.id, [])
            values: List[object] = [b.value if b.form in ("assign", "ann") else None for b in bound]
        else:
            cls = model.enclosing_class(expr)
            values = list(model.class_attrs(cls).get(expr.attr, [])) if cls is not None else []
            if any(not (isinstance(w, ast.Attribute) and model.enclosing_class(w) is cls) for w in model.attribute_writes(expr.attr)):
                return False
        key = expr.id if isinstance(expr, ast.Name) else expr.attr
        written = any(isinstance(n, (ast.Subscript, ast.Attribute)) and (isinstance(n.value, ast.Name) and n.value.id == key
                      or isinstance(n.value, ast.Attribute) and n.value.attr == key)
                      and (isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load) or isinstance(n, ast.Attribute))
                      for n in ast.walk(model.module))
        return bool(values) and not written and all(isinstance(v, ast.expr) and _int_sequence(model, v, depth + 1) for v in values)
    return False


_DICT_READS = frozenset({"get", "keys", "values", "items"})


def _int_dict(model: KindFacts, expr: ast.expr) -> bool:
    """``expr`` is a local name every reaching binding of which is a dict whose values are ints
    (:func:`_int_dict_value`), and which the function (with what it nests) only reads: a subscript load,
    ``in``, ``.get``/``.keys``/``.values``/``.items`` called, ``len``, a ``for``'s iterable. Anything else
    (an item store, ``update``, handed to a call, aliased) may put a non-int in it: unknown."""
    if not isinstance(expr, ast.Name):
        return False
    owner = model.owner(expr)
    if isinstance(owner, ast.Module):
        return False
    flow = model.flow(owner)
    if expr.id in flow.declared or expr.id in flow.params:
        return False
    reaching = model.reaching(flow, expr.id, model.statement_of(expr))
    if not reaching or not all(b.form == "assign" and b.value is not None and not b.sources
                               and _int_dict_value(model, b.value) for b in reaching):
        return False
    for node in model.walk(owner):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and expr.id in node.names:
            return False
        if not (isinstance(node, ast.Name) and node.id == expr.id and isinstance(node.ctx, ast.Load)):
            continue
        up = model.parent(node)
        if isinstance(up, ast.Subscript) and up.value is node and isinstance(up.ctx, ast.Load) \
                or isinstance(up, ast.Compare) and node in up.comparators \
                and all(isinstance(op, (ast.In, ast.NotIn)) for op in up.ops) \
                or isinstance(up, (ast.For, ast.comprehension)) and up.iter is node:
            continue
        if isinstance(up, ast.Attribute) and up.attr in _DICT_READS and isinstance(model.parent(up), ast.Call) \
                and getattr(model.parent(up), "func", None) is up:
            continue
        if isinstance(up, ast.Call) and up.args == [node] and not up.keywords \
                and "builtins.len" in model.qualified_names(up.func):
            continue
        return False
    return True


def _int_dict_value(model: KindFacts, value: ast.expr) -> bool:
    """``{"a": 0, "b": n}``, ``{k: i for i, k in enumerate(keys)}``, ``dict()``, or an ``if``-expression of
    such: a new dict each of whose values is an int."""
    if isinstance(value, ast.IfExp):
        return _int_dict_value(model, value.body) and _int_dict_value(model, value.orelse)
    if isinstance(value, ast.Dict):
        return all(k is not None and _known_int(model, v) for k, v in zip(value.keys, value.values))
    if isinstance(value, ast.DictComp):
        return _comprehension_int(model, value, value.value)
    return isinstance(value, ast.Call) and not value.args and not value.keywords \
        and "builtins.dict" in model.qualified_names(value.func)


def _comprehension_int(model: KindFacts, comp: ast.DictComp, expr: ast.expr) -> bool:
    """``expr``, in ``comp``, is an int: a literal, ``+ - * // %`` of ints, a turn of ``range(...)``,
    the count of ``enumerate(...)`` or a ``range`` item of ``zip(...)`` (the builtins), or a name of the
    enclosing scope known to be an int."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _INT_OPS):
        return _comprehension_int(model, comp, expr.left) and _comprehension_int(model, comp, expr.right)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        return _comprehension_int(model, comp, expr.operand)
    if not isinstance(expr, ast.Name):
        return isinstance(expr, ast.Constant) and type(expr.value) is int
    binders = [g for g in comp.generators if any(isinstance(n, ast.Name) and n.id == expr.id for n in ast.walk(g.target))]
    if not binders:
        return _known_int(model, expr)
    return all(_turn_int(model, g, expr.id) for g in binders)


def _turn_int(model: KindFacts, gen: ast.comprehension, name: str) -> bool:
    """``for name in range(...)``, ``for name, _ in enumerate(...)``, ``for name, _ in zip(range(...), ...)``."""
    it = gen.iter
    if not isinstance(it, ast.Call) or any(isinstance(a, ast.Starred) for a in it.args):
        return False
    called = model.qualified_names(it.func)
    if isinstance(gen.target, ast.Name):
        return gen.target.id == name and "builtins.range" in called
    if not isinstance(gen.target, ast.Tuple) or not all(isinstance(e, ast.Name) for e in gen.target.elts):
        return False
    slots = [i for i, e in enumerate(gen.target.elts) if isinstance(e, ast.Name) and e.id == name]
    if len(slots) != 1:
        return False
    if "builtins.enumerate" in called:
        return slots[0] == 0 and len(gen.target.elts) == 2
    return "builtins.zip" in called and len(it.args) == len(gen.target.elts) \
        and isinstance(arg := it.args[slots[0]], ast.Call) and "builtins.range" in model.qualified_names(arg.func)


def _literal_params(model: KindFacts, helper: Function, call: ast.Call) -> Dict[str, object]:
    """The parameters of ``helper`` that ``call`` gives a literal (``pick(out, False)``, ``loud_only=None``) or
    leaves to a literal default, and that the helper never rebinds: name -> the literal's value. Nothing for a
    decorated helper, or a call with ``*args``/``**kw``."""
    if helper.decorator_list or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return {}
    args = helper.args
    positional = [*args.posonlyargs, *args.args]
    given: Dict[str, ast.expr] = {}
    for i, a in enumerate(positional):
        if i < len(call.args):
            given[a.arg] = call.args[i]
        elif a.arg not in {k.arg for k in call.keywords} and i >= len(positional) - len(args.defaults):
            given[a.arg] = args.defaults[i - (len(positional) - len(args.defaults))]
    for a, default in zip(args.kwonlyargs, args.kw_defaults):
        if default is not None:
            given[a.arg] = default
    for k in call.keywords:
        if k.arg in given or any(a.arg == k.arg for a in args.kwonlyargs) or any(a.arg == k.arg for a in args.args):
            given[str(k.arg)] = k.value
    kept: Dict[str, object] = {name: v.value for name, v in given.items() if isinstance(v, ast.Constant)}
    for node in model.walk(helper):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) \
                or isinstance(node, ast.arg) and node not in (*positional, *args.kwonlyargs):
            kept.pop(node.id if isinstance(node, ast.Name) else node.arg, None)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for n in node.names:
                kept.pop(n, None)
    return kept


def _decided(test: ast.expr, decided: Dict[str, object]) -> Optional[bool]:
    """What ``test`` is at the parameters' literals: ``flag``, ``not flag``, ``flag is None``, ``flag == "x"``,
    ``and``/``or`` of such; None where it depends on anything else."""
    if isinstance(test, (ast.Name, ast.Attribute)):
        key = _subject_key(test)
        return bool(decided[key]) if key in decided else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _decided(test.operand, decided)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        parts = [_decided(v, decided) for v in test.values]
        stop = isinstance(test.op, ast.Or)  # the value that decides the whole
        return stop if stop in parts else None if None in parts else not stop
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and (key := _subject_key(test.left)) in decided \
            and isinstance(right := test.comparators[0], ast.Constant):
        a, b, op = decided[key], right.value, test.ops[0]
        if isinstance(op, (ast.Eq, ast.NotEq)):
            return (a == b) is isinstance(op, ast.Eq)
        if isinstance(op, (ast.Is, ast.IsNot)) and (b is None or type(b) is bool):  # (singletons: `1 is None`)
            return (type(a) is type(b) and a == b) is isinstance(op, ast.Is)
    return None


def _arm_excluded(model: KindFacts, helper: Function, node: ast.AST, decided: Dict[str, object]) -> bool:
    """``node`` sits in an arm of an ``if`` of ``helper`` that the parameters' literals rule out."""
    if not decided:
        return False
    child = node
    for anc in model.ancestors(node):
        if anc is helper:
            return False
        if isinstance(anc, ast.If) and child is not anc.test:
            taken = _decided(anc.test, decided)
            if taken is not None and (child in anc.body) is not taken:
                return True
        child = anc
    return False


def _subject_key(expr: ast.expr) -> Optional[str]:
    """``task`` or ``self.task``: the key :func:`_decided` reads a literal of; None for anything else."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return "self." + expr.attr
    return None


def _module_function(model: KindFacts, name: str) -> Optional[Function]:
    """The one function the module's top level defines as ``name``, which it binds no other way."""
    defs = [s for s in model.module.body if isinstance(s, FUNCTIONS) and s.name == name]
    return defs[0] if len(defs) == 1 and not any(
        isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
        or isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name
        or isinstance(n, (*FUNCTIONS, ast.ClassDef)) and n.name == name and n is not defs[0]
        for n in ast.walk(model.module)) else None


def _related_classes(model: KindFacts, cls: ast.ClassDef) -> Set[ast.ClassDef]:
    """``cls`` and the classes of the module it inherits from or that inherit from it (by name, through
    any number of steps): a ``self.<attr>`` they set may be one of ``cls``'s instances'. (A subclass in
    another file is not seen, as the class's own values are taken as all it is given elsewhere.)"""
    classes = [n for n in ast.walk(model.module) if isinstance(n, ast.ClassDef)]
    bases = {c: {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "?" for b in c.bases}
             for c in classes}
    related, grew = {cls}, True
    while grew:
        grew = False
        for c in classes:
            if c not in related and (bases[c] & {r.name for r in related} or c.name in set().union(*(bases[r] for r in related))):
                related.add(c)
                grew = True
    return related


def _annotated_slice(owner: ast.AST, name: str) -> bool:
    args = owner.args if isinstance(owner, FUNCTIONS) else None
    return args is not None and any(
        a.arg == name and isinstance(a.annotation, ast.Name) and a.annotation.id == "slice"
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))


def _zero_dim_index(model: KindFacts, piece: ast.expr) -> bool:
    """``scores.argmax()`` (no dim), ``torch.tensor(0)``, or a name bound only to one: a 0-d
    integer tensor, a view's index."""
    values: List[Optional[ast.expr]] = [piece]
    if isinstance(piece, ast.Name):
        values = [b.value for b in model.reaching(model.flow(model.owner(piece)), piece.id, model.statement_of(piece))]
    return bool(values) and all(
        isinstance(v, ast.Call) and not v.keywords and (
            isinstance(v.func, ast.Attribute) and v.func.attr in ("argmax", "argmin") and not v.args
            or (model.torch_name(v.func) or "") in ("torch.argmax", "torch.argmin") and len(v.args) == 1
            or (model.torch_name(v.func) or "") in ("torch.tensor", "torch.as_tensor") and len(v.args) == 1
            and isinstance(v.args[0], ast.Constant) and type(v.args[0].value) is int)  # `torch.tensor(0)`
        for v in values)



# The names the other parts ask.
copying_index = _copying_index
known_basic = _known_basic
uninverted = _uninverted
zero_dim_index = _zero_dim_index
decided = _decided
module_function = _module_function
subject_key = _subject_key
