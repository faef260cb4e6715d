"""Builder functions whose every ``return`` hands back a module that surely owns parameters
(issue 24, stop 43).

Networks are often made by a function, not written where they are held: ``self.net =
build_mlp(obs_dim, 2 * act_dim)`` with ::

    def build_mlp(input_dim, output_dim, hidden_units=(64, 64)):
        layers = []
        for units in hidden_units:
            layers.append(nn.Linear(input_dim, units))
            ...
        layers.append(nn.Linear(units, output_dim))
        return nn.Sequential(*layers)

What such a module returns, called with grad on, requires grad, as for an ``nn.Linear`` written
in place; and the builder's result is a module, so calling it gives a tensor. A builder counts
only where that is sure on every path: each of its own returns hands back a construction that
owns parameters (``holds``: a torch layer with parameters, an ``nn.Sequential`` given one, a
parametric class), a name bound once, at the top of its body, to one, or
``nn.Sequential(*layers)`` where ``layers`` is bound once to a list display and surely holds such
a construction before that return: in the display, or added by a statement of the builder's own
body (no loop, branch or ``try`` around it: ``layers.append(...)``, ``layers += [...]``,
``layers.extend([...])``, ``layers.insert(i, ...)``) above the return, the list used no other
way (no ``pop``, no slice assignment, not handed to a call). A loop's appends alone do not count
(the loop may run no turn: spinning-up's ``mlp(sizes)`` with one size is an empty, parameter-free
``Sequential``). A builder that names ``requires_grad`` anywhere (``net.requires_grad_(False)``,
``p.requires_grad = False``) may freeze what it builds: it does not count; nor does a decorated
one (a wrapper returns what it likes; a static or class method counts: ``self._build_net(...)``).
"""

from __future__ import annotations

import ast
from typing import Callable, List, Optional

from codemod.analysis.syntax import FUNCTIONS, Function, own_returns

_SEQUENTIAL = ("torch.nn.Sequential", "torch.nn.modules.container.Sequential")
_ADDERS = ("append", "extend", "insert")

TorchName = Callable[[ast.expr], Optional[str]]
Holds = Callable[[ast.Call], bool]


def parametric_builder(func: Function, torch_name: TorchName, holds: Holds) -> bool:
    """Whether every return of ``func`` (one at least; no generator, no decorator but
    ``staticmethod``/``classmethod``) hands back a module that surely owns parameters (see the
    module's docstring)."""
    returns = own_returns(func)
    wrapped = any(not (isinstance(d, ast.Name) and d.id in ("staticmethod", "classmethod")) for d in func.decorator_list)
    if not returns or wrapped or any(r.value is None for r in returns) or _names_requires_grad(func):
        return False
    return all(_parametric_value(func, r, r.value, torch_name, holds, 0) for r in returns if r.value is not None)


def _names_requires_grad(func: Function) -> bool:
    for node in _own_nodes(func):
        if isinstance(node, ast.Attribute) and node.attr in ("requires_grad", "requires_grad_"):
            return True
        if isinstance(node, ast.keyword) and node.arg == "requires_grad":
            return True
    return False


def _own_nodes(func: Function) -> List[ast.AST]:
    """The nodes of ``func``'s own body (not of a nested function, class or lambda)."""
    found: List[ast.AST] = []
    stack: List[ast.AST] = list(func.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (*FUNCTIONS, ast.ClassDef, ast.Lambda)):
            continue
        found.append(node)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _parametric_value(func: Function, at: ast.stmt, value: ast.expr, torch_name: TorchName, holds: Holds,
                      depth: int) -> bool:
    """``value``, evaluated by the statement ``at`` (a return, or the binding of the name it
    returns), is a module that surely owns parameters."""
    if isinstance(value, ast.Call):
        if holds(value):
            return True
        if torch_name(value.func) in _SEQUENTIAL and len(value.args) == 1 and not value.keywords \
                and isinstance(value.args[0], ast.Starred) and isinstance(value.args[0].value, ast.Name):
            return _list_holds(func, at, value, value.args[0].value.id, holds)
        return False
    if isinstance(value, ast.Name) and depth < 2:
        bound = _top_binding(func, value.id)
        return bound is not None and bound.lineno < at.lineno and not _written_into(func, value.id) \
            and _parametric_value(func, bound, bound.value, torch_name, holds, depth + 1)
    return False


def _top_binding(func: Function, name: str) -> Optional[ast.Assign]:
    """The one binding of ``name`` in ``func``'s own body, a statement of the body itself
    (``name = ...``, one target); None where it is bound otherwise or more than once (an
    augmented assignment counts: ``layers += [...]``)."""
    stores = [n for n in _own_nodes(func) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
    if len(stores) != 1 or name in params:
        return None
    top = [s for s in func.body if isinstance(s, ast.Assign) and len(s.targets) == 1
           and isinstance(s.targets[0], ast.Name) and s.targets[0] is stores[0]]
    return top[0] if top else None


def _written_into(func: Function, name: str) -> bool:
    """``name[i] = ...`` or ``del name[i]``: the module (or list) may lose what it held."""
    return any(isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name
               and not isinstance(n.ctx, ast.Load) for n in _own_nodes(func))


def _list_holds(func: Function, at: ast.stmt, sequential: ast.Call, name: str, holds: Holds) -> bool:
    """``layers`` surely holds a parametric construction where the statement ``at`` builds
    ``nn.Sequential(*layers)`` (``sequential``; see the module's docstring)."""
    stores = [n for n in _own_nodes(func) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)]
    displays = [s for s in func.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name and isinstance(s.value, ast.List)]
    augmented = [n for n in _own_nodes(func) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)
                 and n.target.id == name]
    if len(displays) != 1 or len(stores) != 1 + len(augmented) \
            or any(not isinstance(a.op, ast.Add) or not isinstance(a.value, (ast.List, ast.Tuple)) for a in augmented):
        return False
    display = displays[0]
    elements = display.value.elts if isinstance(display.value, ast.List) else []
    if not _only_added_to(func, name, sequential):
        return False
    if any(isinstance(e, ast.Call) and holds(e) for e in elements):
        return True
    for stmt in func.body:
        if stmt.lineno <= display.lineno or stmt.lineno >= at.lineno:
            continue
        added: List[ast.expr] = []
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            added = list(getattr(stmt.value, "elts", []))
        elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and _adder_of(stmt.value, name):
            call = stmt.value
            method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
            if method == "append":
                added = call.args[:1]
            elif method == "insert":
                added = call.args[1:2]
            elif call.args and isinstance(call.args[0], (ast.List, ast.Tuple)):
                added = list(call.args[0].elts)
        if any(isinstance(e, ast.Call) and holds(e) for e in added):
            return True
    return False


def _adder_of(call: ast.Call, name: str) -> bool:
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in _ADDERS and isinstance(func.value, ast.Name) \
        and func.value.id == name and not call.keywords and not any(isinstance(a, ast.Starred) for a in call.args)


def _only_added_to(func: Function, name: str, sequential: ast.Call) -> bool:
    """Every read of ``name`` in ``func`` adds to the list (``append``/``extend``/``insert``) or
    is the ``*name`` of ``sequential``: nothing takes anything out of it or hands it on."""
    for node in _own_nodes(func):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        if any(node is n for n in ast.walk(sequential)):
            continue
        parent = _parent_in(func, node)
        call = _parent_in(func, parent) if parent is not None else None
        if isinstance(parent, ast.Attribute) and parent.attr in _ADDERS and isinstance(call, ast.Call) \
                and call.func is parent and _adder_of(call, name):
            continue
        return False
    return True


def _parent_in(func: Function, child: ast.AST) -> Optional[ast.AST]:
    for node in _own_nodes(func):
        if any(c is child for c in ast.iter_child_nodes(node)):
            return node
    return None
