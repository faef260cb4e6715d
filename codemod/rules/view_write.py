"""IPF006 view write: in-place writes to views PyTorch refuses to modify (``chunk``/``split``/
``unbind`` outputs, views made under ``no_grad``, views from custom autograd Functions).

The rule's documentation is its class docstring (``inplacefix rule CODE`` prints it)."""

from __future__ import annotations

import ast
import weakref
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, cast

from codemod import torch_api
from codemod.analysis.syntax import is_const, subscript_base, target_key
from codemod.findings import Fix, Status
from codemod.fixes import _cst as cst
from codemod.fixes.edits import clone_of, detach_bindings, fix_title, insert_before, out_of_place_chain, rebind
from codemod.fixes.site import FixSite, Plan
from codemod.rules.augmented_assignment import build_assignment
from codemod.rules.base import Rule, may_write_in_place, twin_keeps_result
from codemod.rules.inplace_argument import find_inplace_arg, find_inplace_cst_arg, without_arg

if TYPE_CHECKING:  # (the rules' table is read without the analysis: ``rules.base``)
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.views import ViewOrigin

_ERRORS = {
    "multi-output": "PyTorch raises \"... is a view and is being modified inplace. This view is the output "
                    "of a function that returns multiple views\"",
    "no-grad": "PyTorch raises \"... created in no_grad mode and is being modified inplace with grad mode "
               "enabled\"",
    "custom-function": "PyTorch raises \"... is a view and is being modified inplace. This view was created "
                       "inside a custom Function\"",
}
_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try,
             ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class ViewWrite(Rule):
    """Write into a copy of views PyTorch refuses to modify in place.

    ## What it does
    Finds in-place writes (`op=`, in-place methods and functions, `inplace=True`, assignment
    into a slice) to a view PyTorch refuses to modify: an output of a function that returns
    several views (`chunk`, `split`, `split_with_sizes`, `unbind`, iterating over or unpacking a tensor;
    the list is generated from torch), including views of one (`q.transpose(1, 2)`, `p[0]`;
    through a function of the file handing back a view of its argument, `q = split_heads(q, h)`,
    or einops' `rearrange`; proven where every step is a view for sure: a `reshape` that splits
    one dimension of the tensor's unpacked shape, a pattern that only splits and reorders)
    and outputs taken by tuple unpacking (`q, k, v = self.qkv(x).chunk(3, -1)`), indexing
    (`parts[0]`, `rows[i]` of `rows = x.unbind()`) or a loop (`for c in x.unbind(1)`), also
    where a function of the project makes them (`a, b = halves(x)`, `halves` returning
    `x.chunk(2, 1)` of its parameter: the tensor viewed is the caller's `x`); a view made
    under `torch.no_grad()` and written with grad on; the output of a custom
    `autograd.Function` whose `forward` returns an input or a view of one (also through a
    function of the file returning it; a return under `if torch.jit.is_scripting():` never
    runs eagerly); such a view bound on a branch of an `if` (`if self.training: s = tag(s)`)
    counts wherever no path from that branch runs the name's other binding before the write;
    and a write into the tensor such a view was taken
    from when the view is read afterwards (PyTorch raises at that read). The fix writes into a copy: `q *= s`
    becomes `q = q * s`, `log_std.clamp_(-20, 2)` becomes `log_std = log_std.clamp(-20, 2)`,
    other writes get `q = q.clone()` before them.

    ## Why is this bad?
    PyTorch raises at the write itself, not at `backward()`: "Output 0 of SplitBackward0 is a
    view and is being modified inplace. This view is the output of a function that returns
    multiple views...", "A view was created in no_grad mode and is being modified inplace with
    grad mode enabled", or "... This view was created inside a custom Function". Where the
    analysis sees that the tensor viewed (or the value written) requires grad, the finding is
    a proven error (`IPF106`, reported by default); where it cannot tell, it is `IPF006`.

    ## Example
    ```python
    q, k, v = self.qkv(x).chunk(3, dim=-1)
    q *= self.scale
    ```
    Use instead:
    ```python
    q, k, v = self.qkv(x).chunk(3, dim=-1)
    q = q * self.scale
    ```

    ## Fix safety
    Safe when nothing reads the tensor viewed (or a name for the same memory: the chain of
    views, the container holding the outputs) after the write: then writing into a copy
    computes what the write meant. The outputs of `chunk`/`split`/`unbind` are disjoint, so
    reading a sibling does not count. A rebinding is used only where it cannot change the
    dtype (a Python number, or a twin that keeps it), else the view is cloned first. Unsafe
    where the viewed tensor is read afterwards (`view-base-read-after`: it would have seen
    the write), or another name aliases the view; also where the written name is not read
    again but the tensor viewed is (`dead-store`: the write only meant to reach it, e.g. a
    loop over `unbind` that de-normalises an image in place). In those two cases a copy would
    hide the write, so the fix makes the outputs ordinary views where an exact form exists:
    iterating `x` becomes `tuple(x[i] for i in range(len(x)))`, `x.unbind(d)` becomes
    `tuple(x.select(d, i) for i in range(x.size(d)))`, `a, b = x.chunk(2, d)` becomes
    `x.tensor_split(2, d)`; the writes then reach the tensor viewed, tracked by autograd, as
    with grad off (unsafe: that tensor may be saved for backward; `repair` verifies). Views
    made under `no_grad` are detached instead, with every other view of the same tensor bound
    in that block (`row = h[0]` becomes `row = h[0].detach()`): of the two meanings PyTorch
    names for them (view and write both inside `no_grad`, or both outside), this is the one
    the program states, since it took the views with grad off; the writes reach the memory,
    untracked, and every later read sees them (unsafe; `repair` verifies). Else the copy,
    unsafe (`view-base-read-after`), or no fix (`dead-store`). A write into the tensor
    viewed, the view read afterwards, gets the ordinary or detached views too, else the
    rebinding, unsafe (`views-read-after`: the views keep the values from before). Writes
    under `no_grad` are allowed by PyTorch and left alone, unless the view (or another output
    of the same call) is then used with grad on: PyTorch raises at that use ("... its base or
    another view of its base has been modified inplace"), reported at the write
    (`no-grad-view-write`), with the ordinary or detached views as an unsafe fix where they
    exist. If the use should see a copy instead, take one where the view is made
    (`v = h[0].clone()`).
    Leaves that require grad are IPF005's.
    """

    CODE = "IPF006"
    POSSIBLE_FORM = False  # PyTorch refuses the write: proven (IPF1xx) or not known to require grad (IPF0xx)
    NAME = "view-write"
    HAZARD_FORM = ("where the analysis proves PyTorch raises: the tensor viewed (or a value written) "
                   "requires grad, so the write into a view PyTorch refuses fails at once, or at the "
                   "later use of the view, with \"... is a view and is being modified inplace\" (no "
                   "tensor saved for backward is involved)")
    TRIGGERS = (rb"(?:[-+*/%&|^@]|\*\*|//|<<|>>)=", rb"\][\s\\]*=(?!=)", rb"[A-Za-z]\w*_\s*\(", rb"inplace")

    def __init__(self, model: SemanticModel) -> None:
        super().__init__(model)
        self.plans = ViewWritePlans(self)

    @classmethod
    def could_start(cls, node: ast.AST) -> bool:
        if isinstance(node, ast.Call) and any(k.arg == "inplace" for k in node.keywords):
            return True
        if isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "self":
            return True  # `self.act(v)`: a module that may run in place (see `_in_place_module`)
        return may_write_in_place(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check(node, node.target, [node.value])

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            if isinstance(target, ast.Subscript):
                self._check(node, target, [node.value])
                return

    def visit_Call(self, node: ast.Call) -> None:
        name = self.model.torch_name(node.func)
        if name is not None:
            if name in torch_api.INPLACE_FUNCTIONS and node.args and not isinstance(node.args[0], ast.Starred):
                self._check(node, node.args[0], node.args[1:])
            index = torch_api.INPLACE_PARAM_CALLABLES.get(name)
            if index is not None and not name.rsplit(".", 1)[-1][:1].isupper() and node.args \
                    and not isinstance(node.args[0], ast.Starred):
                arg = find_inplace_arg(node, index)
                value = arg.value if isinstance(arg, ast.keyword) else arg
                if is_const(value, True):
                    self._check(node, node.args[0], [])
            return
        func = node.func
        if self._in_place_module(node):
            self._check(node, node.args[0], [])
            return
        if not (isinstance(func, ast.Attribute) and func.attr in torch_api.INPLACE_METHODS):
            return
        parent = self.model.parent(node)
        if isinstance(parent, ast.Attribute) and isinstance(self.model.parent(parent), ast.Call) \
                and parent.attr in torch_api.INPLACE_METHODS:
            return  # `c.mul_(s).add_(m)`: the outer call reports the chain
        chain: List[ast.Call] = []
        receiver: ast.expr = node
        while isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute) \
                and receiver.func.attr in torch_api.INPLACE_METHODS:
            chain.append(receiver)
            receiver = receiver.func.value
        operands = [a for c in chain for a in (*c.args, *(k.value for k in c.keywords))]
        self._check(node, receiver, operands, chain)

    def _in_place_module(self, call: ast.Call) -> bool:
        """``self.act(v)`` where the class sets ``self.act`` only to activations that run in
        place (``nn.ReLU(inplace=True)``; not dropouts, which write only in training)."""
        key = target_key(call.func)
        if key is None or not key.startswith("self.") or key.count(".") != 1 \
                or len(call.args) != 1 or isinstance(call.args[0], ast.Starred) or call.keywords:
            return False  # (before the class is looked for: most calls end here)
        cls = self.model.enclosing_class(call.func)
        if cls is None:
            return False
        values = self.model.class_attrs(cls).get(key[5:], [])
        for value in values:
            name = self.model.torch_name(value.func) if isinstance(value, ast.Call) else None
            short = (name or "").rsplit(".", 1)[-1]
            if name is None or f"torch.nn.{short}" not in torch_api.INPLACE_PARAM_CALLABLES \
                    or not short[:1].isupper() or "Dropout" in short \
                    or self.model.summaries.chains.runs_in_place(cast(ast.Call, value), name) is not True:
                return False
        return bool(values)

    # ------------------------------------------------------------------ the decision
    def _check(self, node: ast.AST, target: ast.expr, operands: List[ast.expr],
               chain: Optional[List[ast.Call]] = None) -> None:
        stmt = self.model.statement_of(node)
        name = subscript_base(target)
        if not isinstance(name, ast.Name):
            return
        views = self.model.views
        if self.model.intended_reason(node, None) == "no-grad":
            self._check_no_grad(node, name, stmt)
            return
        origin = views.refused(target, stmt, operands)
        if self.model.leaves.origin(target, stmt) is not None or self.model.intended_reason(node, target):
            return  # a leaf (IPF005's family: PyTorch says so first), or grad off: allowed
        if origin is None:
            self._check_base(node, name, target, stmt, operands, chain)
            return
        base = views.base_requires_grad(origin)
        written = [views.requirement.requires_grad(o, stmt) for o in operands]
        # A view in a trained layer's forward is of an activation, unless the tensor viewed is shown
        # to require no grad (`arange` positions): then only a value written that does proves it.
        proven = origin.certain and (base == "yes" or "yes" in written or (
            base != "no" and views.requirement.activation(self.model.statement_of(origin.creation))))
        message = f"In-place write to `{name.id}`, {self._what(origin)}"
        hazard = _ERRORS[origin.kind] if proven else None
        if not proven:
            message += " (refused by PyTorch when it requires grad)"
        status, reason = self._safety(name, stmt, origin)
        plan = None
        if reason in ("view-base-read-after", "dead-store"):
            # In place the write reaches the tensor viewed, which is read afterwards: the fix
            # makes the views ordinary ones, so that it still does (a copy would hide it).
            plan = self.plans._ordinary_views(origin) or self.plans._detached_views(origin)
            if plan is not None:
                status = Status.UNSAFE
        if plan is None and status in (Status.SAFE, Status.UNSAFE):
            plan = self.plans._plan(node, target, stmt, operands, chain)
            if plan is None:
                status, reason = Status.MANUAL, "unsupported-target"
        self.report(node, message, status, reason, plan, hazard=hazard)

    def _check_no_grad(self, node: ast.AST, name: ast.Name, stmt: ast.AST) -> None:
        """A write with grad off (``no_grad``, ``inference_mode``) into a refused view: PyTorch allows it, then raises where
        the view (or another output of the same call) is used with grad on. No fix: whether the
        write should reach the tensor viewed, or the later use should see a copy, is yours."""
        views = self.model.views
        origin = views.origin(name, stmt)
        if origin is None or not origin.certain:
            return
        requires = views.base_requires_grad(origin)
        read = views.later.read_with_grad_after(name, stmt, origin) if requires != "no" else None
        if read is None:
            return
        turn = ", on the loop's next turn" if (read.lineno, read.col_offset) < (stmt.lineno, stmt.col_offset) else ""
        message = (f"In-place write under `no_grad` to `{name.id}`, {self._what(origin)}, then `{read.id}` "
                   f"used with grad on at line {read.lineno}{turn}")
        hazard = None
        if requires == "yes":
            hazard = ("PyTorch raises \"... is a view and its base or another view of its base has been "
                      "modified inplace\" at that use")
        else:
            message += " (refused by PyTorch when it requires grad)"
        plan = self.plans._ordinary_views(origin) or self.plans._detached_views(origin)
        status = Status.UNSAFE if plan is not None else Status.MANUAL
        self.report(node, message, status, "no-grad-view-write", plan, hazard=hazard)

    def _check_base(self, node: ast.AST, name: ast.Name, target: ast.expr, stmt: ast.AST,
                    operands: List[ast.expr], chain: Optional[List[ast.Call]]) -> None:
        """A write into the tensor a refused view was taken from, the view read afterwards:
        PyTorch raises at that read. The fix writes into a copy of the tensor instead, so the
        views keep the values from before the write: unsafe (in place they would see it)."""
        found = self.model.views.viewed_by(target, stmt, operands)
        if found is None:
            return
        view, origin = found
        views = self.model.views
        proven = views.base_requires_grad(origin) == "yes"
        message = f"In-place write to `{name.id}`, whose view `{view}` ({self._what(origin)}) is read afterwards"
        hazard = None
        if proven:
            hazard = ("PyTorch raises \"... is a view and its base or another view of its base has been "
                      "modified inplace\" where the view is read")
        else:
            message += " (refused by PyTorch when it requires grad)"
        status, reason = Status.UNSAFE, "views-read-after"
        plan = self.plans._ordinary_views(origin) or self.plans._detached_views(origin)  # the views then see the write, as in place
        problem = self.model.rebinding_problem(name)
        if problem and plan is None:
            status, reason = Status.MANUAL, problem
        if plan is None and status is Status.UNSAFE:
            plan = self.plans._plan(node, target, stmt, operands, chain)
        if status is Status.UNSAFE and plan is None:
            status, reason = Status.MANUAL, "unsupported-target"
        self.report(node, message, status, reason, plan, hazard=hazard)

    def _what(self, origin: ViewOrigin) -> str:
        line = getattr(origin.creation, "lineno", 0)
        creation = origin.creation
        func = creation.func if isinstance(creation, ast.Call) else None
        if origin.kind == "custom-function":
            through = target_key(func) if func is not None and not (
                isinstance(func, ast.Attribute) and func.attr == "apply") else None
            if through:  # a function of the file returning the Function's output
                return f"a view of a custom autograd Function, returned by `{through}()` at line {line}"
            return f"a view returned by the custom autograd Function at line {line}"
        if origin.kind == "no-grad":
            return f"a view made under `no_grad` at line {line}"
        op = func.attr if isinstance(func, ast.Attribute) else (self.model.torch_name(func) or "") \
            if func is not None else ""
        if not op and isinstance(func, ast.Name):
            op = func.id  # the file's own function returning the views (`halves(x)`)
        op = op.rsplit(".", 1)[-1]
        return f"an output of `{op}()` at line {line}" if op else f"a view from iterating a tensor at line {line}"

    def _safety(self, name: ast.Name, stmt: ast.AST, origin: ViewOrigin):  # type: ignore[no-untyped-def]
        """(status, reason): safe when nothing else that holds the same memory is read after."""
        views = self.model.views
        if self.model.shared_name(name):
            return Status.UNSAFE, "shared-name"
        problem = self.model.rebinding_problem(name)
        if problem:
            return Status.MANUAL, problem
        held = plain_binding_holds(self.model, name, stmt, origin)
        if held:  # `else: q = self.acc`: on that path the write is the buffer's update
            return Status.UNSAFE, held
        readers = [k for k in origin.sharers if k != name.id and views.later.read_after(k, stmt)]
        overlapping = views.later.overlapping_view_read_after(name, stmt, origin)
        if overlapping is not None:
            readers.append(overlapping)
        alias = self.model.alias_report(name, stmt)
        if alias.reason in ("alias", "view-alias"):
            readers.append(alias.reason)
        if not readers:
            return Status.SAFE, None
        if not views.later.read_after(name.id, stmt):
            return Status.MANUAL, "dead-store"
        return Status.UNSAFE, "view-base-read-after"


def plain_binding_holds(model: "SemanticModel", name: ast.Name, stmt: ast.AST, origin: "ViewOrigin") -> Optional[str]:
    """Where another binding of ``name`` than the view's reaches the write (the multi-output
    view made on one branch of an ``if``), whether on that path the name holds a tensor kept
    elsewhere: the caller's (a parameter), or one another name or attribute holds
    (``q = self.acc``). There the write is the program's update of that tensor, which a
    rebinding would drop: the reason, else None."""
    dataflow = model.dataflow
    owner = model.tree.owner(stmt)
    flow = model.binder.flow(owner)
    made = model.tree.statement_of(origin.creation)
    for b in dataflow.reaching(flow, name.id, stmt):
        if b.stmt is made or b.form == "aug":
            continue
        if b.form == "assign" and b.value is not None:
            same = model.views.value_origin(b.value, b.stmt)
            if same is not None and same.creation is origin.creation:
                continue  # `t_flat = t.reshape(-1)` of the view `t`: the view itself, reshaped
        if b.form == "param":
            return "param-mutation"
        source = dataflow.alias_source(b.value)[0] if b.form == "assign" else None
        if source is not None and source != name.id and source not in origin.sharers:
            return "held-elsewhere"  # (`q = q.view(...)`: the view itself, reshaped)
    return None


class ViewWritePlans:
    """The fixes of view-write: ordinary views, detached views, a rebinding or a clone, one plan per call or block."""

    def __init__(self, rule: "ViewWrite") -> None:
        self.rule = weakref.proxy(rule)  # weakly: the rule owns this part (no cycle to collect)
        self.model = rule.model
        self.source = rule.source
        self._ordinary: Dict[int, Optional[Plan]] = {}  # id(the call making the views) -> its plan
        self._detached: Dict[Tuple[int, ...], Plan] = {}  # the bindings a detach plan rewrites -> the plan

    def _ordinary_views(self, origin: ViewOrigin) -> Optional[Plan]:
        """Make the outputs of the call ordinary views of the same memory, so that writes into
        them reach the tensor viewed with autograd tracking them, as PyTorch computes the
        program with grad off: ``x.unbind(d)`` -> ``tuple(x.select(d, i) for i in
        range(x.size(d)))``, iterating ``x`` -> ``tuple(x[i] for i in range(len(x)))``,
        ``a, b = x.chunk(2, d)`` -> ``x.tensor_split(2, d)`` (the same pieces for two). One
        plan per call, shared by every write into its outputs. None where no such form is exact."""
        if origin.kind != "multi-output" or not origin.certain:
            return None
        creation = origin.creation
        if id(creation) not in self._ordinary:
            self._ordinary[id(creation)] = self._ordinary_plan(creation)
        return self._ordinary[id(creation)]

    def _ordinary_plan(self, creation: ast.expr) -> Optional[Plan]:
        for scope in self.model.tree.ancestors(creation):
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                break
            if isinstance(scope, ast.ClassDef):
                return None  # a class body's names are not seen inside a generator
        used = {n.id for n in ast.walk(creation) if isinstance(n, ast.Name)}
        i = next(n for n in ("i", "j", "k", "idx", "index", "_i") if n not in used)
        if isinstance(creation, ast.Name):  # iterating a tensor
            text = f"tuple({creation.id}[{i}] for {i} in range(len({creation.id})))"
            return self._replace_with(creation, "Name", text)
        if not isinstance(creation, ast.Call) or self.model.views.making.direct_multi_view_base(creation) is None:
            return None  # (a call of the file's own function returning the views: no exact rewrite of it)
        func = creation.func
        if not isinstance(func, ast.Attribute):
            return None
        torch_func = self.model.torch_name(func) is not None
        args = list(creation.args[1:] if torch_func else creation.args)
        base = creation.args[0] if torch_func and creation.args else (None if torch_func else func.value)
        if func.attr == "unbind" and isinstance(base, ast.Name):
            dims = args + [k.value for k in creation.keywords if k.arg == "dim"]
            if len(dims) > 1 or len(creation.keywords) > (len(dims) - len(args)) \
                    or any(not isinstance(d, (ast.Constant, ast.Name)) for d in dims):
                return None
            dim = ast.unparse(dims[0]) if dims else "0"
            text = f"tuple({base.id}.select({dim}, {i}) for {i} in range({base.id}.size({dim})))"
            return self._replace_with(creation, "Call", text)
        parent = self.model.parent(creation)
        two = (isinstance(parent, ast.Assign) and len(parent.targets) == 1
               and isinstance(parent.targets[0], (ast.Tuple, ast.List)) and len(parent.targets[0].elts) == 2
               and not any(isinstance(e, ast.Starred) for e in parent.targets[0].elts))
        if func.attr == "chunk" and two and args and isinstance(args[0], ast.Constant) \
                and type(args[0].value) is int and args[0].value == 2 \
                and all(k.arg == "dim" for k in creation.keywords):
            def make(attr: cst.Name, site: FixSite) -> Fix:
                return Fix(attr, lambda n: n.with_changes(value="tensor_split"), "Rewrite `chunk(2)` as `tensor_split(2)`")

            line, end = func.end_lineno or func.lineno, func.end_col_offset or 0  # the name after the dot
            return Plan((line, self.source.char_column(line, end - len(func.attr))), "Name", make)
        return None

    def _detached_views(self, origin: ViewOrigin) -> Optional[Plan]:
        """Detach the views made under ``no_grad`` (``row = h[0]`` -> ``row = h[0].detach()``,
        and every other view of the same tensor bound in that block): PyTorch's "view and write
        both inside no_grad" meaning, spelled out so that it holds with grad on too. The views
        keep sharing the memory, so writes into them reach the tensor viewed and every later
        read sees them; autograd tracks neither the views nor the writes, as the block said.
        One plan per block and tensor viewed, shared by every write it concerns. None where a
        view of the tensor there cannot take a ``.detach()`` (``a, b = h.chunk(2)``, ``for r in
        h``)."""
        found = self.model.views.later.views_made_with_it(origin)
        if found is None:
            return None
        block, bindings = found
        key = tuple(id(b) for b in bindings)  # per block and tensor viewed
        if key not in self._detached:
            self._detached[key] = self._detach_plan(block, bindings)
        return self._detached[key]

    def _detach_plan(self, block: ast.AST, bindings: List[ast.Assign]) -> Plan:
        names = [cast(ast.Name, b.targets[0]).id for b in bindings]
        wanted = {(name, ast.dump(b.value)) for name, b in zip(names, bindings)}
        shown = ", ".join(f"`{name} = {ast.unparse(b.value)}.detach()`" for name, b in zip(names, bindings))
        title = f"Detach the views made under `no_grad`: {shown}"

        def make(node: cst.CSTNode, site: FixSite) -> Fix:
            return Fix(node, lambda n: detach_bindings(n, wanted), title)

        return self.rule.plan(block, "AsyncWith" if isinstance(block, ast.AsyncWith) else "With", make)

    def _replace_with(self, node: ast.expr, node_type: str, text: str) -> Plan:
        new = cst.parse_expression(text)

        def make(old: cst.BaseExpression, site: FixSite) -> Fix:
            return Fix(old, lambda n: new.with_changes(lpar=n.lpar, rpar=n.rpar), fix_title(new))  # type: ignore[attr-defined]

        return self.rule.plan(node, node_type, make)

    def _plan(self, node: ast.AST, target: ast.expr, stmt: ast.AST, operands: List[ast.expr],
              chain: Optional[List[ast.Call]]) -> Optional[Plan]:
        """A rebinding where it keeps the dtype, else a clone before the write; none for an
        element of a name holding a multi-view call's outputs (``rows[i].mul_(g)``: a tuple)."""
        subscript = target
        while isinstance(subscript, ast.Subscript):
            if isinstance(subscript.value, ast.Name) and self.model.views.holds_outputs(subscript.value, stmt):
                return None
            subscript = subscript.value
        key = target_key(target)
        if isinstance(node, ast.AugAssign) and key is not None \
                and not self.model.may_promote(key, operands, target, node):
            def make_aug(aug: cst.AugAssign, site: FixSite) -> Fix:
                return Fix(aug, lambda n: build_assignment(n), fix_title(build_assignment(aug)))

            return self.rule.plan(node, "AugAssign", make_aug)
        parent = self.model.parent(node)
        if chain and key is not None and isinstance(parent, ast.Expr) \
                and all(torch_api.INPLACE_METHODS[c.func.attr] and twin_keeps_result(c)
                        for c in chain if isinstance(c.func, ast.Attribute)):
            keeps = [a for c in chain if isinstance(c.func, ast.Attribute)
                     and c.func.attr[:-1] not in torch_api.SAME_DTYPE_TWINS
                     for a in (*c.args, *(k.value for k in c.keywords))]
            if not self.model.may_promote(key, keeps, target):
                def build(expr: cst.Expr) -> cst.Assign:
                    return rebind([cst.parse_expression(key)], out_of_place_chain(expr.value), like=expr)  # type: ignore[arg-type]

                def make_chain(expr: cst.Expr, site: FixSite) -> Fix:
                    return Fix(expr, build, fix_title(build(expr)))

                return self.rule.plan(parent, "Expr", make_chain)
        if isinstance(node, ast.Call) and key is not None and isinstance(parent, ast.Expr) and not chain:
            rebound = self._function_rebinding(node, key)
            if rebound is not None:
                return self.rule.plan(parent, "Expr", rebound)
        name = subscript_base(target)
        return self._clone_plan(name.id, stmt) if isinstance(name, ast.Name) else None

    def _function_rebinding(self, call: ast.Call, key: str):  # type: ignore[no-untyped-def]
        """``torch.relu_(a)`` -> ``a = torch.relu(a)``; ``F.relu(a, inplace=True)`` ->
        ``a = F.relu(a)`` (a statement of its own, its first argument the view)."""
        name = self.model.torch_name(call.func) or ""
        if name in torch_api.INPLACE_FUNCTIONS:
            twin = torch_api.INPLACE_FUNCTIONS[name]
            if twin is None or not isinstance(call.func, ast.Attribute) or len(call.args) != 1 or call.keywords:
                return None
            short = twin.rsplit(".", 1)[-1]

            def convert(c: cst.Call) -> cst.Call:
                return c.with_changes(func=c.func.with_changes(attr=cst.Name(short)))  # type: ignore[attr-defined]
        elif name in torch_api.INPLACE_PARAM_CALLABLES:
            index = torch_api.INPLACE_PARAM_CALLABLES[name]

            def convert(c: cst.Call) -> cst.Call:
                return without_arg(c, find_inplace_cst_arg(c, index))
        else:
            return None

        def build(expr: cst.Expr) -> cst.Assign:
            return rebind([cst.parse_expression(key)], convert(expr.value), like=expr)  # type: ignore[arg-type]

        def make(expr: cst.Expr, site: FixSite) -> Fix:
            return Fix(expr, build, fix_title(build(expr)))

        return make

    def _clone_plan(self, key: str, stmt: ast.AST) -> Optional[Plan]:
        """``key = key.clone()`` inserted before the statement of the write."""
        if isinstance(stmt, _COMPOUND):
            return None

        def make(small: cst.BaseSmallStatement, site: FixSite) -> Fix:
            container, index = site.container(small)
            clone = clone_of(key)
            return Fix(container, lambda c: insert_before(c, index, clone), fix_title(clone, "Insert"), order=index)

        return self.rule.plan(stmt, "BaseSmallStatement", make)
