"""Grad mode: is autograd recording where an in-place op runs, and is the op meant to be in
place (grad off, ``.data``/``.grad``, optimizer code, registered buffers)?"""

from __future__ import annotations

import ast
from typing import Dict, FrozenSet, List, Literal, NamedTuple, Optional, Set, Tuple, Union, cast

from codemod import torch_api
from codemod.analysis.calls import Calls
from codemod.analysis.classes import Classes
from codemod.analysis.names import Names
from codemod.analysis.syntax import (
    FUNCTIONS,
    Function,
    Located,
    first_arg,
    is_const,
    subscript_base,
    target_key,
)
from codemod.analysis.tree import Tree

_GRAD_OFF_CONTEXTS = {
    "torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
    "torch.inference_mode", "torch.autograd.grad_mode.inference_mode",
}
_GRAD_SET = {"torch.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
_GRAD_ON_CONTEXTS = {"torch.enable_grad", "torch.autograd.grad_mode.enable_grad"}
# The last names of torch's grad-off contexts: ``torch.no_grad()`` on a ``torch`` the file does not
# bind to the module (a parameter: the caller hands the module in), ``backend.no_grad()``, a
# ``no_grad`` imported from elsewhere. What it does is not seen; the name says grad off.
_GRAD_OFF_LAST = {"no_grad", "inference_mode"}

IntendedReason = Literal[
    "no-grad", "data-or-grad", "optimizer", "buffer", "grad-guard", "no-grad-callers", "autograd-function",
    "grad-unseen",
]


class GradMode:
    """Answers from the code around a node: decorators, with-statements, the class."""

    def __init__(self, tree: Tree, names: Names, classes: Classes, calls: Optional[Calls] = None) -> None:
        self.tree = tree
        self.names = names
        self.classes = classes
        self.calls = calls  # why a function runs with grad off as a whole (its callers, kernels)
        # What a with-statement does to grad, and what a function's decorators and class say:
        # asked for every node under them, answered once each.
        self._with_states: Dict[ast.AST, Optional[bool]] = {}
        self._unseen: Dict[ast.AST, bool] = {}  # with-statement -> `unseen_grad_off`
        self._declared: Dict[ast.AST, Optional[IntendedReason]] = {}
        self._off: Optional[Tuple[Optional[int], bool]] = None  # see `module_off`
        self._guards: Dict[Tuple[ast.AST, ast.AST], bool] = {}  # (if, statement in it) -> `_guarded`
        self._optimizers: Dict[ast.AST, bool] = {}  # class -> `_is_optimizer`

    def intended_reason(self, node: ast.AST, target: Optional[ast.expr]) -> Optional[IntendedReason]:
        """Why an in-place op at ``node`` on ``target`` is meant to be in place, if it is."""
        if target is not None and self._through_data_or_grad(target):
            return "data-or-grad"
        return self._grad_context_reason(node) or (
            "buffer" if target is not None and self._is_buffer(target) else None
        )

    def _is_buffer(self, target: ast.expr) -> bool:
        """``self.running_mean`` where the class registers it with ``register_buffer``."""
        target = subscript_base(target)
        if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
            return False
        cls = self.tree.enclosing_class(target)
        return cls is not None and target.attr in self.classes.class_buffers(cls)

    def _grad_context_reason(self, node: ast.AST, follow_calls: bool = True) -> Optional[IntendedReason]:
        """Grad off around ``node``: a with-statement, a guard, the function's decorators, an
        optimizer's method; with ``follow_calls``, also the function as a whole (its callers,
        custom autograd kernels: ``function_reason``)."""
        child = node
        for anc in self.tree.ancestors(node):
            if isinstance(anc, (ast.With, ast.AsyncWith)):
                if anc not in self._with_states:
                    self._with_states[anc] = self.with_grad_state(anc)
                state = self._with_states[anc]
                if state is not None:
                    return None if state else "no-grad"
                if self.unseen_grad_off(anc):
                    return "grad-unseen"
            elif isinstance(anc, ast.If):
                guarded = self._guards.get((anc, child))
                if guarded is None:  # (asked for every node under the statement)
                    guarded = self._guards[(anc, child)] = self._guarded(anc, child)
                if guarded:
                    return "grad-guard"
            elif isinstance(anc, FUNCTIONS):
                if anc not in self._declared:
                    self._declared[anc] = self._declared_reason(anc)
                declared = self._declared[anc]
                if declared is not None:
                    return declared
                if self.module_off()[1]:
                    return "no-grad"
                if follow_calls and self.calls is not None:
                    return self.calls.function_reason(anc, self.local_reason)
                return None
            child = anc
        off = self.module_off()[0]
        if off is not None and getattr(node, "lineno", 0) > off:
            return "no-grad"  # module-level code after `torch.set_grad_enabled(False)`
        return None

    def module_off(self) -> Tuple[Optional[int], bool]:
        """``torch.set_grad_enabled(False)`` as a statement of the module itself, where the file
        turns grad on nowhere (no other ``set_grad_enabled``, no ``enable_grad``): its line (the
        module's code after it runs with grad off), and whether it comes before any statement
        of the module that runs code (then every function runs with grad off too)."""
        if self._off is None:
            self._off = (None, False)
            module = self.tree.module
            found = [s for s in module.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
                     and self.names.torch_name(s.value.func) in _GRAD_SET and self._false_arg(s.value)]
            if found:
                others = [c for key, calls in self.classes.calls_in(module).items() for c in calls
                          if self.names.torch_name(c.func) in (_GRAD_SET | _GRAD_ON_CONTEXTS)
                          and not any(c is s.value for s in found)]
                used = any(self.names.torch_name(n) in _GRAD_ON_CONTEXTS | _GRAD_SET
                           for n in self.tree.walk(module) if isinstance(n, ast.Attribute)
                           and not isinstance(self.tree.parent(n), ast.Call))
                if not others and not used:
                    first = found[0]
                    before = module.body[:module.body.index(first)]
                    quiet = all(isinstance(s, (ast.Import, ast.ImportFrom, *FUNCTIONS, ast.ClassDef))
                                or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) for s in before)
                    self._off = (first.lineno, quiet)
        return self._off

    def _declared_reason(self, func: Function) -> Optional[IntendedReason]:
        """Grad off for the whole of ``func`` by its decorators, or its class being an optimizer."""
        for expr in func.decorator_list:
            callee = expr.func if isinstance(expr, ast.Call) else expr
            name = self.names.torch_name(callee)
            if name in _GRAD_OFF_CONTEXTS or (
                name in _GRAD_SET and isinstance(expr, ast.Call) and self._false_arg(expr)
            ):
                return "no-grad"
            if self._project_decorator_off(expr):
                return "no-grad"
        cls = self.tree.enclosing_class(func)
        if cls is not None and self._is_optimizer(cls):
            return "optimizer"
        return None

    def _project_decorator_off(self, expr: ast.expr) -> bool:
        """``@inference_only()`` / ``@no_grad_wrapper``: a decorator (factory) of this file, or
        one of the project imported by name, that runs what it decorates with grad off
        (:class:`GradOffDecorators`; the project index has other files' answers)."""
        call = expr if isinstance(expr, ast.Call) else None
        callee = call.func if call is not None else expr
        if not isinstance(callee, ast.Name):
            return False
        needs: Optional[DecoratorNeeds] = None
        defs = [s for s in self.tree.module.body if isinstance(s, FUNCTIONS) and s.name == callee.id]
        if defs:
            bound = [s for s in self.tree.module.body if isinstance(s, (ast.Assign, ast.Import, ast.ImportFrom))
                     and callee.id in {getattr(n, "id", None) for t in getattr(s, "targets", []) for n in ast.walk(t)}
                     | {(a.asname or a.name) for a in getattr(s, "names", [])}]
            if len(defs) == 1 and not bound:
                needs = GradOffDecorators(self).needs(defs[0], call is not None)
        elif self.calls is not None and self.calls.project is not None:
            project = self.calls.project
            qualname = project.imported(self.calls.module_name, callee.id)
            fact = project.functions.get(project.canonical(qualname)) if qualname is not None else None
            if fact is not None:
                needs = fact.off_as_factory if call is not None else fact.off_as_decorator
        return needs is not None and needs_met(needs, call)

    def records_nothing(self, node: ast.AST) -> bool:
        """An op at ``node`` records nothing: its result requires no grad (``_records_nothing``)."""
        return _records_nothing(self, node)

    def made_in_inference(self, node: ast.AST) -> bool:
        """An op at ``node`` runs under torch's ``inference_mode()`` (or ``inference_mode(True)``), as its own
        function shows: the nearest with-statement of torch's ``inference_mode`` around it, or a decorator of
        its function. Its result is an inference tensor, which PyTorch refuses to modify in place outside
        inference mode ("Inplace update to inference tensor outside InferenceMode")."""
        if isinstance(node, ast.Call) and _inference_helper(self, node):
            return True
        if self.local_reason(node) != "no-grad":
            return False
        for anc in self.tree.ancestors(node):
            if isinstance(anc, (ast.Lambda, ast.GeneratorExp)):
                return False
            if isinstance(anc, (ast.With, ast.AsyncWith)):
                items = [i.context_expr for i in anc.items if _inference(self, i.context_expr)]
                if items:
                    return all(_inference_on(e) for e in items)
            if isinstance(anc, FUNCTIONS):
                return any(_inference(self, d) and _inference_on(d) for d in anc.decorator_list)
        return False

    def local_reason(self, node: ast.AST) -> Optional[IntendedReason]:
        """Grad off around ``node`` from the code of its own function only (what a call site
        contributes to its callee's grad mode)."""
        return self._grad_context_reason(node, follow_calls=False)

    def _guarded(self, test_node: ast.If, child: ast.AST) -> bool:
        """``child`` runs only when grad is off or the tensor tested does not require grad:
        the body of ``if not torch.is_grad_enabled():`` / ``if not x.requires_grad:``, the
        ``else`` of the positive test, and the same through ``and``/``or``/``not`` and through
        a predicate function of the module that returns such a test (kornia's
        ``if _ssim_cpu_eligible(a, b):``)."""
        if any(s is child for s in test_node.body):
            return self._promises(test_node.test, True, 0)
        if any(s is child for s in test_node.orelse):
            return self._promises(test_node.test, False, 0)
        return False

    def promises_off(self, test: ast.expr) -> bool:
        """``test`` holding (``assert not x.requires_grad``) implies grad is off or the tensor tested does not
        require grad (:meth:`_promises`)."""
        return self._promises(test, True, 0)

    def _promises(self, test: ast.expr, value: bool, depth: int) -> bool:
        """Whether ``test`` evaluating to ``value`` implies grad is off or the tensor tested
        does not require grad."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self._promises(test.operand, not value, depth)
        if isinstance(test, ast.BoolOp):
            parts = [self._promises(v, value, depth) for v in test.values]
            # `a and b` true: both hold (one promise is enough); false: either fails (each must promise).
            return any(parts) if isinstance(test.op, ast.And) == value else all(parts)
        if value:
            return self._predicate_promises(test, depth)
        if isinstance(test, ast.Call) and self.names.torch_name(test.func) == "torch.is_grad_enabled":
            return True
        return isinstance(test, ast.Attribute) and test.attr == "requires_grad"

    def _predicate_promises(self, test: ast.expr, depth: int) -> bool:
        """``test`` is a call of a module-level function whose only statement (after its
        docstring) returns a test that promises it when true."""
        if depth > 3 or not isinstance(test, ast.Call) or not isinstance(test.func, ast.Name):
            return False
        found = [s for s in self.tree.module.body
                 if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == test.func.id]
        if len(found) != 1:
            return False
        body = [s for s in found[0].body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
            return False
        return self._promises(body[0].value, True, depth + 1)

    @staticmethod
    def _through_data_or_grad(target: ast.expr) -> bool:
        node = target
        while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
            if isinstance(node, ast.Attribute) and node.attr in ("data", "grad"):
                return True
            node = node.func if isinstance(node, ast.Call) else node.value
        return False

    @staticmethod
    def _false_arg(call: ast.Call) -> bool:
        return is_const(first_arg(call), False)

    def with_grad_state(self, node: Union[ast.With, ast.AsyncWith]) -> Optional[bool]:
        """False if the with-statement turns grad off, True if it turns it on, else None."""
        for item in node.items:
            expr = item.context_expr
            callee = expr.func if isinstance(expr, ast.Call) else expr
            name = self.names.torch_name(callee)
            if name in _GRAD_OFF_CONTEXTS:
                if name.endswith("inference_mode") and isinstance(expr, ast.Call) and self._false_arg(expr):
                    return True
                return False
            if name in _GRAD_SET and isinstance(expr, ast.Call) and first_arg(expr) is not None:
                if self._false_arg(expr):
                    return False
                if is_const(first_arg(expr), True):
                    return True
            if name in _GRAD_ON_CONTEXTS:
                return True
        return None

    def unseen_grad_off(self, node: Union[ast.With, ast.AsyncWith]) -> bool:
        """A with-statement whose item is named like torch's grad-off contexts but is not resolved
        to torch (``torch.no_grad()`` on a parameter named ``torch``, ``backend.no_grad()``,
        ``set_grad_enabled(False)`` of another module): grad is unknown under it. Neither grad on
        (a write is not proven a hazard) nor grad off (a view made there is not proven refused).
        Only where ``with_grad_state`` says nothing (remembered: asked for every node under it)."""
        known = self._unseen.get(node)
        if known is None:
            known = self._unseen[node] = self.with_grad_state(node) is None and any(
                self._unseen_item(i.context_expr) for i in node.items)
        return known

    def _unseen_item(self, expr: ast.expr) -> bool:
        callee = expr.func if isinstance(expr, ast.Call) else expr
        last = callee.attr if isinstance(callee, ast.Attribute) else callee.id if isinstance(callee, ast.Name) else None
        if last is None or self.names.torch_name(callee) is not None:
            return False
        if last == "set_grad_enabled":
            return isinstance(expr, ast.Call) and self._false_arg(expr)
        if last == "inference_mode" and isinstance(expr, ast.Call) and expr.args and not is_const(expr.args[0], True):
            return False  # `inference_mode(False)` (or not shown True) leaves grad as it is
        return last in _GRAD_OFF_LAST

    def _is_optimizer(self, cls: ast.ClassDef) -> bool:
        """A subclass of torch's ``Optimizer`` (imported from torch, or relatively inside it);
        remembered per class (asked for each of its methods)."""
        known = self._optimizers.get(cls)
        if known is None:
            known = self._optimizers[cls] = self._subclasses_optimizer(cls)
        return known

    def _subclasses_optimizer(self, cls: ast.ClassDef) -> bool:
        return any(
            (self.names.torch_name(base) or "").startswith("torch.optim.")
            or (target_key(base) or "").rsplit(".", 1)[-1] == "Optimizer"
            for base in cls.bases
        )


# What a decorator needs to run the function it decorates with grad off: per parameter of the
# factory that a pass-through branch tests, "name,index,default,want" (default "1"/"0"/"" for
# none or not a constant; want "1": the parameter must be truthy); () for always.
DecoratorNeeds = Tuple[str, ...]


class _Body(NamedTuple):
    """Of one function (``GradOffDecorators._body``): its own returns, the functions defined
    directly in it by name (in the walk's order)."""

    returns: List[ast.Return]
    defs: Dict[str, List[Function]]


class GradOffDecorators:
    """Decorators of the project that run what they decorate with grad off: a function whose
    every return applies ``torch.no_grad()``/``torch.inference_mode()`` to the function given,
    or returns a wrapper running it under one, and a factory returning such a decorator
    (``@inference_only()``). A branch returning the function unchanged must be shown not taken:
    by a constant the factory is given (or its default), or a test that grad is already off
    where it is decorated (``torch.is_inference_mode_enabled()``)."""

    def __init__(self, grad: GradMode) -> None:
        self.grad = grad
        self.tree = grad.tree
        self.names = grad.names
        self._bodies: Dict[Function, _Body] = {}
        self._bound_in: Dict[Function, FrozenSet[str]] = {}

    def _body(self, func: Function) -> "_Body":
        """What ``needs`` reads of ``func`` (kept: the index asks each module-level function as a
        decorator and as a factory, and a factory's nested one), from the returns and functions
        the tree files by owner: no walk of the function."""
        found = self._bodies.get(func)
        if found is None:
            defs: Dict[str, List[Function]] = {}
            for n in self.tree.defined_in(func):
                defs.setdefault(cast(Function, n).name, []).append(cast(Function, n))
            found = self._bodies[func] = _Body(self.tree.returns(func), defs)
        return found

    def _bound(self, func: Function) -> FrozenSet[str]:
        """The names bound anywhere in ``func`` (nested functions too): one walk, asked only of a
        factory returning a name one function defined in it has."""
        found = self._bound_in.get(func)
        if found is None:
            found = self._bound_in[func] = frozenset(
                n.id for n in self.tree.walk(func) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load))
        return found

    def needs(self, func: Function, factory: bool) -> Optional[DecoratorNeeds]:
        """What ``func`` needs to turn grad off in what it decorates: as a decorator (``@func``),
        or as a factory of one (``@func(...)``: it returns a decorator defined in it). None:
        not shown."""
        returns = self._body(func).returns
        if not returns:
            return None
        found: Dict[str, str] = {}
        for ret in returns:
            value = ret.value
            inner = self._nested(func, value) if isinstance(value, ast.Name) else None
            if factory:
                below = self.needs(inner, False) if inner is not None else None
                if below is None:
                    return None
                needs = list(below)
            elif value is not None and (self._applied_off(value) or inner is not None and self._wrapper_off(inner)):
                needs = []
            else:
                excluded = self._excluded(ret, func)
                if excluded is None:
                    return None
                needs = excluded
            for need in needs:
                key = need.rsplit(",", 1)[0]
                if found.get(key, need) != need:
                    return None  # both ways: not shown
                found[key] = need
        return tuple(sorted(found.values()))

    def _nested(self, func: Function, name: ast.Name) -> Optional[Function]:
        body = self._body(func)
        defs = body.defs.get(name.id, [])
        return defs[0] if len(defs) == 1 and name.id not in self._bound(func) else None

    def _applied_off(self, value: ast.expr) -> bool:
        """``torch.no_grad()(fn)``, ``(torch.inference_mode if new else torch.no_grad)()(fn)``."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Call) and len(value.args) == 1):
            return False
        maker = value.func
        options = [maker.func.body, maker.func.orelse] if isinstance(maker.func, ast.IfExp) else [maker.func]
        return not maker.args and not maker.keywords and all(
            self.names.torch_name(o) in _GRAD_OFF_CONTEXTS for o in options)

    def _wrapper_off(self, wrapper: Function) -> bool:
        """A wrapper whose body runs under grad off: decorated with ``torch.no_grad()``, or one
        with-statement (after its docstring) that turns grad off."""
        if self.grad._declared_reason(wrapper) == "no-grad":
            return True
        body = [s for s in wrapper.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        if len(body) != 1 or not isinstance(body[0], (ast.With, ast.AsyncWith)):
            return False
        states = []  # per item: False off, True on, None neither (`inference_mode(False)` leaves grad as it is)
        for item in body[0].items:
            expr = item.context_expr
            name = self.names.torch_name(expr.func if isinstance(expr, ast.Call) else expr)
            off = name in _GRAD_OFF_CONTEXTS and not (
                isinstance(expr, ast.Call) and expr.args and not is_const(expr.args[0], True))
            off = off or (name in _GRAD_SET and isinstance(expr, ast.Call) and self.grad._false_arg(expr))
            states.append(False if off else None if name in _GRAD_OFF_CONTEXTS else True)
        return False in states and True not in states

    def _excluded(self, ret: ast.Return, func: Function) -> Optional[List[str]]:
        """Why the branch of ``ret`` (a pass-through) is not taken: what it needs of the
        enclosing factory's parameters; None when nothing shows it."""
        child: ast.AST = ret
        for anc in self.tree.ancestors(ret):
            if anc is func:
                return None
            if isinstance(anc, ast.If) and child in anc.body:
                test = anc.test
                if any(isinstance(v, ast.Call) and self.names.torch_name(v.func) == "torch.is_inference_mode_enabled"
                       for v in (test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test])):
                    return []  # taken only where grad is already off
                want = "1"
                if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                    test, want = test.operand, "0"
                need = self._param_need(test, func)
                if need is not None:
                    return [f"{need},{'0' if want == '1' else '1'}"]  # the factory must be given the other
            child = anc
        return None

    def _param_need(self, test: ast.expr, func: Function) -> Optional[str]:
        """``name,index,default`` where ``test`` is a parameter of a function enclosing ``func``."""
        if not isinstance(test, ast.Name):
            return None
        outer = self.tree.owner(func)
        if not isinstance(outer, FUNCTIONS):
            return None
        args = [*outer.args.posonlyargs, *outer.args.args]
        if not any(a.arg == test.id for a in args) or any(
                isinstance(n, ast.Name) and n.id == test.id and not isinstance(n.ctx, ast.Load) for n in self.tree.walk(outer)):
            return None
        index = [a.arg for a in args].index(test.id)
        defaults = outer.args.defaults
        at = index - (len(args) - len(defaults))
        default = defaults[at] if at >= 0 else None
        value = "" if not isinstance(default, ast.Constant) else ("1" if default.value else "0")
        return f"{test.id},{index},{value}"


def needs_met(needs: DecoratorNeeds, call: Optional[ast.Call]) -> bool:
    """Whether the decorator expression (``call``: ``factory(...)``, or None for a bare name) gives
    what ``needs`` asks: each parameter's constant (or default) of the truthiness wanted."""
    for need in needs:
        name, index, default, want = need.split(",")
        value: Optional[ast.expr] = None
        if call is not None:
            value = next((k.value for k in call.keywords if k.arg == name), None)
            if value is None and len(call.args) > int(index):
                value = call.args[int(index)]
            if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
                return False
        if value is None:
            if default != want:
                return False
        elif not (isinstance(value, ast.Constant) and ("1" if value.value else "0") == want):
            return False
    return True


def _records_nothing(grad: GradMode, node: ast.AST) -> bool:
    """An op at ``node`` runs where grad is off by torch's ``no_grad``/``set_grad_enabled(False)``, as
    its own function shows (a with-statement around it, a decorator of the function, the module's
    ``set_grad_enabled(False)``): autograd records nothing there, so the op saves nothing and its
    result requires no grad. Not under ``inference_mode`` (its result is an inference tensor, which
    refuses a write outside it), a decorator of the project (what it does is seen only as grad off),
    a guard (``if not x.requires_grad``), an optimizer class, a with-statement not resolved to torch,
    nor inside a lambda or generator expression (its body runs where it is called or consumed). Also
    after a statement ``torch.set_grad_enabled(False)`` of the same function (``_switched_off_before``)."""
    reason = grad.local_reason(node)
    if reason is None:
        return _switched_off_before(grad, node)
    if reason != "no-grad":
        return False
    for anc in grad.tree.ancestors(node):
        if isinstance(anc, (ast.Lambda, ast.GeneratorExp)):
            return False
        if isinstance(anc, (ast.With, ast.AsyncWith)) and grad.with_grad_state(anc) is not None:
            return grad.with_grad_state(anc) is False and not any(_inference(grad, i.context_expr) for i in anc.items)
        if isinstance(anc, FUNCTIONS):
            names = [(grad.names.torch_name(d.func if isinstance(d, ast.Call) else d), d) for d in anc.decorator_list]
            if any((n or "").endswith("inference_mode") for n, _ in names):
                return False
            return any(n in _GRAD_OFF_CONTEXTS or n in _GRAD_SET and isinstance(d, ast.Call) and is_const(first_arg(d), False)
                       for n, d in names) or grad.module_off()[1]
    return True  # module-level code after `torch.set_grad_enabled(False)`


def _inference(grad: GradMode, expr: ast.expr) -> bool:
    return (grad.names.torch_name(expr.func if isinstance(expr, ast.Call) else expr) or "").endswith("inference_mode")


def _inference_helper(grad: GradMode, call: ast.Call) -> bool:
    """``made(x)``: a call of the one module-level function of that name (the module binds the name nothing
    else), decorated ``@torch.inference_mode()`` (not another flag): what it hands back is made in inference
    mode, an inference tensor."""
    if not isinstance(call.func, ast.Name):
        return False
    name = call.func.id
    module = grad.tree.module
    defs = [s for s in module.body if isinstance(s, FUNCTIONS) and s.name == name]
    others = [n for n in ast.walk(module) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
              or isinstance(n, ast.alias) and (n.asname or n.name.split(".")[0]) == name
              or isinstance(n, (*FUNCTIONS, ast.ClassDef)) and n.name == name and n not in defs]
    return len(defs) == 1 and not others and any(_inference(grad, d) and _inference_on(d) for d in defs[0].decorator_list)


def _inference_on(expr: ast.expr) -> bool:
    """``inference_mode``, ``inference_mode()``, ``inference_mode(True)``/``(mode=True)``: not another flag."""
    if not isinstance(expr, ast.Call):
        return True
    flag = first_arg(expr) if expr.args else next((k.value for k in expr.keywords if k.arg == "mode"), None)
    return flag is None and not expr.keywords and not expr.args or flag is not None and is_const(flag, True)


_SIMPLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return)


def _switched_off_before(grad: GradMode, node: ast.AST) -> bool:
    """``node``'s simple statement comes after a statement ``torch.set_grad_enabled(False)`` in the
    same statement list, or in one around it through ``if`` bodies only (not a loop: its end may turn
    grad on for the next turn; not a with-statement, a ``try``, a function's start), and nothing run
    between (nor in the statement itself) can turn grad on: every call is a torch function or a
    tensor method other than torch's grad switches, and nothing awaits or yields."""
    if "set_grad_enabled" not in grad.tree.source.text:
        return False  # (asked of every fresh op: most files never switch grad by a statement)
    stmt = grad.tree.statement_of(cast(Located, node))
    if not isinstance(stmt, _SIMPLE) or not _quiet(grad, stmt):
        return False  # (`_quiet`: no lambda or generator expression in it either)
    child: ast.AST = stmt
    while True:
        parent = grad.tree.parent(child)
        block = next((b for b in (getattr(parent, f, None) for f in ("body", "orelse"))
                      if isinstance(b, list) and any(x is child for x in b)), None)
        if parent is None or block is None:
            return False
        for before in reversed(block[:[i for i, x in enumerate(block) if x is child][0]]):
            if isinstance(before, ast.Expr) and isinstance(before.value, ast.Call) \
                    and grad.names.torch_name(before.value.func) in _GRAD_SET:
                return is_const(first_arg(before.value), False)
            if not _quiet(grad, before):
                return False
        if not (isinstance(parent, ast.If) and _quiet(grad, parent.test)):
            return False
        child = parent


def _quiet(grad: GradMode, node: ast.AST) -> bool:
    """Running ``node`` cannot turn grad on: its calls are torch functions or tensor methods other
    than torch's grad switches and contexts; it neither awaits nor yields."""
    for n in ast.walk(node):
        if isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.With, ast.AsyncWith, ast.Lambda, ast.GeneratorExp)):
            return False
        if isinstance(n, ast.Call):
            name = grad.names.torch_name(n.func)
            if name is not None:
                if name in _GRAD_SET or name in _GRAD_ON_CONTEXTS or name in _GRAD_OFF_CONTEXTS \
                        or not name.startswith("torch."):
                    return False
            elif not (isinstance(n.func, ast.Attribute) and n.func.attr in torch_api.TENSOR_METHODS):
                return False
    return True
