"""Forward hooks that make a module's output a leaf that requires grad.

Two hook bodies do it (issue 24, family B):

* ``output.requires_grad_(True)`` (HF's ``enable_input_require_grads``, PEFT/LoRA with gradient
  checkpointing, prompt tuning): the output of a module whose parameters are all frozen is a
  leaf, and the hook makes it require grad. Where a parameter of the module still requires grad
  the output is no leaf and the hook changes nothing: the fact holds only where the file freezes
  the module (``model.requires_grad_(False)``, ``for p in model.parameters(): p.requires_grad =
  False`` on it or a module holding it) and turns nothing back on around it.
* ``return leaf`` where ``leaf`` is ``t.detach().requires_grad_()`` (captum's layer attributions):
  the module's call hands back the hook's leaf, whatever its parameters.

Modules are named by where they sit: a class of this file and the attribute chain from it
(``self.model.embed_tokens`` in ``Net``, ``net.model.embed_tokens`` with ``net = Net()``,
``self.get_input_embeddings()`` returning ``self.model.embed_tokens``, a hook installer's
parameter every call of which passes ``model.wte``). A hook, freeze or call the analysis cannot
so name proves nothing.
"""

from __future__ import annotations

import ast
from typing import Any, List, NamedTuple, Optional, Tuple

from codemod.analysis.binder import Binder
from codemod.analysis.dataflow import Dataflow
from codemod.analysis.syntax import FUNCTIONS, Located, is_const
from codemod.analysis.tree import Tree

Identity = Tuple[ast.ClassDef, Tuple[str, ...]]  # a class of this file, the attribute chain from it
_DEPTH = 8
_EMBEDDINGS = ("torch.nn.Embedding", "torch.nn.modules.sparse.Embedding")
# nn.Module methods handing back the module itself (`Net().to(device)`, `model.requires_grad_(False)`)
RETURNS_MODULE = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "half", "double", "bfloat16",
                             "requires_grad_", "type", "share_memory", "to_empty", "xpu", "ipu", "mtia"})


# Module hooks that see what a call is given or returns (a backward hook sees gradients only).
_CALL_HOOKS = frozenset({"register_forward_hook", "register_forward_pre_hook",
                         "register_module_forward_hook", "register_module_forward_pre_hook"})
# A module's (or torch's global) hook tables: a hook put there directly is not named.
_HOOK_TABLES = frozenset({"_forward_hooks", "_forward_pre_hooks", "_forward_hooks_with_kwargs",
                          "_forward_pre_hooks_with_kwargs", "_global_forward_hooks", "_global_forward_pre_hooks"})


def call_hooks(tree: Tree) -> Optional[List[ast.expr]]:
    """The hooks this file registers on modules' calls, each the expression it hands over:
    ``m.register_forward_hook(fn)`` and its pre form (also ``hook=fn``, ``with_kwargs=True``),
    the global ``register_module_forward_hook(fn)``. A hook sees what a call of its module is
    given and returns, and may keep it. None where the file hooks calls without naming the hook:
    handed by ``*args`` / ``**kwargs`` or not at all, or put into a hook table
    (``m._forward_hooks[k] = fn``). (A ``forward`` replaced is not counted here.)"""
    found: List[ast.expr] = []
    if "hook" not in tree.source.text:
        return found
    for node in tree.nodes(ast.Call):
        func = node.func  # type: ignore[attr-defined]
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        if name not in _CALL_HOOKS:
            continue
        call: ast.Call = node  # type: ignore[assignment]
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        hook = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "hook"), None)
        if hook is None:
            return None
        found.append(hook)
    if any(node.attr in _HOOK_TABLES for node in tree.nodes(ast.Attribute)):  # type: ignore[attr-defined]
        return None
    return found


class OutputHook(NamedTuple):
    module: Identity
    replaces: bool  # the hook hands back its own leaf (no freezing needed)
    line: int  # the ``register_forward_hook`` call


class ModuleNames:
    """Names modules by where they sit: a class of this file and the attribute chain from it
    (:data:`Identity`), through ``self``, names bound to a construction, attributes every
    ``__init__`` fills with one class of the file or with a constructor argument, methods handing
    back a module of the instance or an argument, and parameters every call fills alike."""

    def __init__(self, tree: Tree, binder: Binder, dataflow: Dataflow, chains: Any) -> None:
        self.tree = tree
        self.binder = binder
        self.dataflow = dataflow
        self.chains = chains

    def identity(self, expr: ast.expr, at: Located, depth: int) -> Optional[Identity]:
        """The class of this file and attribute chain ``expr`` names (a module), or None."""
        if depth > _DEPTH:
            return None
        if isinstance(expr, ast.Name):
            return self._name_identity(expr, at, depth)
        if isinstance(expr, ast.Attribute):
            base = self.identity(expr.value, at, depth + 1)
            if base is None:
                return None
            cls, chain = base
            if not chain:
                inner = self._held_class(cls, expr.attr)
                if inner is not None:
                    return inner, ()
                given = self._constructor_argument(cls, expr.attr, depth + 1)
                if given is not None:
                    return given
            return cls, chain + (expr.attr,)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):  # `Net()`
            cls = self.chains.classes().get(expr.func.id)
            return (cls, ()) if cls is not None and not self.chains.subclassed(cls) else None
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in RETURNS_MODULE:
            return self.identity(expr.func.value, at, depth + 1)  # `Net().to(device)`: the module itself
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            base = self.identity(expr.func.value, at, depth + 1)  # `self.get_input_embeddings()`
            if base is None or base[1]:
                return None
            return self._returned(base[0], expr, at, depth + 1)
        return None

    def _name_identity(self, name: ast.Name, at: Located, depth: int) -> Optional[Identity]:
        if name.id == "self":
            cls = self.tree.enclosing_class(name)
            if cls is None or self.chains.subclassed(cls) or self.chains.classes().get(cls.name) is not cls:
                return None
            return cls, ()
        owner = self.tree.owner(name)
        flow = self.binder.flow(owner)
        reaching = self.dataflow.reaching(flow, name.id, at)
        if len(reaching) != 1:
            return None
        binding = reaching[0]
        if binding.form == "param" and isinstance(owner, FUNCTIONS):
            return self._passed(owner, name.id, depth + 1)
        if binding.form != "assign" or binding.value is None:
            return None
        value = binding.value
        if isinstance(value, (ast.Name, ast.Attribute, ast.Call)):
            return self.identity(value, binding.stmt, depth + 1)
        return None

    def _passed(self, func: ast.AST, param: str, depth: int) -> Optional[Identity]:
        """What every call of ``func`` in this file passes for ``param``: a module-level function
        (``f(model.wte)``), a method called by name (``template.encode(model)``), a class's
        ``__init__`` (its constructions); none where the function is handed on."""
        calls = self._calls_of(func)
        if calls is None:
            return None
        args = func.args  # type: ignore[attr-defined]
        names = [a.arg for a in args.posonlyargs + args.args]
        if param not in names or args.vararg or args.kwarg:
            return None
        position = names.index(param) - (0 if self.tree.parent(func) is self.tree.module else 1)
        found: Optional[Identity] = None
        for node in calls:
            given = self._argument(node, param, position)
            module = None if given is None else self.identity(given, self.tree.statement_of(node), depth + 1)
            if module is None or (found is not None and module != found):
                return None
            found = module
        return found

    def _calls_of(self, func: ast.AST) -> Optional[List[ast.Call]]:
        parent = self.tree.parent(func)
        name = func.name  # type: ignore[attr-defined]
        if getattr(func, "decorator_list", None):
            return None
        if parent is self.tree.module:
            calls: List[ast.Call] = []
            for node in self.tree.walk(self.tree.module):
                if isinstance(node, ast.Name) and node.id == name:
                    called = self.tree.parent(node)
                    if not (isinstance(called, ast.Call) and called.func is node):
                        if isinstance(node.ctx, ast.Load):
                            return None  # handed on: calls not seen
                        continue
                    calls.append(called)
            return calls or None
        if not isinstance(parent, ast.ClassDef) or self.chains.classes().get(parent.name) is not parent \
                or self.chains.subclassed(parent):
            return None
        if name == "__init__":
            calls = [c for c in self.tree.walk(self.tree.module) if isinstance(c, ast.Call)
                     and isinstance(c.func, ast.Name) and c.func.id == parent.name]
            return calls or None
        return self.chains.method_calls(name) or None

    @staticmethod
    def _argument(call: ast.Call, param: str, position: int) -> Optional[ast.expr]:
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return None
        if 0 <= position < len(call.args):
            return call.args[position]
        return next((k.value for k in call.keywords if k.arg == param), None)

    def _constructor_argument(self, cls: ast.ClassDef, attr: str, depth: int) -> Optional[Identity]:
        """``self.base_layer = base_layer`` in ``__init__``, its only value: the module every
        construction of ``cls`` passes (``LoraEmbedding(model.embed_tokens)``)."""
        values = self.chains._class_values(cls, attr)
        if not values or len(values) != 1 or attr in self.chains._stored_outside() \
                or not isinstance(values[0], ast.Name):
            return None
        init = self.tree.owner(values[0])
        if not (isinstance(init, FUNCTIONS) and init.name == "__init__" and self.tree.parent(init) is cls):
            return None
        reaching = self.dataflow.reaching(self.binder.flow(init), values[0].id, self.tree.statement_of(values[0]))
        if len(reaching) != 1 or reaching[0].form != "param":
            return None
        return self._passed(init, values[0].id, depth)

    def _held_class(self, cls: ast.ClassDef, attr: str) -> Optional[ast.ClassDef]:
        """The class of this file every ``self.<attr> = ...`` of ``cls`` builds, if one."""
        values = self.chains._class_values(cls, attr)
        if not values or attr in self.chains._stored_outside():
            return None
        found: Optional[ast.ClassDef] = None
        for value in values:
            owners = self.chains._value_owners(value, 0)
            if not owners or len(owners) != 1 or not isinstance(owners[0], ast.ClassDef):
                return None
            if found is not None and owners[0] is not found:
                return None
            found = owners[0]
        if found is not None and self.chains.subclassed(found):
            return None
        return found

    def _returned(self, cls: ast.ClassDef, call: ast.Call, at: Located, depth: int) -> Optional[Identity]:
        """``obj.method(...)`` of ``cls`` whose every ``return`` hands back one module: of the
        instance (``return self.model.embed_tokens``) or the argument given (``return model``)."""
        method = call.func.attr  # type: ignore[attr-defined]
        defs = [s for s in cls.body if isinstance(s, FUNCTIONS) and s.name == method]
        if len(defs) != 1 or defs[0].decorator_list:
            return None
        func = defs[0]
        names = [a.arg for a in func.args.posonlyargs + func.args.args]
        returns = self.tree.returns(func)
        found: Optional[Identity] = None
        for ret in returns:
            if ret.value is None:
                return None
            value = ret.value
            if isinstance(value, ast.Name) and value.id in names[1:] and not func.args.vararg \
                    and len(self.dataflow.reaching(self.binder.flow(func), value.id, ret)) == 1:
                given = self._argument(call, value.id, names.index(value.id) - 1)
                module = None if given is None else self.identity(given, at, depth + 1)
            else:
                module = self.identity(value, ret, depth + 1)
            if module is None or (found is not None and module != found):
                return None
            found = module
        return found



class HookedOutputs:
    """Which module calls of this file hand back a leaf that requires grad because of a forward
    hook the file installs. ``chains`` is the file's :class:`~codemod.analysis.leaves.ModuleChains`
    (the classes it builds and what their attributes hold)."""

    def __init__(self, tree: Tree, binder: Binder, dataflow: Dataflow, chains: Any) -> None:
        self.tree = tree
        self.binder = binder
        self.dataflow = dataflow
        self.chains = chains
        self.names = ModuleNames(tree, binder, dataflow, chains)
        self._hooks: Optional[List[OutputHook]] = None
        self._switches: Optional[Tuple[List[Tuple[Identity, int]], bool]] = None  # frozen modules; something turned on

    def output_leaf(self, call: ast.Call, at: Located) -> Optional[str]:
        """In words, why ``call``'s result is a leaf that requires grad; None if not shown."""
        if "register_forward_hook" not in self.tree.source.text or call.keywords and not call.args:
            return None
        hooks = self.hooks()
        if not hooks:
            return None
        if isinstance(call.func, ast.Attribute) and self._replaced(call.func.attr):
            return None
        module = self.names.identity(call.func, at, 0)
        if module is None:
            return None
        named = f"`{ast.unparse(call.func)}`"
        for hook in hooks:
            if hook.module != module:
                continue
            if hook.replaces:
                return f"the output of {named}, replaced by the leaf a forward hook returns (line {hook.line})"
            frozen = self.frozen(module)
            if frozen is not None:
                return (f"the output of {named}, whose parameters are frozen (line {frozen}), made to require "
                        f"grad by a forward hook (line {hook.line})")
        return None

    # ------------------------------------------------------------------ the hooks
    def hooks(self) -> List[OutputHook]:
        if self._hooks is None:
            found: List[OutputHook] = []
            for node in self.tree.walk(self.tree.module):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "register_forward_hook" and len(node.args) == 1
                        and not node.keywords and isinstance(node.args[0], (ast.Name, ast.Lambda, ast.Attribute))):
                    continue
                if not self._runs(self.tree.owner(node)):
                    continue
                hook = node.args[0]
                effect = _lambda_effect(hook) if isinstance(hook, ast.Lambda) else self._effect(hook)
                if effect is None:
                    continue
                module = self.names.identity(node.func.value, self.tree.statement_of(node), 0)
                if module is not None:
                    found.append(OutputHook(module, effect, node.lineno))
            self._hooks = found
        return self._hooks

    def _runs(self, owner: ast.AST) -> bool:
        """The code installing the hook is run: module-level code, a method this file calls by name, a
        module-level function it calls, or one it never names (an entry point: ``main()``, ``train()``)."""
        if isinstance(owner, ast.Module):
            return True
        if not isinstance(owner, FUNCTIONS):
            return False
        parent = self.tree.parent(owner)
        if isinstance(parent, ast.ClassDef) and owner.name == "__init__":
            return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == parent.name
                       for n in self.tree.walk(self.tree.module))  # constructed in this file
        if isinstance(parent, ast.ClassDef):
            return bool(self.chains.method_calls(owner.name))
        if parent is not self.tree.module:
            return False
        named = [n for n in self.tree.walk(self.tree.module) if isinstance(n, ast.Name) and n.id == owner.name]
        return all(getattr(self.tree.parent(n), "func", None) is n for n in named)

    def _hook_function(self, name: ast.expr) -> Optional[ast.AST]:
        """The ``def`` a hook stands for: a name of the enclosing function's own, else of the module's,
        bound once there; ``self.<method>`` of the enclosing class, defined once and not subclassed."""
        if isinstance(name, ast.Attribute) and isinstance(name.value, ast.Name) and name.value.id == "self":
            cls = self.tree.enclosing_class(name)
            if cls is None or self.chains.subclassed(cls):
                return None
            methods = [s for s in cls.body if isinstance(s, FUNCTIONS) and s.name == name.attr]
            return methods[0] if len(methods) == 1 and not methods[0].decorator_list else None
        if not isinstance(name, ast.Name):
            return None
        owner = self.tree.owner(name)
        scopes = [owner] if isinstance(owner, ast.Module) else [owner, self.tree.module]
        for scope in scopes:
            defs = [s for s in getattr(scope, "body", []) if isinstance(s, FUNCTIONS) and s.name == name.id]
            bound = self.binder.flow(scope, nested=False).bindings.get(name.id, [])
            if bound or defs:
                return defs[0] if len(defs) == 1 and len(bound) == 1 else None
        return None

    def _effect(self, name: ast.expr) -> Optional[bool]:
        """True: the hook returns a leaf of its own; False: it makes the output require grad; None: neither shown."""
        func = self._hook_function(name)
        if func is None:
            return None
        args = func.args  # type: ignore[attr-defined]
        params = [a.arg for a in args.posonlyargs + args.args][1 if isinstance(name, ast.Attribute) else 0:]
        if len(params) != 3 or args.vararg or args.kwarg:
            return None
        output = params[2]
        returns = [n for n in self.tree.returns(func) if n.value is not None and not is_const(n.value, None)]
        if returns:
            leaves = [self._leaf_name(r.value, func) for r in returns]
            return True if all(leaves) and self._falls_through(func) is False else None
        for stmt in func.body:  # type: ignore[attr-defined]
            if _switches_on(stmt, output):
                return False
        return None

    @staticmethod
    def _falls_through(func: ast.AST) -> bool:
        """The hook's last statement is not a ``return``: some path may hand back the output unchanged."""
        body = getattr(func, "body", [])
        return not (body and isinstance(body[-1], ast.Return))

    def _leaf_name(self, value: Optional[ast.expr], func: ast.AST) -> bool:
        """``value`` is a name the hook (or the function around it) binds only to a new leaf that
        requires grad: ``t.detach().requires_grad_()``."""
        if not isinstance(value, ast.Name):
            return False
        for scope in (func, self.tree.owner(func)):
            if not isinstance(scope, FUNCTIONS):
                continue
            bindings = self.binder.flow(scope).bindings.get(value.id, [])
            if bindings:
                return all(b.form == "assign" and isinstance(b.value, ast.Call) and _detached_leaf(b.value)
                           for b in bindings)
        return False

    # ------------------------------------------------------------------ freezing
    def frozen(self, module: Identity) -> Optional[int]:
        """The line of a statement freezing ``module``'s parameters (it or a module holding it),
        where nothing of the file turns requires_grad back on for a module that may overlap it."""
        if self._switches is None:
            self._switches = self._find_switches()
        frozen, turned_on = self._switches
        if turned_on:
            return None
        pretrained = self._embedding(module, pretrained=True)
        if pretrained:
            return pretrained  # `nn.Embedding.from_pretrained(vectors)`: freeze=True unless told
        for (cls, chain), line in frozen:
            if chain and chain[-1] == "weight" and self._embedding(module):
                chain = chain[:-1]  # `emb.weight.requires_grad_(False)`: an nn.Embedding's only parameter
            if cls is module[0] and module[1][:len(chain)] == chain:
                return line
        return None

    def _embedding(self, module: Identity, pretrained: bool = False) -> Optional[int]:
        """Every ``self.<chain> = ...`` of the class builds an ``nn.Embedding`` (one parameter: its
        weight); with ``pretrained``, by ``nn.Embedding.from_pretrained(...)`` left frozen (its default).
        The line of the first, or None."""
        cls, chain = module
        text = ".".join(("self",) + chain)
        values = [n.value for n in self.tree.walk(cls) if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Attribute) and ast.unparse(n.targets[0]) == text]
        names = self.chains.kinds.names

        def built(value: ast.expr) -> bool:
            if not isinstance(value, ast.Call):
                return False
            if not pretrained:
                return names.torch_name(value.func) in _EMBEDDINGS
            func = value.func
            return isinstance(func, ast.Attribute) and func.attr == "from_pretrained" \
                and names.torch_name(func.value) in _EMBEDDINGS and len(value.args) < 2 \
                and all(k.arg is not None and (k.arg != "freeze" or is_const(k.value, True)) for k in value.keywords)

        return values[0].lineno if values and all(built(v) for v in values) else None

    def _replaced(self, attr: str) -> bool:
        """Some ``<x>.attr = ...`` of the file outside an ``__init__``: the module called through that
        attribute may be another than the one the hook was installed on (PEFT wraps it)."""
        for node in self.tree.walk(self.tree.module):
            if isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.ctx, (ast.Store, ast.Del)):
                owner = self.tree.owner(node)
                if not (isinstance(owner, FUNCTIONS) and owner.name == "__init__"):
                    return True
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("setattr", "delattr"):
                return True
        return False

    def _find_switches(self) -> Tuple[List[Tuple[Identity, int]], bool]:
        """The modules the file freezes (with the line), and whether it turns any back on."""
        frozen: List[Tuple[Identity, int]] = []
        turned_on = False
        for node in self.tree.walk(self.tree.module):
            switched: Optional[Tuple[ast.expr, bool]] = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                    and node.targets[0].attr == "requires_grad" and isinstance(node.value, ast.Constant) \
                    and isinstance(node.value.value, bool):
                switched = (node.targets[0].value, node.value.value)  # `emb.weight.requires_grad = False`
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
                on = not node.args or not is_const(node.args[0], False)
                switched = (node.func.value, on)
            elif isinstance(node, (ast.For, ast.AsyncFor)):
                looped = _parameters_loop(node)
                if looped is not None:
                    switched = looped
            if switched is None:
                continue
            target, on = switched
            at = self.tree.statement_of(node)  # type: ignore[arg-type]
            module = self.names.identity(target, at, 0)
            if on:
                if module is not None or isinstance(node, (ast.For, ast.AsyncFor)):
                    turned_on = True  # a module (or parameters) turned back on: which ones is not followed
                continue
            if module is not None:
                frozen.append((module, getattr(node, "lineno", 0)))
        return frozen, turned_on

def leaf_of_its_own(hook: ast.Lambda) -> Optional[bool]:
    """Whether a lambda hook hands back a new leaf of its own (:func:`_lambda_effect`)."""
    return _lambda_effect(hook)


def _lambda_effect(hook: ast.Lambda) -> Optional[bool]:
    """``lambda m, i, o: o.requires_grad_()`` (False: the output made to require grad, handed back
    itself) or ``lambda m, i, o: o.detach().requires_grad_()`` (True: a new leaf replaces it)."""
    args = hook.args
    params = [a.arg for a in args.posonlyargs + args.args]
    if len(params) != 3 or args.vararg or args.kwarg or not isinstance(hook.body, ast.Call):
        return None
    if _detached_leaf(hook.body):
        return True
    return False if _switches_on(ast.Expr(value=hook.body), params[2]) else None


def _switches_on(stmt: ast.stmt, name: str) -> bool:
    """``name.requires_grad_()``, ``name.requires_grad_(True)``, ``name.requires_grad = True``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        return isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_" \
            and isinstance(call.func.value, ast.Name) and call.func.value.id == name and not call.keywords \
            and (not call.args or len(call.args) == 1 and is_const(call.args[0], True))
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and is_const(stmt.value, True):
        target = stmt.targets[0]
        return isinstance(target, ast.Attribute) and target.attr == "requires_grad" \
            and isinstance(target.value, ast.Name) and target.value.id == name
    return False


def _detached_leaf(call: ast.Call) -> bool:
    """``t.detach().requires_grad_()`` (``.clone()`` between allowed): a new leaf that requires grad."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "requires_grad_" and not call.keywords
            and (not call.args or len(call.args) == 1 and is_const(call.args[0], True))):
        return False
    inner = func.value
    while isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "clone":
        inner = inner.func.value
    return isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) and inner.func.attr == "detach" \
        and not inner.args and not inner.keywords


def _parameters_loop(loop: ast.AST) -> Optional[Tuple[ast.expr, bool]]:
    """``for p in m.parameters(): p.requires_grad = flag`` (or ``named_parameters``, ``requires_grad_``)
    -> (m, flag is on). A switch under a condition in the loop counts as on (some are turned on)."""
    target, iterable = loop.target, loop.iter  # type: ignore[attr-defined]
    if not (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr in ("parameters", "named_parameters")):
        return None
    if isinstance(target, ast.Tuple) and len(target.elts) == 2 and iterable.func.attr == "named_parameters":
        target = target.elts[1]
    if not isinstance(target, ast.Name):
        return None
    name = target.id
    off = any(_switches_off(s, name) for s in loop.body)  # type: ignore[attr-defined]
    on = any(_switches_on(s, name) for n in ast.walk(loop) for s in getattr(n, "body", []) + getattr(n, "orelse", [])
             if isinstance(s, ast.stmt))
    if on:
        return iterable.func.value, True
    if off:
        return iterable.func.value, False
    return None


def _switches_off(stmt: ast.stmt, name: str) -> bool:
    """``name.requires_grad_(False)``, ``name.requires_grad = False``."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        return isinstance(call.func, ast.Attribute) and call.func.attr == "requires_grad_" \
            and isinstance(call.func.value, ast.Name) and call.func.value.id == name \
            and len(call.args) == 1 and is_const(call.args[0], False)
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and is_const(stmt.value, False):
        target = stmt.targets[0]
        return isinstance(target, ast.Attribute) and target.attr == "requires_grad" \
            and isinstance(target.value, ast.Name) and target.value.id == name
    return False


