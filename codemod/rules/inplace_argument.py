"""IPF002 inplace argument: ``inplace=True`` -> ``inplace=False`` on torch callables.

The rule's documentation is its class docstring (``inplacefix rule CODE`` prints it)."""

from __future__ import annotations

import ast
from typing import Optional

from codemod import torch_api
from codemod.analysis.syntax import is_const, target_key
from codemod.findings import Fix, Status
from codemod.fixes import _cst as cst
from codemod.fixes.edits import fix_title, rebind
from codemod.rules.base import Rule
from codemod.rules.safety import assess


def find_inplace_arg(call: ast.Call, index: int) -> Optional[ast.AST]:
    """The ``inplace`` argument: its keyword, or the positional expression at ``index``."""
    for keyword in call.keywords:
        if keyword.arg == "inplace":
            return keyword
    positional = []
    for arg in call.args:
        if isinstance(arg, ast.Starred):
            break
        positional.append(arg)
    return positional[index] if index < len(positional) else None


def find_inplace_cst_arg(call: cst.Call, index: int) -> Optional[cst.Arg]:
    """The same argument in libcst's tree."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "inplace":
            return arg
    positional = []
    for arg in call.args:
        if arg.keyword is not None or arg.star:
            break
        positional.append(arg)
    return positional[index] if index < len(positional) else None


def turn_off(arg: cst.Arg, site=None) -> Fix:
    """``inplace=True`` -> ``inplace=False``; a positional ``True`` -> ``False``."""
    title = "Rewrite as `inplace=False`" if arg.keyword else "Pass `False` for `inplace`"
    return Fix(arg, lambda a: a.with_changes(value=cst.Name("False")), title)


def without_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    args = [a for a in call.args if not a.deep_equals(arg)]
    if args:
        args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=args)


class InplaceArgument(Rule):
    """Turn `inplace=True` off on torch activations and dropouts.

    ## What it does
    Finds calls that resolve to a torch callable taking ``inplace`` (``nn.ReLU``,
    ``nn.LeakyReLU(0.2, True)``, ``F.relu(x, inplace=True)``, ``F.dropout``...; the list is
    generated from torch into ``torch_api.py``), by keyword or by position, and turns
    ``inplace`` off. Callees are resolved through imports, so ``df.drop(..., inplace=True)`` or
    an unknown ``ReLU`` are never touched. A call that stands alone as a statement relies on the
    mutation, so ``F.relu(x, inplace=True)`` becomes ``x = F.relu(x)``. Also reports
    ``self.drop.inplace = True`` written in ``__init__`` after ``self.drop = nn.Dropout(p)`` (both
    statements of its own body, the file's only write of a module's flag): the module then runs
    in place at every call.

    ## Why is this bad?
    An in-place activation overwrites its input. When the layer before it saved that input
    for backward (a ``sigmoid``, a ``LayerNorm``, a residual branch reading it again),
    ``backward()`` fails with the in-place error, or silently uses the wrong values for ops
    that save nothing but share memory.

    ## Example
    ```python
    self.act = nn.ReLU(inplace=True)
    ```
    Use instead:
    ```python
    self.act = nn.ReLU(inplace=False)
    ```

    ## Fix safety
    A module constructor's fix is safe unless a call site of that module in the same class or
    function discards its result (``self.act(x)`` alone: ``mutation-relied-on``) or reads its
    input again later (``y = self.act(x)``, then ``x + y``: ``input-used-later``). A functional
    call's fix is unsafe when its input is a parameter the caller may rely on
    (``param-mutation``) or a name used again later, which would no longer see the change
    (``input-used-later``). Run on a leaf that requires grad (``self.act(self.weight)`` of an
    ``nn.Parameter``, ``F.relu(w, inplace=True)``), the write raises with grad on: proven (the
    leaf error), the fix's safety decided as above. ``inplace=<variable>`` is reported without a fix
    (``dynamic-inplace``; a flag ``self.<attr>`` that no code in view sets, only a base class the
    analysis cannot see, ``self.inplace`` of a subclass of ``nn.Dropout``, is unknown: its hazard is
    possible, not proven), and so is a ``**params`` spread whose every dict passes ``inplace=True``
    (``BuiltLayers.spread_flags``), and a flag switched on after the module is built
    (``flag-set-after``). The fix costs memory: the activation gets its own output tensor.
    """

    CODE = "IPF002"
    NAME = "inplace-argument"
    TRIGGERS = (rb"inplace", rb"[(,]\s*True\s*[,)]")

    @classmethod
    def could_start(cls, node: ast.AST) -> bool:
        if isinstance(node, ast.Assign):  # self.drop.inplace = True
            return any(isinstance(t, ast.Attribute) and t.attr == "inplace" for t in node.targets)
        return any(k.arg in ("inplace", None) for k in node.keywords) or any(  # (`**params`: see visit_Call)
            isinstance(a, ast.Constant) and a.value is True for a in node.args  # nn.ReLU(True)
        )

    def visit_Assign(self, node: ast.Assign) -> None:
        """``self.drop.inplace = True`` in ``__init__`` after the module is built: as
        ``inplace=True`` given to its constructor. Reported where the file shows which module it
        switches (``switched_on``), without a fix (``flag-set-after``)."""
        from codemod.analysis.summaries import switched_on  # heavy: not at import (warm runs)

        write = node.targets[0] if len(node.targets) == 1 else None
        if not isinstance(write, ast.Attribute) or switched_on(self.model, write) is None:
            return
        hazard = self.model.hazards.modules.explain_switched_on(write)
        self.report(write, f"`{self.code(write.value)}` is switched to run in place after it is built",
                    Status.MANUAL, "flag-set-after", hazard=hazard)

    def visit_Call(self, node: ast.Call) -> None:
        from codemod.analysis.summaries import param_class  # heavy: not at import (warm runs)

        name = self.model.torch_name(node.func) or param_class(self.model.summaries.chains, node)
        index = torch_api.INPLACE_PARAM_CALLABLES.get(name)
        if index is None:
            return
        arg = find_inplace_arg(node, index) or self._spread_in_place(node, name)
        if arg is None:
            return
        value = arg.value if isinstance(arg, ast.keyword) else arg
        if is_const(value, False):
            return
        short = name.rsplit(".", 1)[-1]
        message = f"`{short}` runs in place (`{self.code(arg).strip().rstrip(',')}`)"
        constructor = short[:1].isupper()
        first = node.args[0] if node.args and node.args[0] is not arg else None
        if constructor:
            leaf = next(filter(None, (self._leaf_input(site) for site in self._sites(node))), None)
            hazard = leaf or self.model.hazards.modules.explain_module(node)
        else:
            usable = first is not None and not isinstance(first, ast.Starred)
            leaf = self._leaf_input(node) if usable else None
            hazard = leaf or (self.hazard(node, first) if usable else None)
        if not is_const(value, True):
            if hazard and not isinstance(hazard, str) and hazard.proven and self._unseen_flag(value):
                from codemod.analysis.hazard import Hazard, Tier

                hazard = Hazard(f"{hazard.reason}, if `{self.code(value)}` is True (nothing in view sets it)",
                                Tier.POSSIBLE)
            elif hazard and not isinstance(hazard, str) and hazard.proven and not constructor and first is not None:
                hazard = leaf or self._flagged(node, first, value, hazard)
            self.report(arg, message, Status.MANUAL, "dynamic-inplace", hazard=hazard)
        elif constructor:
            self._constructor(node, arg, message, hazard)
        else:
            self._functional(node, arg, index, message, hazard)

    def _unseen_flag(self, value: ast.expr) -> bool:
        """``self.<attr>`` whose value no code the analysis sees gives (only a base class it cannot
        see sets it, ``self.inplace`` of a subclass of ``nn.Dropout``, False unless a construction
        hands ``inplace=True``; ``Classes.sets_attribute``, and no ``<x>.<attr> = ...`` in the module):
        unknown, not True, so the write it switches on is possible, not proven."""
        key = target_key(value)
        cls = self.model.enclosing_class(value)
        if key is None or not key.startswith("self.") or key.count(".") != 1 or cls is None:
            return False
        attr = key[5:]
        return not self.model.classes.sets_attribute(cls, attr) and not self.model.attribute_writes(attr)

    def _flagged(self, node: ast.Call, first: ast.expr, value: ast.expr, hazard):
        """``F.dropout(x, inplace=inplace)`` where ``inplace`` is a parameter defaulting to False
        (``hazard.flag_parameter``): a call that leaves it out runs the op out of place, so only the
        calls passing it count (``hazard.explain_flagged``); where every call in view leaves it
        out (``flag_off_at_every_call``) the hazard is possible, not proven."""
        from codemod.analysis.hazard import (Hazard, Tier, explain_flagged, flag_off_at_every_call,  # heavy: not at import
                                             flag_parameter)

        flag = flag_parameter(self.model, value)
        if flag is None:
            return hazard
        if flag_off_at_every_call(self.model.hazards, flag):
            return Hazard(f"{hazard.reason}, if `{self.code(value)}` is True (it defaults to False, and no call in view "
                          "passes it)", Tier.POSSIBLE)
        return explain_flagged(self.model.hazards, node, first, flag)

    def _spread_in_place(self, node: ast.Call, name: str) -> Optional[ast.keyword]:
        """``act_layer(**params)`` where a dict ``params`` may be passes ``inplace=True``
        (``BuiltLayers.spread_flags``: every dict it may be is known): its ``**params``,
        reported as a dynamic flag, as ``inplace=inplace`` is."""
        spread = [k for k in node.keywords if k.arg is None]
        if len(spread) != 1 or not name.rsplit(".", 1)[-1][:1].isupper() or any(k.arg == "inplace" for k in node.keywords):
            return None
        flags = self.model.summaries.chains.built.spread_flags(node)
        return spread[0] if flags is not None and True in flags else None

    def _leaf_input(self, site: ast.Call) -> Optional[str]:
        """Why running in place at ``site`` (``self.act(self.weight)``, ``F.relu(w, inplace=True)``)
        raises: its input is a leaf that requires grad (an ``nn.Parameter``, a tensor made with
        ``requires_grad=True``: ``Leaves.origin``, known) written with grad on. None otherwise."""
        first = site.args[0] if site.args and not isinstance(site.args[0], ast.Starred) else None
        if first is None or self.model.intended_reason(site, first):
            return None
        origin = self.model.leaves.origin(first, self.model.statement_of(site))
        if origin is None or not origin.known:
            return None
        return (f"its input at line {site.lineno}, {origin.what}, is a leaf that requires grad: PyTorch "
                "raises \"a leaf Variable that requires grad is being used in an in-place operation\"")

    def _turn_off(self, arg: ast.AST):
        return self.plan(arg, "Arg", turn_off)

    # nn.ReLU(inplace=True): fixed where the module is built.
    def _constructor(self, node: ast.Call, arg: ast.AST, message: str, hazard) -> None:
        status, reason = Status.SAFE, None
        sites = self._sites(node)
        from codemod.analysis.hazard import called_elsewhere  # (as `safety` does: the analysis is imported when used)

        builder = self.model.summaries.chains.factories.builder_of(node)
        if builder is not None and called_elsewhere(self.model, builder):
            status, reason = Status.UNSAFE, "builder-called-elsewhere"  # (its other calls' sites are not seen)
        elif any(isinstance(self.model.parent(c), ast.Expr) for c in sites):
            status, reason = Status.UNSAFE, "mutation-relied-on"
        elif any(self._input_read_after(c) for c in sites):
            status, reason = Status.UNSAFE, "input-used-later"
        self.report(arg, message, status, reason, self._turn_off(arg), hazard=hazard)

    def _sites(self, node: ast.Call) -> list:
        """The calls of the module built here (``self.act = nn.ReLU(True)``: ``self.act(...)``;
        returned by a builder of the file, ``self.drop = self.__dropout()``: ``self.drop(...)``)."""
        factories = self.model.summaries.chains.factories
        builder = factories.builder_of(node)
        placed = factories.calls_of(builder) if builder is not None else [node]
        return [site for call in placed for site in self._bound_calls(call)]

    def _bound_calls(self, node: ast.Call) -> list:
        parent = self.model.parent(node)
        if not isinstance(parent, ast.Assign) or len(parent.targets) != 1:
            return []
        key = target_key(parent.targets[0])
        if key is None:
            return []
        scope = self.model.enclosing_class(node) if key.startswith("self.") else self.model.owner(node)
        if scope is None:
            return []
        return list(self.model.calls_in(scope).get(key, []))

    def _input_read_after(self, site: ast.Call) -> bool:
        """``y = self.act(x)`` and ``x`` read again later (``x + y``): in place, that read sees
        the activation's result; turned off, it would see the input as it was."""
        first = site.args[0] if site.args and not isinstance(site.args[0], ast.Starred) else None
        key = target_key(first) if first is not None else None
        if key is None:
            return False
        stmt = self.model.statement_of(site)
        if isinstance(stmt, ast.Assign) and any(target_key(t) == key for t in stmt.targets):
            return False  # `x = self.act(x)`: the name holds the result from here on
        return self.model.used_after(self.model.flow(self.model.owner(site)), key, self.model.range(stmt))

    # F.relu(x, inplace=True): the input stops being mutated.
    def _functional(self, node: ast.Call, arg: ast.AST, index: int, message: str, hazard) -> None:
        first = node.args[0] if node.args and node.args[0] is not arg else None
        if first is None and node.keywords and node.keywords[0] is not arg:
            first = node.keywords[0]
        if isinstance(first, (ast.Starred, ast.keyword)):
            self.report(node, message, Status.UNSAFE, "input-used-later", self._turn_off(arg), hazard=hazard)
            return  # the input is hidden in *args or passed by keyword: it may be read later
        parent = self.model.parent(node)
        if isinstance(parent, ast.Expr):  # a statement: it relies on the mutation
            if first is None or target_key(first) is None:
                self.report(node, message, Status.MANUAL, "unsupported-target", hazard=hazard)
                return
            verdict = assess(self.model, 
                node, first, creates_binding=True, dtype_neutral=True, known_tensor=True
            )
            if verdict.status is None:
                return
            plan = None
            if verdict.status in (Status.SAFE, Status.UNSAFE):
                also = verdict.also_rebind

                def build(expr: cst.Expr, also=also) -> cst.Assign:
                    call = without_arg(expr.value, find_inplace_cst_arg(expr.value, index))
                    return rebind([call.args[0].value.deep_clone()], call, also, like=expr)

                def make(expr: cst.Expr, site) -> Fix:
                    return Fix(expr, build, fix_title(build(expr)))

                plan = self.plan(parent, "Expr", make)
            self.report(node, message, verdict.status, verdict.reason, plan, hazard=hazard)
            return
        status, reason = Status.SAFE, None
        if first is not None and target_key(first) is not None:
            intended = self.model.intended_reason(node, first)
            if intended:
                self.report(node, message, Status.SKIPPED, intended, hazard=hazard)
                return
            status, reason = self._input_still_needed(node, first)
        else:
            intended = self.model.intended_reason(node, None)
            if intended:
                self.report(node, message, Status.SKIPPED, intended, hazard=hazard)
                return
        self.report(node, message, status, reason, self._turn_off(arg), hazard=hazard)

    def _input_still_needed(self, node: ast.Call, first: ast.AST):
        stmt = self.model.statement_of(node)
        report = self.model.alias_report(first, stmt)
        if report.reason in ("param-mutation", "mutation-as-output"):
            return Status.UNSAFE, "param-mutation"
        rebinds_input = isinstance(stmt, ast.Assign) and any(
            target_key(t) == target_key(first) for t in stmt.targets
        )
        owner = self.model.owner(node)
        flow = self.model.flow(owner)
        if report.reason or (
            not rebinds_input
            and self.model.used_after(flow, target_key(first), self.model.range(stmt))
        ):
            return Status.UNSAFE, "input-used-later"
        return Status.SAFE, None
