"""Can anything make this tensor require grad? Values that cannot are no hazard.

Autograd saves nothing for a computation none of whose inputs requires grad, so an in-place
write into a tensor built only from constants (``torch.eye``, ``zeros``, ``arange``, Python
numbers), from ``.sample()`` (not ``rsample``), from ``.detach()`` or ``.data``, or from integral
values, breaks nothing. The answer is "constant" only when every way the value can be made is
seen (the bindings of a name that reach its use, the operands of an op); parameters,
attributes and calls of user code can require grad. Unknown is not constant.
"""

from __future__ import annotations

import ast
from typing import (Callable, Collection, FrozenSet, Dict, Iterator, List, Mapping, NamedTuple, Optional, Protocol,
                    Sequence, Set, Tuple, cast)

from codemod import torch_api
from codemod.analysis.branches import statement_lists
from codemod.analysis.calls import Calls
from codemod.analysis.classes import Calls as CallTable
from codemod.analysis.facts import Facts
from codemod.analysis.helper_returns import HelperCalls
from codemod.analysis.kinds import PARAMETER_CLASSES, TENSORISH, Kind
from codemod.analysis.names import identity_argument
from codemod.analysis.project import returns_constant
from codemod.analysis.binder import Flow
from codemod.analysis.syntax import FUNCTIONS, OWNERS, Function, Located, Owner, is_const, target_key
from codemod.analysis.tensor_kind import JOINING, KindFacts
from codemod.analysis.tree import Tree

_DEPTH = 12  # bindings followed before giving up (giving up: may require grad)
_CALLERS_DEPTH = 40  # through callers, class attributes and module functions
_HELPERS_DEPTH = 4  # helpers read inside helpers (for one call)
# Methods whose result never requires grad, whatever the receiver.
_DETACHED_METHODS = frozenset({
    "detach", "sample", "sample_n", "numel", "size", "dim", "item", "tolist", "long", "int", "bool",
    "byte", "short", "char", "argmax", "argmin", "argsort", "nonzero", "eq", "ne", "lt", "le", "gt",
    "ge", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "logical_xor",
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "numpy",
})
# In-place random fills: the result requires grad only when the receiver does, whatever the
# arguments (numbers, a generator). Checked with torch by tests/test_hazard.py; not bernoulli_,
# whose probability tensor passes its requires_grad on.
RANDOM_FILLS = frozenset({"normal_", "uniform_", "random_", "exponential_", "geometric_", "cauchy_", "log_normal_"})
# ``math``'s functions that multiply what they are handed (a tensor stays a tensor, with its grad);
# every other one returns a Python number (a tensor handed to it is turned into a float).
_MATH_KEEPS = frozenset({"prod", "sumprod"})
_SIZES = frozenset({"shape", "dtype", "device", "ndim", "data", "is_cuda", "requires_grad"})
_KEEPS = frozenset({"T", "mT", "H", "mH", "real", "imag"})  # attributes that are views of the value


class GradFacts(Protocol):
    """What this part asks of grad mode (``grad_mode.GradMode``)."""

    def records_nothing(self, node: ast.AST) -> bool: ...

    def made_in_inference(self, node: ast.AST) -> bool: ...

    def local_reason(self, node: ast.AST) -> Optional[str]: ...

    def promises_off(self, test: ast.expr) -> bool: ...


class RequiresGradFacts(KindFacts, Protocol):
    """What this part asks of the model beyond a value's kind: the calls of a function in the
    module (``calls``), whether a call makes a fresh tensor (``tensor_kind``), and whether an op
    runs where autograd records nothing (``grad``)."""

    @property
    def calls(self) -> Calls: ...

    def is_factory(self, call: ast.Call) -> bool: ...

    @property
    def grad(self) -> GradFacts: ...

    def returned_pieces(self, stmt: ast.AST, key: str) -> Optional[List[ast.expr]]: ...


class _Where(Protocol):
    """Where a node sits (a :class:`~codemod.analysis.tree.Tree`, or the model that holds one)."""

    def parent(self, node: ast.AST) -> Optional[ast.AST]: ...

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]: ...

    def walk(self, node: ast.AST) -> Iterator[ast.AST]: ...

    def statement_of(self, node: Located) -> Located: ...

    def owner(self, node: ast.AST) -> Owner: ...


# Builtins that read a list without changing it (`len(outs)`, `zip(outs, ws)`).
_READING_BUILTINS = frozenset({"len", "list", "tuple", "zip", "enumerate", "reversed", "sorted", "iter", "all", "any"})
_NESTED_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.ClassDef)


def list_appends(where: _Where, flow_of: Callable[[Owner], Flow], torch_name: Callable[[ast.AST], Optional[str]],
                 key: str, owner: Owner) -> Optional[List[Tuple[ast.expr, Located]]]:
    """What the function ``owner`` appends to its list ``key`` (``outs.append(self.fc(x))``, each
    value with its statement), where ``key`` is bound once there (to a list literal, the caller's
    concern), not declared ``global``/``nonlocal``, and read otherwise only in ways that change
    nothing: ``outs[i]``, ``for o in outs``, a torch function joining it or a reading builtin
    given it (``torch.stack(outs)``, ``len(outs)``). None where the list may change otherwise: another
    method (``extend``, ``insert``, ``pop``), an item set (``outs[i] = v``), a call it is handed
    to (which may append), another name bound to it, a nested scope reading it."""
    if isinstance(owner, ast.Module):
        return None
    flow = flow_of(owner)
    if len(flow.bindings.get(key, [])) != 1 or key in flow.declared:
        return None
    found: List[Tuple[ast.expr, Located]] = []
    scopes: List[Owner] = [owner]
    while not isinstance(scopes[-1], ast.Module):
        scopes.append(where.owner(scopes[-1]))
    shadowed = {n for scope in scopes for n in flow_of(scope).bindings if n in _READING_BUILTINS}
    for node in where.walk(owner):
        if not (isinstance(node, ast.Name) and node.id == key):
            continue
        if where.owner(node) is not owner or any(isinstance(a, _NESTED_SCOPES) for a in _below(where, node, owner)):
            return None  # a nested scope reads (or binds) it
        if not isinstance(node.ctx, ast.Load):
            continue  # the one binding
        parent = where.parent(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            call = where.parent(parent)
            if parent.attr == "append" and isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1 \
                    and not call.keywords and not isinstance(call.args[0], ast.Starred) \
                    and isinstance(where.parent(call), ast.Expr):
                found.append((call.args[0], where.statement_of(call)))
                continue
            return None  # another method (`extend`, `pop`), or an attribute
        if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
            continue  # `outs[-1]`
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node:
            continue  # `for o in outs`
        if isinstance(parent, ast.Call) and parent.args[:1] == [node] and (
                (torch_name(parent.func) or "").rsplit(".", 1)[-1] in JOINING or isinstance(parent.func, ast.Name)
                and parent.func.id in _READING_BUILTINS and parent.func.id not in shadowed):
            continue  # `torch.stack(outs)`, `len(outs)` (not `torch.jit.annotate(T, outs)`: the list itself)
        return None
    return found


def _with_appends(model: Facts, name: ast.Name, values: List[ast.expr]) -> Optional[List[ast.expr]]:
    """``values`` (what the bindings of ``name`` reaching its use assign) with what the function
    appends to ``name`` where one is a list literal (``outs = []``); None where that list may
    change otherwise (:func:`list_appends`)."""
    if not any(isinstance(v, ast.List) for v in values):
        return values
    appended = list_appends(model, model.flow, model.torch_name, name.id, model.owner(model.statement_of(name)))
    return None if appended is None else values + [v for v, _ in appended]


def _below(where: _Where, node: ast.AST, owner: ast.AST) -> List[ast.AST]:
    """The nodes above ``node`` and below ``owner``."""
    found: List[ast.AST] = []
    for anc in where.ancestors(node):
        if anc is owner:
            break
        found.append(anc)
    return found


def bound_values(model: RequiresGradFacts, name: ast.Name, callers: bool = False,
                 updates: bool = True, pieces: bool = False,
                 assumed: Collection[str] = ()) -> Optional[List[ast.expr]]:
    """The values every binding of ``name`` that reaches its use assigns (an ``op=`` gives its
    right-hand side, which joins the value), or None when one of them is not a plain value
    (a loop target, an unpacking; a parameter unless ``callers``: then the arguments every
    call of the function in this module passes, when all its calls are seen here). Without
    ``updates``, ``op=`` bindings are left out (they keep the tensor's dtype). With ``pieces``,
    ``a, name = f(x)`` gives what each ``return`` of the file's ``f`` gives at that place
    (``TensorKinds.returned_pieces``) where it is known. A parameter named in ``assumed`` gives
    nothing (what the caller hands is judged at the call: ``Constants`` reading a helper)."""
    stmt = model.statement_of(name)
    owner = model.owner(stmt)
    flow = model.flow(owner)
    bindings = model.reaching(flow, name.id, stmt)
    if not bindings:
        return None
    values = []
    for binding in bindings:
        if binding.form == "aug" and not updates:
            continue
        if binding.form in ("assign", "ann", "aug") and binding.value is not None:
            values.append(binding.value)
        elif pieces and isinstance(binding.stmt, ast.Assign) \
                and (returned := model.returned_pieces(binding.stmt, name.id)) is not None:
            values.extend(returned)  # `h, n = self._prepare(x)`: the `h` of each `return h, ...`
        elif isinstance(binding.stmt, (ast.Assign, ast.For)):
            # `h, w = x.shape[-2:]`, `for t in ts`: a part of the whole, constant when the whole is
            values.append(binding.stmt.value if isinstance(binding.stmt, ast.Assign) else binding.stmt.iter)
        elif binding.form == "param" and name.id in assumed:
            continue
        elif binding.form == "param" and callers and isinstance(owner, FUNCTIONS):
            passed = _arguments(model, owner, name.id)
            if passed is None:
                return None
            values.extend(passed)
        else:
            return None
    return values


def _arguments(model: RequiresGradFacts, func: Function, param: str) -> Optional[List[ast.expr]]:
    """What the calls of ``func`` in this module pass for ``param`` (None: some call, or none at
    all, cannot be read: a reference handed on, ``*args``, a default)."""
    args = [a.arg for a in (*func.args.posonlyargs, *func.args.args)]
    if param not in args:
        return None
    index = args.index(param)
    sites = model.calls.sites(func)
    if not sites:
        return None
    found = []
    for site in sites:
        call = site.node
        if not site.called or not isinstance(call, ast.Call) or any(isinstance(a, ast.Starred) for a in call.args):
            return None
        offset = model.calls.unpassed(call, func)
        if offset is None:
            return None
        keyword = next((k.value for k in call.keywords if k.arg == param), None)
        if keyword is not None:
            found.append(keyword)
        elif 0 <= index - offset < len(call.args):
            found.append(call.args[index - offset])
        else:
            return None
    return found


class _Frame(NamedTuple):
    """A helper read for one call: what the call hands each parameter but the receiver (none:
    a literal default), and the caller's state (its open names and its own frame)."""

    func: Function
    handed: Mapping[str, Optional[List[ast.expr]]]  # None: a value that may require grad
    outer: Tuple[Dict[object, int], Optional["_Frame"]]


def _handed(call: ast.Call, func: Function, receiver: Optional[str]) -> Optional[Dict[str, List[ast.expr]]]:
    """What ``call`` hands each parameter of ``func`` (``*args``/``**kwargs`` collect the rest; an
    empty list where the default, a literal, is used); None where it spreads (``*a``, ``**kw``),
    hands what no parameter takes, or leaves one whose default is not a literal."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    args = func.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    if receiver is not None:
        if not positional or positional[0] != receiver:
            return None
        positional = positional[1:]
    handed: Dict[str, List[ast.expr]] = {}
    rest = args.vararg.arg if args.vararg is not None else None
    for i, arg in enumerate(call.args):
        if i < len(positional):
            handed[positional[i]] = [arg]
        elif rest is not None:
            handed.setdefault(rest, []).append(arg)
        else:
            return None
    keywords = {a.arg for a in args.args} | {a.arg for a in args.kwonlyargs}
    extra = args.kwarg.arg if args.kwarg is not None else None
    for keyword in call.keywords:
        assert keyword.arg is not None
        if keyword.arg in keywords and keyword.arg != receiver:
            handed.setdefault(keyword.arg, []).append(keyword.value)
        elif extra is not None:
            handed.setdefault(extra, []).append(keyword.value)
        else:
            return None
    plain = [*args.posonlyargs, *args.args]
    defaults = dict(zip([a.arg for a in plain[len(plain) - len(args.defaults):]], args.defaults))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None})
    for name in [*positional, *(a.arg for a in args.kwonlyargs)]:
        if name not in handed:
            if name in defaults and not _literal(defaults[name]):
                return None
            handed[name] = []
    for collector in (rest, extra):
        if collector is not None:
            handed.setdefault(collector, [])
    return handed


class Constants:
    """Which expressions nothing can make require grad."""

    def __init__(self, model: RequiresGradFacts, callers: bool = False) -> None:
        self.model = model
        self.callers = callers  # parameters: what the calls in this module pass (see bound_values)
        self._cache: Dict[ast.expr, bool] = {}
        self._open: Dict[object, int] = {}
        self._writes: Dict[Tuple[object, str], List[ast.expr]] = {}
        self._switches: Dict[object, Dict[str, List[int]]] = {}  # owner -> name -> lines
        self._helpers = HelperCalls(model)
        # the helper whose returns are being read, with what the call hands its parameters
        self._frame: Optional[_Frame] = None
        self._reading: Set[Function] = set()
        # what the caller asked about: a helper call asked about itself is an op whose saves
        # count (its body may save what it is handed for a parameter's gradient), not a value
        self._asked: Optional[ast.expr] = None

    def constant(self, expr: ast.expr) -> bool:
        """Whether ``expr`` can never require grad (every source of it is seen)."""
        if expr in self._cache:
            return self._cache[expr]
        if not self._open and self._frame is None:
            self._asked = expr
        key = self._key(expr)
        if key in self._open:
            return True  # a cycle (``x = x * a`` in a loop): the other sources decide
        if len(self._open) >= (_CALLERS_DEPTH if self.callers else _DEPTH):
            return False
        self._open[key] = 1
        try:
            result = self._constant(expr)
        finally:
            del self._open[key]
        if not self._open and self._frame is None \
                and not (isinstance(expr, ast.Call) and self._helpers.of(expr) is not None):
            self._cache[expr] = result  # (a helper call asked about itself: an op, not its value)
        return result

    def _key(self, expr: ast.expr) -> object:
        """What a cycle is recognised by: a name by the bindings that reach it (the same value,
        met again through a loop or a caller's argument, closes the loop); others by node."""
        if isinstance(expr, ast.Name):
            stmt = self.model.statement_of(expr)
            owner = self.model.owner(stmt)
            bindings = self.model.reaching(self.model.flow(owner), expr.id, stmt)
            return (owner, expr.id, tuple(b.start for b in bindings))
        return expr

    def _all(self, exprs: List[ast.expr]) -> bool:
        return all(self.constant(e) for e in exprs)

    def _constant(self, expr: ast.expr) -> bool:
        if isinstance(expr, ast.Constant) or made_without_grad(self.model, expr):
            return True
        if self.model.kind(expr) is Kind.SCALAR:
            return True  # Python numbers and bools: no tensor at all
        if isinstance(expr, (ast.Compare, ast.BoolOp)):
            return True  # booleans never require grad
        if isinstance(expr, ast.Name):
            if self._grad_switched_on(expr):
                return False
            assumed = self._assumed(expr)
            values = bound_values(self.model, expr, self.callers, assumed=assumed)
            if values is None or expr.id in assumed and not self._handed_constant(expr):
                return False
            filled = _with_appends(self.model, expr, values)  # `outs = []`: and what is appended to it
            return filled is not None and self._all(filled) and self._all(self._written_into(expr))
        if isinstance(expr, ast.Attribute):
            if expr.attr in _SIZES or _numpy_function(self.model.qualified_names(expr)):
                return True  # (`np.pi`, `np.inf`: NumPy's own numbers)
            if expr.attr in _KEEPS:
                return self.constant(expr.value)
            if isinstance(expr.value, ast.Call) and self.model.torch_name(expr.value.func) in ("torch.finfo", "torch.iinfo"):
                return True  # `torch.finfo(q.dtype).tiny`: a Python number
            if expr.attr in ("values", "indices") and isinstance(expr.value, ast.Call) \
                    and (self.model.torch_name(expr.value.func) is not None
                         or isinstance(expr.value.func, ast.Attribute) and expr.value.func.attr in _TENSOR_METHOD_NAMES):
                # `torch.max(x, dim=1).values`, `x.max(dim=1).values`: a field of what a torch op
                # returns (indices: integers)
                return expr.attr == "indices" or self.constant(expr.value)
            if frozen_parameter(self.model, expr):
                return True  # `self.d = nn.Parameter(t, requires_grad=False)`
            return self.callers and self._constant_attribute(expr)
        if isinstance(expr, ast.Subscript):
            return self.constant(expr.value)
        if isinstance(expr, ast.BinOp):
            return self.constant(expr.left) and self.constant(expr.right)
        if isinstance(expr, ast.UnaryOp):
            return self.constant(expr.operand)
        if isinstance(expr, ast.IfExp):
            return self.constant(expr.body) and self.constant(expr.orelse)
        if isinstance(expr, (ast.List, ast.Tuple)):
            return self._all(list(expr.elts))
        if isinstance(expr, ast.Call):
            return self._constant_call(expr)
        return False

    def _constant_call(self, call: ast.Call) -> bool:
        if any(k.arg == "requires_grad" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
               for k in call.keywords):
            return False
        operands = [a for a in call.args if not isinstance(a, ast.Starred)] + [
            k.value for k in call.keywords if k.arg is not None]
        same = identity_argument(call, self.model.torch_name, self.model.qualified_names)
        if same is not None:  # `torch.jit._unwrap_optional(h)`, `typing.cast(T, h)` are `h`
            return self.constant(same)
        if _python_number(self.model.qualified_names(call.func)) or _numpy_ufunc(self.model.qualified_names(call.func)):
            return True  # `math.cos(...)`: a Python number, whatever it was handed; `np.sqrt(n)`: no grad
        name = self.model.torch_name(call.func)
        short = name.rsplit(".", 1)[-1] if name is not None else ""
        fresh = name is not None and (self.model.is_factory(call) or short in ("tensor", "from_numpy", "randint", "randperm"))
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return fresh and self.callers  # `torch.tensor(v, **dd)`: dd may hold requires_grad=True
        if _numpy_function(self.model.qualified_names(call.func)):  # `np.sqrt(2)`, of constants only: handed a
            return self._all(operands)  # tensor, some run its method (`np.squeeze(t)`), the rest refuse grad
        if name is not None or isinstance(call.func, ast.Attribute) and call.func.attr in _TENSOR_METHOD_NAMES:
            operands = [o for o in operands if not any(k.value is o and k.arg in _NO_GRAD_KEYWORDS for k in call.keywords)]
        if name is not None:
            if fresh:
                return True  # fresh, and requires grad only when asked (checked above)
            if short == "as_tensor" and call.args:
                data = call.args[0]  # a list or an array is copied (no grad); a tensor is returned
                return self.model.kind(data) not in (Kind.TENSOR, Kind.PARAMETER, Kind.UNKNOWN) \
                    or isinstance(data, (ast.List, ast.Tuple, ast.ListComp)) or self.constant(data)
            if name.startswith("torch.nn.") and short[:1].isupper():
                return False  # a module: its parameters require grad
            if short.rstrip("_") in _DETACHED_METHODS:
                return True
            if short == "where":
                operands = operands[1:]  # the condition carries no grad
            return self._all(operands)  # a torch function of constants
        func = call.func
        helper = self._helpers.of(call) if call is not self._asked else None
        if helper is not None and self._helper_constant(call, *helper):
            return True  # the value it returns (``q`` of ``q, m = helper(p.detach())``)
        if helper is None and call is not self._asked and self.model.project is not None:
            foreign = self._helpers.foreign(call)  # a method of another file (a base class there)
            must = handed_to(call, returns_constant(self.model.project, foreign[0]), foreign[1]) if foreign else None
            if must is not None and self._all(must):
                return True
        if isinstance(func, ast.Attribute) and target_key(func) is not None and self._module_call(func):
            return False
        if isinstance(func, ast.Attribute):
            method = func.attr
            if method in _DETACHED_METHODS:
                return True
            if method in RANDOM_FILLS:
                return self.constant(func.value)  # `t.new_empty(n).normal_(0, 1, generator=g)`
            if method == "rsample":
                return False
            if method in SHAPE_METHODS:
                return self.constant(func.value)  # the arguments are sizes, dims, dtypes
            if method in torch_api.OP_SAVES or method in torch_api.INPLACE_METHODS \
                    or method in _TENSOR_METHODS:
                return self.constant(func.value) and self._all(operands)
        if isinstance(func, ast.Name) and func.id in ("float", "int", "bool", "len", "range", "min", "max", "abs",
                                                      "enumerate", "zip", "reversed"):  # items of constants
            return self._all(operands)
        if self.callers and isinstance(func, ast.Name):
            returned = _module_returns(self.model, func.id)
            return bool(returned) and self._all(returned)
        return False

    def _helper_constant(self, call: ast.Call, func: Function, receiver: Optional[str]) -> bool:
        """A call of a helper of the file (``helper_returns``): constant when every ``return`` of
        the helper is, its parameters read as what this call hands them (judged here, in the
        caller), a default where it hands nothing (a literal only), its receiver never constant
        (``self.w``)."""
        if func in self._reading or len(self._reading) >= _HELPERS_DEPTH:
            return False  # a recursive helper, or too deep: unknown
        returns = [n for n in self.model.walk(func) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
                   and self.model.owner(n) is func]
        handed = _handed(call, func, receiver)
        if handed is None or any(not isinstance(n, ast.Return) for n in returns):
            return False  # what reaches a parameter is not plain, or a generator
        outer = (self._open, self._frame)
        self._open, self._frame = {}, _Frame(func, handed, outer)
        self._reading.add(func)
        try:
            return all(n.value is None or self.constant(n.value) for n in returns)
        finally:
            self._open, self._frame = outer
            self._reading.discard(func)

    def returns_constant(self, func: Function, receiver: Optional[str]) -> Optional[List[Tuple[str, str, bool]]]:
        """Whether every value ``func`` returns is constant where what it is handed for some of
        its parameters is (its ``receiver`` never: ``self.w``; each default a literal), for
        another file's call, which judges what it hands (``FunctionFact.constant_returns``):
        (kind, name, whether it must be constant) per parameter but the receiver, in order
        (kind: ``o`` positional-only, ``p`` positional or keyword, ``*``, ``k`` keyword-only,
        ``**``); None where not so whatever it is handed."""
        params = _signature(func, receiver)
        returns = [n for n in self.model.walk(func) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
                   and self.model.owner(n) is func]
        if params is None or not returns or any(not isinstance(n, ast.Return) or n.value is None for n in returns) \
                or not self._returned_constant(func, returns, {name: [] for _, name in params}):
            return None
        return [(kind, name, not self._returned_constant(func, returns, {n: None if n == name else [] for _, n in params}))
                for kind, name in params]

    def _returned_constant(self, func: Function, returns: Sequence[ast.AST],
                           handed: Dict[str, Optional[List[ast.expr]]]) -> bool:
        outer = (self._open, self._frame)
        self._open, self._frame = {}, _Frame(func, handed, outer)
        self._reading.add(func)
        try:
            return all(isinstance(n, ast.Return) and n.value is not None and self.constant(n.value) for n in returns)
        finally:
            self._open, self._frame = outer
            self._reading.discard(func)

    def _assumed(self, name: ast.Name) -> Collection[str]:
        """The parameters of the helper being read, where ``name`` is read in it (their values
        are what the call hands over: ``_handed_constant``)."""
        if self._frame is None or self.model.owner(self.model.statement_of(name)) is not self._frame.func:
            return ()
        return self._frame.handed.keys()

    def _handed_constant(self, name: ast.Name) -> bool:
        """Where a parameter's own binding reaches ``name`` in the helper being read: what the
        call hands it is constant, judged where the call is."""
        frame = self._frame
        assert frame is not None
        stmt = self.model.statement_of(name)
        bindings = self.model.reaching(self.model.flow(self.model.owner(stmt)), name.id, stmt)
        if not any(b.form == "param" for b in bindings):
            return True
        inner = (self._open, self._frame)
        self._open, self._frame = frame.outer
        try:
            handed = frame.handed[name.id]
            return handed is not None and self._all(handed)
        finally:
            self._open, self._frame = inner

    def _constant_attribute(self, attr: ast.Attribute) -> bool:
        """``self.betas``: every value the class assigns to it (or registers it as a buffer) is
        constant (callers mode: code outside the class may still set it)."""
        values = _attribute_values(self.model, attr)
        if values is None:
            values = _held_property_returns(self.model, attr)
        return values is not None and all(self.constant(v) for v in values)

    def _written_into(self, name: ast.Name) -> List[ast.expr]:
        """What the function writes into ``name``'s tensor in place anywhere (``name[i] = v``,
        ``name[i] += v``, ``name.add_(v)``): a constant filled with a value that requires grad
        requires grad from then on."""
        owner = self.model.owner(self.model.statement_of(name))
        key = (owner, name.id)
        found = self._writes.get(key)
        if found is None:
            found = []
            for node in self.model.walk(owner):
                if isinstance(node, ast.Assign) and any(_base_name(t) == name.id for t in node.targets
                                                         if isinstance(t, ast.Subscript)):
                    found.append(node.value)
                elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Subscript) \
                        and _base_name(node.target) == name.id:
                    found.append(node.value)
                elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                        and node.func.attr.endswith("_") and _base_name(node.func.value) == name.id:
                    index = _VALUE_ARGUMENT.get(node.func.attr)
                    args = [a for a in node.args if not isinstance(a, ast.Starred)]
                    if index is None:
                        found.extend(args)
                    elif index < len(args):
                        found.append(args[index])  # scatter_(dim, index, src): only src carries grad
                    found.extend(k.value for k in node.keywords if k.arg not in ("dim", "index", "mask"))
            self._writes[key] = found
        return found

    def _grad_switched_on(self, name: ast.Name) -> bool:
        """Is ``name``'s tensor made to require grad after it was built, before this use (or in a
        loop around both)? ``w.requires_grad = True``, ``w.requires_grad_()``, and ``w`` handed to
        a ``torch.optim`` optimizer all say so, whatever the constructor said."""
        stmt = self.model.statement_of(name)
        owner = self.model.owner(stmt)
        switches = self._switches.get(owner)
        if switches is None:  # one walk per function (or module) for all its names
            switches = {}
            for node in self.model.walk(owner):
                if isinstance(node, ast.stmt) and self.model.owner(node) is owner:
                    for switched in _switched_names(node, self.model):
                        switches.setdefault(switched, []).append(node.lineno)
            self._switches[owner] = switches
        found = switches.get(name.id)
        if not found:
            return False
        loops = self.model.flow(owner).loops
        return any(line < stmt.lineno or any(start[0] <= line <= end[0] and start[0] <= stmt.lineno <= end[0]
                                             for start, end in loops) for line in found)

    def _module_call(self, func: ast.Attribute) -> bool:
        """``self.fc(x)``: an attribute called, not a method of a tensor."""
        return isinstance(func.value, ast.Name) and func.value.id == "self"


# Torch ops whose result is a new tensor, never the input or a view of it (``OP_SAVES``'s and the
# measured table's ops but views, ops that may hand their input back, dropout in eval mode, modules;
# ``einsum("ij->ji", x)`` is a view of ``x``: checked with torch by tests/test_nograd54_groups.py).
_FRESH_OPS = frozenset(
    op for op in (*torch_api.OP_SAVES, *torch_api.OP_SAVES_MEASURED)
    if "." not in op and not op.endswith("_") and "dropout" not in op and op not in ("detach", "clone", "einsum")
    and op not in (*torch_api.VIEW_METHODS_ALWAYS, *torch_api.VIEW_METHODS_SOMETIMES, *torch_api.MULTI_VIEW_METHODS)
    and op not in torch_api.RETURNS_INPUT_METHODS and f"torch.{op}" not in torch_api.RETURNS_INPUT_FUNCTIONS)


def made_without_grad(model: RequiresGradFacts, expr: ast.expr) -> bool:
    """``expr`` makes a new tensor (:func:`makes_fresh`) where torch's ``no_grad`` (or
    ``set_grad_enabled(False)``) is on (``grad_mode.GradMode.records_nothing``): autograd records nothing,
    so the result requires no grad, whatever its operands do (``with torch.no_grad(): y = x.exp()``)."""
    return makes_fresh(model, expr) and model.grad.records_nothing(expr)


def makes_fresh(model: RequiresGradFacts, expr: ast.expr) -> bool:
    """``expr`` makes a new tensor no other value shares: a torch op of ``_FRESH_OPS`` or an
    operator on tensors; not a view (``x[:2]``, ``x.view(...)``: it shares the version counter of a
    tensor that may require grad, and torch refuses a write into it with grad on), nor a call of the
    project (it may hand back a tensor made elsewhere)."""
    if isinstance(expr, (ast.BinOp, ast.UnaryOp)):
        if not (isinstance(expr, ast.BinOp) or isinstance(expr.op, (ast.USub, ast.Invert))) \
                or model.kind(expr) not in TENSORISH:
            return False
    elif isinstance(expr, ast.Call):
        if any(k.arg == "out" for k in expr.keywords) \
                or identity_argument(expr, model.torch_name, model.qualified_names) is not None:
            return False  # `out=` writes into a tensor made elsewhere
        name = model.torch_name(expr.func)
        if name is not None:
            short = name.rsplit(".", 1)[-1] if name.count(".") == 1 or name.startswith("torch.nn.functional.") else ""
        else:
            short = expr.func.attr if isinstance(expr.func, ast.Attribute) else ""
        if short not in _FRESH_OPS:
            return False
    else:
        return False
    return True


def _module_returns(model: RequiresGradFacts, name: str) -> List[ast.expr]:
    """What the module-level function ``name`` returns (``Constants`` in callers mode), [] when unknown."""
    func = next((s for s in model.module.body if isinstance(s, FUNCTIONS) and s.name == name), None)
    if func is None:
        return []
    found = [n.value for n in model.walk(func) if isinstance(n, ast.Return) and model.owner(n) is func]
    return [v for v in found if v is not None] if all(v is not None for v in found) else []


def _switched_names(stmt: ast.stmt, model: RequiresGradFacts) -> List[str]:
    """The names this statement (not its nested statements) makes require grad:
    ``name.requires_grad = <not False>``, ``name.requires_grad_(<not False>)``,
    ``torch.optim.X([..., name, ...])``."""
    found: List[str] = []
    if isinstance(stmt, ast.Assign) and not (isinstance(stmt.value, ast.Constant) and stmt.value.value is False):
        found += [t.value.id for t in stmt.targets
                  if isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name)]
    if not isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return found
    for node in ast.walk(stmt.value):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and isinstance(func.value, ast.Name):
            off = node.args[:1] or [k.value for k in node.keywords if k.arg == "requires_grad"]
            if not (off and isinstance(off[0], ast.Constant) and off[0].value is False):
                found.append(func.value.id)
        op = model.torch_name(func)
        if op is not None and op.startswith("torch.optim.") and op.rsplit(".", 1)[-1][:1].isupper():
            handed = [a for a in node.args[:1]] + [k.value for k in node.keywords if k.arg == "params"]
            found += [n.id for h in handed for n in ast.walk(h) if isinstance(n, ast.Name)]
    return found


# In-place methods with index arguments: which positional argument is the written value.
_VALUE_ARGUMENT = {
    "scatter_": 2, "scatter_add_": 2, "scatter_reduce_": 2, "index_fill_": 2, "index_copy_": 2,
    "index_add_": 2, "masked_fill_": 1, "masked_scatter_": 1, "index_put_": 1, "put_": 1,
}


def _literal(expr: ast.expr) -> bool:
    """A default that is a Python literal: ``None``, ``0.5``, ``"mean"``, ``-1``, ``(1, 2)``."""
    if isinstance(expr, ast.UnaryOp):
        return _literal(expr.operand)
    if isinstance(expr, ast.Tuple):
        return all(_literal(e) for e in expr.elts)
    return isinstance(expr, ast.Constant)


def _base_name(expr: ast.expr) -> Optional[str]:
    """``x`` of ``x``, ``x[i]``, ``x[i][j]``, ``x[i].view(...)``."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else None


# Keywords of torch functions and tensor methods that take sizes, dims, flags or dtypes: what
# they are handed never makes the result require grad (``p.mean(dim=dim, keepdim=True)``).
_NO_GRAD_KEYWORDS = frozenset({"dim", "keepdim", "dtype", "device", "layout", "memory_format", "unbiased",
                               "correction", "non_blocking", "copy", "pin_memory"})


def _signature(func: Function, receiver: Optional[str]) -> Optional[List[Tuple[str, str]]]:
    """(kind, name) of ``func``'s parameters but ``receiver`` (``Constants.returns_constant``);
    None where a default is no literal or the receiver is not the first parameter."""
    args = func.args
    if not all(_literal(d) for d in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]):
        return None
    params = [("o", a.arg) for a in args.posonlyargs] + [("p", a.arg) for a in args.args]
    params += [("*", args.vararg.arg)] if args.vararg is not None else []
    params += [("k", a.arg) for a in args.kwonlyargs] + ([("**", args.kwarg.arg)] if args.kwarg is not None else [])
    if receiver is None:
        return params
    return params[1:] if params and params[0][1] == receiver else None


def handed_to(call: ast.Call, signature: Optional[Tuple[str, ...]], receiver: bool) -> Optional[List[ast.expr]]:
    """What ``call`` hands the parameters of a function of another file whose returns are
    constant where those are (``FunctionFact.constant_returns``: ``kind:name:0|1`` per parameter,
    the first entry ``static``, ``class`` (a classmethod: its receiver bound by the class too) or
    ``bound``); ``receiver``: the call names a class, not an instance (``C.m(obj, x)``: the
    first argument is a plain method's receiver). None where not known."""
    if not signature or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    kind, *entries = signature
    params = [tuple(e.split(":")) for e in entries]
    args = list(call.args)
    if receiver and kind == "bound":
        if not args:
            return None
        args = args[1:]
    positional = [(n, m) for k, n, m in params if k in ("o", "p")]
    rest = next((m for k, n, m in params if k == "*"), None)
    extra = next((m for k, n, m in params if k == "**"), None)
    by_keyword = {n: m for k, n, m in params if k in ("p", "k")}
    must = []
    for i, arg in enumerate(args):
        matters = positional[i][1] if i < len(positional) else rest
        if matters is None:
            return None
        if matters == "1":
            must.append(arg)
    for keyword in call.keywords:
        matters = by_keyword.get(keyword.arg or "", extra)
        if matters is None:
            return None
        if matters == "1":
            must.append(keyword.value)
    return must


# Tensor methods whose result requires grad only when the receiver or an operand does.
_TENSOR_METHODS = frozenset({
    "to", "float", "double", "half", "bfloat16", "type", "type_as", "clone", "contiguous", "cpu",
    "cuda", "view", "view_as", "reshape", "reshape_as", "expand", "expand_as", "repeat",
    "repeat_interleave", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t",
    "narrow", "select", "index_select", "gather", "masked_fill", "flip", "roll", "chunk", "split",
    "unbind", "cumprod", "cumsum", "clamp", "clamp_min", "clamp_max", "clip", "pow", "sqrt", "exp",
    "log", "mul", "div", "add", "sub", "sum", "mean", "prod", "tile", "diag", "diag_embed",
    "tril", "triu", "abs", "neg", "reciprocal", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid",
    "softmax", "log_softmax", "norm", "max", "min", "amax", "amin", "std", "var", "where",
    "lerp", "addcmul", "addcdiv", "matmul", "mm", "bmm", "fill_", "zero_", "copy_",
})
# Tensor methods whose arguments are sizes, dims or dtypes: the result requires grad when the
# receiver does.
SHAPE_METHODS = frozenset({
    "gather", "index_select", "take", "topk", "view", "reshape", "expand", "repeat", "permute", "transpose", "flatten", "unflatten", "squeeze",
    "expand_as", "view_as", "reshape_as", "type_as",  # the argument gives a shape or a dtype only (measured)
    "unsqueeze", "narrow", "select", "chunk", "split", "unbind", "roll", "flip", "to", "type", "tile",
    "float", "double", "half", "bfloat16", "cpu", "cuda", "contiguous", "clone", "t", "sum", "mean",
    "cumsum", "cumprod", "softmax", "log_softmax", "norm", "amax", "amin", "std", "var", "tril", "triu",
    "diag", "diag_embed", "repeat_interleave", "movedim", "swapaxes", "sqrt", "exp", "log", "abs",
    "neg", "reciprocal", "rsqrt", "sigmoid", "tanh", "sin", "cos",
})


# The operands of index and scatter ops that carry no gradient (measured: an integer index, a
# dim, a mask, a reduction's name), by the parameter names of the function form; the receiver of
# a method is its first parameter. What an op computes is differentiable in the others only.
_INDEXED_PARAMS: Dict[str, Tuple[str, ...]] = {
    "scatter": ("input", "dim", "index", "src"),
    "scatter_add": ("input", "dim", "index", "src"),
    "scatter_reduce": ("input", "dim", "index", "src", "reduce"),
    "gather": ("input", "dim", "index"),
    "index_select": ("input", "dim", "index"),
    "index_add": ("input", "dim", "index", "source"),
    "index_copy": ("input", "dim", "index", "source"),
    "index_fill": ("input", "dim", "index", "value"),
    "index_reduce": ("input", "dim", "index", "source", "reduce"),
    "take": ("input", "index"),
    "take_along_dim": ("input", "indices", "dim"),
    "put": ("input", "index", "source"),
    "index_put": ("input", "indices", "values"),
    "masked_fill": ("input", "mask", "value"),
    "masked_scatter": ("input", "mask", "source"),
    "masked_select": ("input", "mask"),
}
_NO_GRADIENT = frozenset({"dim", "index", "indices", "mask", "reduce", "include_self"})


def differentiable_operands(call: ast.Call, short: str, method: bool) -> Optional[List[ast.expr]]:
    """The operands of the index or scatter op ``call`` runs (``short``: its bare name, a method's
    in-place form too; ``method``: the receiver is its first operand) that may carry a gradient:
    every one but the dim, the index, the mask and the reduction. None for any other op, or where
    an unpacked argument hides which operand is which."""
    params = _INDEXED_PARAMS.get(short[:-1] if method and short.endswith("_") else short)
    if params is None or any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if method:
        if not isinstance(call.func, ast.Attribute):
            return None
        found = [call.func.value]
        params = params[1:]
    else:
        found = []
    found += [a for a, p in zip(call.args, params) if p not in _NO_GRADIENT]
    found += call.args[len(params):]
    found += [k.value for k in call.keywords if k.arg not in _NO_GRADIENT]
    return found


def _switched_off(stmt: ast.stmt, attr: str) -> bool:
    """``stmt`` is ``self.<attr>.requires_grad_(False)`` or ``self.<attr>.requires_grad = False``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func, flags = stmt.value.func, stmt.value.args[:1] + [k.value for k in stmt.value.keywords]
        return isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and len(flags) == 1 \
            and is_const(flags[0], False) and target_key(func.value) == f"self.{attr}"
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and is_const(stmt.value, False) \
        and isinstance(stmt.targets[0], ast.Attribute) and stmt.targets[0].attr == "requires_grad" \
        and target_key(stmt.targets[0].value) == f"self.{attr}"


def _may_switch_on(model: Facts) -> bool:
    """The module may turn some requires_grad on: ``x.requires_grad_()``, ``m.requires_grad_(flag)``,
    ``p.requires_grad = True`` (anything but a literal ``False``)."""
    for node in model.attribute_writes("requires_grad"):
        stmt = model.parent(node)
        if not (isinstance(stmt, ast.Assign) and is_const(stmt.value, False)):
            return True
    for calls in model.calls_in(model.module).values():
        for call in calls:
            if isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_":
                flags = call.args[:1] + [k.value for k in call.keywords if k.arg == "requires_grad"]
                if not flags or not is_const(flags[0], False):
                    return True
    return False


def frozen_parameter(model: Facts, attr: ast.expr) -> bool:
    """``self.d`` where every value its class gives it is an ``nn.Parameter`` built to require no
    grad (``nn.Parameter(t, requires_grad=False)``, ``nn.Parameter(t, False)``) or switched off
    in the statements right after, in its block (``self.d.requires_grad_(False)``,
    ``self.d.requires_grad = False``), in a module that switches no requires_grad on anywhere
    (``p.requires_grad_()``, ``model.requires_grad_(True)``, ``x.requires_grad = flag``): autograd
    records nothing for it, so nothing is saved for its gradient."""
    if not (isinstance(attr, ast.Attribute) and isinstance(attr.value, ast.Name) and attr.value.id == "self"):
        return False
    cls = model.enclosing_class(attr)
    values = model.class_attrs(cls).get(attr.attr, []) if cls is not None else []
    if not values or _may_switch_on(model):
        return False

    def frozen(value: object) -> bool:
        if not (isinstance(value, ast.Call) and model.torch_name(value.func) in PARAMETER_CLASSES):
            return False
        flags = [k.value for k in value.keywords if k.arg == "requires_grad"] + list(value.args[1:2])
        if flags and all(is_const(f, False) for f in flags):
            return True
        stmt = model.statement_of(value)
        parent = model.parent(stmt)
        block = next((b for b in statement_lists(parent) if stmt in b), []) if parent is not None else []
        later = block[[id(s) for s in block].index(id(stmt)) + 1:] if block else []
        return any(_switched_off(s, attr.attr) for s in later)

    return all(frozen(v) for v in values)


class FrozenFacts(Protocol):
    """What :func:`may_be_frozen` reads: the module's tree, its calls, the attributes it sets."""

    @property
    def module(self) -> ast.Module: ...

    def parent(self, node: ast.AST) -> Optional[ast.AST]: ...

    def attribute_writes(self, attr: str) -> List[ast.expr]: ...

    def calls_in(self, scope: ast.AST) -> CallTable: ...


def may_be_frozen(model: FrozenFacts, module: ast.expr, replaced: bool = True) -> bool:
    """``self.embedding`` (a module called) may have parameters that do not require grad: the
    file switches ``requires_grad`` off (``x.requires_grad = False``, ``x.requires_grad_(False)``,
    or to a value it cannot tell) on something whose attribute chain names a part of the
    module's (``self.embedding.weight``, ``self.ae``) or on a bare name (``p`` of a loop over
    ``parameters()``, ``model``, ``self``), or replaces such a chain's ``weight`` / ``bias``.
    Then autograd may record nothing for the call (Embedding's indices never require grad).
    ``replaced`` False: switches only (of a parameter ``self.w``, which its own setting replaces)."""
    key = target_key(module)
    parts = set(key.split(".")[1:] if key is not None and key.startswith("self.") else (key or "").split("."))
    if not parts - {""}:
        return False

    def names_part(chain: ast.expr) -> bool:
        if isinstance(chain, ast.Name):
            return True  # `p` of `for p in m.parameters()`, `model`, `self`: what it holds is not followed
        while isinstance(chain, ast.Attribute):
            if chain.attr in parts:
                return True
            chain = chain.value
        return False

    for node in model.attribute_writes("requires_grad"):
        stmt = model.parent(node)
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(node, ast.Attribute) and not (isinstance(value, ast.Constant) and value.value is True) \
                and names_part(node.value):
            return True
    for attr in ("weight", "bias") if replaced else ():
        if any(isinstance(n, ast.Attribute) and names_part(n.value) for n in model.attribute_writes(attr)):
            return True
    for callee, calls in model.calls_in(model.module).items():
        for call in calls:
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "requires_grad_"):
                continue
            on = call.args[:1] or [k.value for k in call.keywords if k.arg == "requires_grad"]
            if not on or isinstance(on[0], ast.Constant) and on[0].value is True:
                continue  # switched on
            if names_part(func.value):
                return True
    return False


def switches_on(stmt: ast.stmt, name: str) -> bool:
    """``name.requires_grad_()`` / ``name.requires_grad_(True)`` as a statement of its own or as
    the whole value of an assignment (``cfg.adj = name.requires_grad_(True)``: the method returns
    the tensor it switched), or ``name.requires_grad = True``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and is_const(stmt.value, True):
        target = stmt.targets[0]
        return isinstance(target, ast.Attribute) and target.attr == "requires_grad" \
            and isinstance(target.value, ast.Name) and target.value.id == name
    if isinstance(stmt, (ast.Expr, ast.Assign)) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        func = call.func
        on = call.args[:1] or [k.value for k in call.keywords if k.arg == "requires_grad"]
        return isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and isinstance(func.value, ast.Name) \
            and func.value.id == name and (not on or is_const(on[0], True))
    return False


def switched_on_between(tree: Tree, name: str, bound: Located, stmt: Located) -> Optional[ast.stmt]:
    """The statement that makes ``name``'s tensor require grad after ``bound`` bound it and
    before ``stmt``, on every way from one to the other (``w.requires_grad_()``,
    ``w.requires_grad = True`` in a block around ``stmt``, of the same function): from there
    on, until ``name`` is bound again, its tensor requires grad."""
    return next((s for s in on_every_way_between(tree, bound, stmt) if switches_on(s, name)), None)


def on_every_way_between(tree: Tree, bound: Located, stmt: Located) -> List[ast.stmt]:
    """The statements of ``stmt``'s function that run after ``bound`` and before ``stmt`` on every
    way from one to the other: those after ``bound``'s line in a block around ``stmt`` (or
    holding it), before it there."""
    start = getattr(bound, "end_lineno", None) or getattr(bound, "lineno", 0)
    end = getattr(stmt, "lineno", 0)
    owner = tree.owner(stmt)
    found: List[ast.stmt] = []
    enclosing = [a for a in tree.ancestors(stmt) if not isinstance(a, OWNERS)]
    for anc in [stmt, *enclosing]:
        parent = tree.parent(anc)
        for field in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(parent, field, None)
            if not isinstance(block, list) or anc not in block:
                continue
            found.extend(earlier for earlier in block[:block.index(anc)]
                         if start < earlier.lineno < end and tree.owner(earlier) is owner)
        if isinstance(anc, OWNERS):
            break
    return found


# In-place methods whose result is differentiable in every tensor operand they take (an index,
# a mask never requires grad): after ``t.copy_(v)`` with grad on, ``t`` requires grad where ``v`` does
_WRITING_METHODS = frozenset({"copy_", "add_", "sub_", "mul_", "div_", "index_copy_", "index_add_",
                              "masked_scatter_", "scatter_add_", "addcmul_", "addcdiv_"})


def written_into(stmt: ast.stmt, name: str) -> List[ast.expr]:
    """What ``stmt`` writes in place into ``name``'s tensor itself: ``name[i] = v`` and
    ``name[i] += v`` give ``v``, ``name.copy_(v)`` (and the other :data:`_WRITING_METHODS`) its
    operands; nothing for any other statement (``name[i][j] = v`` may write into a copy)."""
    if isinstance(stmt, (ast.Assign, ast.AugAssign)):
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else \
            stmt.target if isinstance(stmt, ast.AugAssign) else None
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and target.value.id == name:
            return [stmt.value]
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _WRITING_METHODS \
            and isinstance(call.func.value, ast.Name) and call.func.value.id == name \
            and not any(isinstance(a, ast.Starred) for a in call.args) and all(k.arg for k in call.keywords):
        return [*call.args, *(k.value for k in call.keywords)]
    return []


# The methods whose operands ``Constants`` reads (their size and dim keywords left out: ``_NO_GRAD_KEYWORDS``)
_TENSOR_METHOD_NAMES: FrozenSet[str] = frozenset(torch_api.OP_SAVES) | frozenset(torch_api.INPLACE_METHODS) | _TENSOR_METHODS

# numpy ufuncs: each reads a tensor through ``__array__``, which refuses one that requires grad
# (measured, torch 2.13: "Can't call numpy() on Tensor that requires grad"), so what one returns never
# requires grad. Not numpy's other functions: ``np.squeeze(t)`` calls ``t.squeeze()`` and hands back a
# tensor that does.
_NUMPY_UFUNCS = frozenset({
    "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "arctan2", "sinh", "cosh", "tanh", "abs", "absolute", "power", "maximum", "minimum", "floor", "ceil", "square",
    "sign", "reciprocal", "hypot", "fmax", "fmin", "rint", "trunc", "cbrt", "deg2rad", "rad2deg", "radians",
    "degrees", "exp2", "float_power", "fabs", "negative", "multiply", "divide", "true_divide", "add", "subtract",
    "floor_divide", "mod", "remainder",
})


def _numpy_ufunc(qualified: Collection[str]) -> bool:
    """A call of one of numpy's ufuncs (:data:`_NUMPY_UFUNCS`): its result never requires grad."""
    return bool(qualified) and all(q.startswith("numpy.") and q[6:] in _NUMPY_UFUNCS for q in qualified)


def _python_number(qualified: Collection[str]) -> bool:
    """A call of the standard ``math`` module's function that returns a Python number (not
    ``math.prod``/``math.sumprod``: :data:`_MATH_KEEPS`)."""
    return bool(qualified) and all(q.startswith("math.") and q.count(".") == 1 and q[5:] not in _MATH_KEEPS
                                   for q in qualified)


def _numpy_function(qualified: Collection[str]) -> bool:
    """A name of NumPy's (``np.sqrt``, ``numpy.linalg.norm``, ``np.pi``)."""
    return bool(qualified) and all(q.startswith("numpy.") for q in qualified)


def _attribute_values(model: RequiresGradFacts, attr: ast.Attribute) -> Optional[List[ast.expr]]:
    """Every value the class of ``self.<attr>`` assigns to it, with the tensor it hands
    ``self.register_buffer("<attr>", tensor)``; None: not ``self``'s, or a value not an expression."""
    if not (isinstance(attr.value, ast.Name) and attr.value.id == "self"):
        return None
    cls = model.enclosing_class(attr)
    if cls is None:
        return None
    values = list(model.class_attrs(cls).get(attr.attr, []))
    registered = _registered(model, cls, attr.attr)
    exprs = [v for v in values if isinstance(v, ast.expr)]
    others = len(values) - len(exprs)
    if registered is not None and others == len(registered):
        exprs, others = exprs + registered, 0  # the buffers' tensors (no `register_parameter`)
    return exprs if exprs and not others else None


def _held_property_returns(model: RequiresGradFacts, attr: ast.Attribute) -> Optional[List[ast.expr]]:
    """``self.profile.z`` where the class assigns ``self.profile`` only instances of one top-level
    class of the file (``Profile()``) that defines ``z`` as a ``@property``: the values its returns
    hand back; None otherwise (a method, an attribute, a class another file defines or the file binds
    twice, a return not seen). (Callers mode: what the file shows; code elsewhere may set either.)"""
    holder = attr.value
    if not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name) and holder.value.id == "self"):
        return None
    cls = model.enclosing_class(attr)
    values = model.class_attrs(cls).get(holder.attr, []) if cls is not None else []
    names = {v.func.id for v in values if isinstance(v, ast.Call) and isinstance(v.func, ast.Name)}
    if not values or len(names) != 1 or any(not isinstance(v, ast.Call) for v in values):
        return None
    name = names.pop()
    bound = [s for s in model.module.body if isinstance(s, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
             and s.name == name or isinstance(s, (ast.Import, ast.ImportFrom))
             and any((a.asname or a.name.split(".")[0]) == name for a in s.names)]
    if len(bound) != 1 or not isinstance(bound[0], ast.ClassDef):
        return None
    found = [f for f in bound[0].body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == attr.attr]
    if len(found) != 1 or not (len(found[0].decorator_list) == 1 and isinstance(found[0].decorator_list[0], ast.Name)
                               and found[0].decorator_list[0].id == "property"):
        return None
    returns = [n for n in model.walk(found[0]) if isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom))
               and model.owner(n) is found[0]]
    if not returns or any(not isinstance(r, ast.Return) or r.value is None for r in returns):
        return None
    return [cast(ast.expr, cast(ast.Return, r).value) for r in returns]


def _registered(model: RequiresGradFacts, cls: ast.ClassDef, attr: str) -> Optional[List[ast.expr]]:
    """The tensors ``cls`` hands ``self.register_buffer("<attr>", tensor)`` (None: one of its
    registrations of a buffer is not plain: a name not a literal, a spread, no tensor given)."""
    found: List[ast.expr] = []
    for call in model.calls_in(cls).get("self.register_buffer", []):
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        first = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "name"), None)
        if not (isinstance(first, ast.Constant) and isinstance(first.value, str)):
            return None
        if first.value != attr:
            continue
        tensor = call.args[1] if len(call.args) >= 2 else next((k.value for k in call.keywords if k.arg == "tensor"), None)
        if tensor is None:
            return None
        found.append(tensor)
    return found
