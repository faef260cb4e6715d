"""The semantic model of one module: the facade the rules ask, owning one part per kind of fact.

Each part answers one kind of question and keeps its own caches. The parts are ordered (each
imports only parts below it; pyproject.toml's contract "The analysis is ordered" enforces it,
docs/architecture.md draws it); the model, at the top, builds them and wires them together:

    source  (analysis.source: ast, parents, text)
    tree    (analysis.tree: parents, owners, blocks)
    binder  (analysis.binder: one Flow of bindings/loads per body)
    names   (analysis.names: import resolution; UsedNames: fresh names)
    classes (analysis.classes: self.<attr> values, buffers, calls by callee)
    dataflow (analysis.dataflow: reaching bindings, aliases, views, later uses)
    kinds   (analysis.tensor_kind: tensor or not)
    calls   (analysis.calls: who calls a function, grad mode across calls, mutation contracts)
    grad    (analysis.grad_mode: grad off, intended in-place code)
    holders (analysis.holders: dead stores, other holders of a name's object)
    leaves  (analysis.leaves: tensors that require grad, which PyTorch refuses to update in place)
    start_values (analysis.start_values: leaves made with requires_grad=True whose gradient nothing observes)
    views   (analysis.views: views PyTorch refuses to modify in place; requires grad or not)
    hazards (analysis.hazard: what autograd saved; built on first use)
    summaries (analysis.summaries: what a call of the module's own code does; built on first
            use, handed the hazard analysis's op facts as a function)

The model also offers the parts' most used questions as its own methods (``model.kind(expr)``
is ``model.kinds.kind(expr)``), bound once, so a rule reads as a list of questions. The parts
that ask the model (``tensor_kind``, ``requires_grad``, ``dtype``, ``summaries``, ``hazard``)
never import it: each declares what it reads as a Protocol (``facts.Facts`` and its
extensions), which the model satisfies (mypy checks it where the model hands itself to them).

A project-wide index (definitions and call sites across files, ``analysis.project``) is handed
to a model as one more part; what a module contributes to it is read off its model by
``analysis.indexing``, above this module.
"""

from __future__ import annotations

import ast
import weakref
from functools import partial
from typing import Iterable, List, NamedTuple, Optional, Tuple, cast

from codemod import torch_api
from codemod.analysis import arguments, dtype, kept
from codemod.analysis.binder import Binder
from codemod.analysis.calls import Calls, CallSite, ContractReason
from codemod.analysis.classes import Classes
from codemod.analysis.dataflow import Dataflow
from codemod.analysis.grad_mode import GradMode
from codemod.analysis.hazard import HazardFacts, Hazards
from codemod.analysis.kinds import Kind
from codemod.analysis.holders import Holders
from codemod.analysis.leaves import Leaves
from codemod.analysis.names import Names, UsedNames
from codemod.analysis.project import ProjectIndex
from codemod.analysis.source import Source
from codemod.analysis.start_values import StartValues
from codemod.analysis.summaries import SHARES_INPUT, Returns, Summaries, handed_values
from codemod.analysis.syntax import FUNCTIONS, Located, target_key
from codemod.analysis.tensor_kind import TensorKinds
from codemod.analysis.tree import Tree
from codemod.analysis.views import Views


def _handed(model: "SemanticModel", func: ast.expr) -> Optional[List[ast.expr]]:
    """What every construction hands ``self.fn`` (``summaries.handed_values``), for the views' input flow."""
    return handed_values(model.summaries.targets, func)


# Builtins whose result is never one of their arguments (``max(a, b)`` is, so it is not here).
_BUILTINS_NOT_RETURNING_ARGUMENTS = {"len", "int", "float", "str", "bool", "print", "isinstance", "issubclass",
                                     "range", "repr", "id", "hash", "abs", "round", "sum", "type", "callable",
                                     "hasattr", "format", "divmod", "pow"}
# Methods of a module that return the module itself (``nn.Dropout(p).eval()``).
_MODULE_CHAIN = {"eval", "train", "to", "cuda", "cpu", "double", "float", "half", "bfloat16", "requires_grad_"}


class Shared(NamedTuple):
    """The parts of a model that read nothing but its source (no settings, no index): another
    model of the same ``Source`` may take them over with what they have worked out (the run's
    index pass hands them to its file pass, ``engine.parsed``)."""

    tree: Tree
    binder: Binder
    names: Names
    classes: Classes


class SemanticModel:
    """Answers the rules' questions about one module."""

    def __init__(self, source: Source, assume_same_dtype: bool = False,
                 project: Optional[ProjectIndex] = None, module_name: str = "",
                 mixed_dtypes: bool = False, shared: Optional[Shared] = None) -> None:
        self.source = source
        self.module = source.tree
        self.assume_same_dtype = assume_same_dtype
        self.project, self.module_name = project, module_name
        # `mixed-dtypes = true` (configuration): other dtypes come from outside the files
        self._other_dtype: Optional[Tuple[Optional[str]]] = ("`mixed-dtypes = true`",) if mixed_dtypes else None
        if shared is not None and shared.tree.source is source:
            tree, binder, names, classes = shared
        else:
            tree = Tree(source)
            binder = Binder(source)
            names = Names(tree, binder)
            classes = Classes(tree)
        self.tree, self.binder, self.names, self.classes = tree, binder, names, classes
        self.used_names = UsedNames(tree)
        self.dataflow = flow = Dataflow(tree, binder, names)
        self.calls = calls = Calls(tree, binder, project, module_name)
        self.kinds = kinds = TensorKinds(tree, binder, names, classes, flow, calls)
        self.grad = GradMode(tree, names, classes, calls)
        self.holders = Holders(tree, binder, flow)
        self.holders.fresh_container = partial(kept.container_fresh, weakref.proxy(self))  # (weakly, as below)
        self.leaves = Leaves(tree, binder, flow, kinds, calls, self.grad)
        self.start_values = StartValues(tree, binder, names.torch_name)
        self.views = Views(tree, binder, names, classes, flow, kinds, self.grad)
        self.views.inputs.handed = partial(_handed, weakref.proxy(self))  # (weakly: the model owns its views)
        self._hazards: Optional[Hazards] = None
        self._summaries: Optional[Summaries] = None
        # The questions rules and the hazard analysis ask most, bound once.
        self.parent, self.ancestors, self.walk = tree.parent, tree.ancestors, tree.walk
        self.statement_of, self.owner, self.enclosing_class = tree.statement_of, tree.owner, tree.enclosing_class
        self.range, self.code = tree.range, tree.code
        self.flow = binder.flow
        self.qualified_names, self.torch_name = names.qualified_names, names.torch_name
        self.class_attrs, self.class_buffers, self.calls_in = classes.class_attrs, classes.class_buffers, classes.calls_in
        self.attribute_writes, self.mentions = classes.attribute_writes, classes.mentions
        self.static_function = classes.static_function
        self.reaching, self.aliases, self.alias_report = flow.reaching, flow.aliases, flow.alias_report
        self.used_after, self.shared_name, self.rebinding_problem = flow.used_after, flow.shared_name, flow.rebinding_problem
        self.kind, self.is_factory = kinds.kind, kinds.calls.is_factory
        self.returned_pieces = kinds.calls.returned_pieces
        self.intended_reason = self.grad.intended_reason
        self.fresh_name = self.used_names.fresh_name

    def shared(self) -> Shared:
        """The parts another model of this source may take over (``Shared``)."""
        return Shared(self.tree, self.binder, self.names, self.classes)

    @property
    def hazards(self) -> Hazards:
        """The hazard analysis of this module (``analysis.hazard``), built on first use. It
        holds the model weakly: the model owns it, not the other way round."""
        if self._hazards is None:
            facts: HazardFacts = self  # the model answers every question the hazard analysis asks
            self._hazards = Hazards(weakref.proxy(facts))
        return self._hazards

    def budget_spent(self) -> bool:
        """A search of this module ran out of its budget (``Hazards.explain``): what it answered is unknown,
        so nothing reported from then on is proven."""
        return bool(self.views.requirement.exhausted or self._hazards is not None and self._hazards.producers.unreached.exhausted)

    @property
    def summaries(self) -> Summaries:
        """Summaries of this module's functions and classes (``analysis.summaries``), for the
        hazard analysis at their call sites; built on first use, with its op facts."""
        if self._summaries is None:
            facts: HazardFacts = self
            self._summaries = Summaries(weakref.proxy(facts), self.hazards.ops._op_of)
        return self._summaries.active()  # (a class read at one construction's arguments, while it is)

    @property
    def picked_fresh_names(self) -> bool:
        """Whether a fix asked for a name unused in the whole file (see ``UsedNames``)."""
        return self.used_names.picked

    def returned_alias(self, target: ast.AST, stmt: Located) -> Optional[Tuple[str, bool]]:
        """A name bound before ``stmt`` from a call that returns ``target`` (as it came in, or
        a view of it: ``y = helper(x)`` with ``return x[0]``, ``y = self.drop(x)``), still read
        afterwards: rebinding ``target`` would hide the write from it. (name, known): known
        False where the callee is one the analysis cannot see into, which may hand it back."""
        key = target_key(target)
        if key is None:
            return None
        flow = self.flow(self.owner(stmt))
        start, end = self.range(stmt)
        for other, bindings in flow.bindings.items():
            earlier = [b for b in bindings if b.end <= start]
            if other == key or not earlier or earlier[-1].form != "assign":
                continue
            bound = earlier[-1]
            call = bound.value
            if not isinstance(call, ast.Call):
                continue
            passed = [i for i, a in enumerate(call.args) if target_key(a) == key]
            if not passed or any(bound.end <= b.start and b.end <= start for b in flow.bindings.get(key, [])):
                continue
            returns = self._may_return_input(call, passed)
            if returns is False or not self.used_after(flow, other, (start, end)):
                continue
            return other, returns is True
        return None

    def returned_argument(self, target: ast.AST, stmt: Located) -> Optional[Tuple[str, bool]]:
        """``y = helper(x)`` (``y = self.idn(x)``) reaching the write into ``y``, where the
        callee may hand ``x`` back (its summary returns that input or a view of it, an nn module
        measured to, or a callee the analysis cannot see into) and ``x`` is read after the write:
        rebinding ``y`` would hide the write from ``x``. (x, known): known False where the
        callee is one the analysis cannot see into. The converse of :meth:`returned_alias`."""
        key = target_key(target)
        if key is None or "." in key:
            return None
        flow = self.flow(self.owner(stmt))
        span = self.range(stmt)
        for bound in self.reaching(flow, key, stmt):
            # `a, b = halves(x)`: parts of `x` where the callee is known to hand them back
            unpacked = bound.form == "other" and isinstance(bound.stmt, ast.Assign) and isinstance(bound.stmt.value, ast.Call)
            call = cast(ast.Assign, bound.stmt).value if unpacked else bound.value
            if bound.form != "assign" and not unpacked or not isinstance(call, ast.Call) or isinstance(call.func, ast.Attribute) \
                    and self.kind(call.func.value) in (Kind.TENSOR, Kind.PARAMETER):
                continue  # a tensor method hands back its receiver at most (the dataflow's views), never an argument
            for i, arg in enumerate(call.args):
                other = target_key(arg)
                if isinstance(arg, ast.Starred) or other is None or other == key or "." in other \
                        or self.kind(arg) in (Kind.SCALAR, Kind.OTHER, Kind.MODULE):
                    continue  # (a number, a dtype: no tensor to hand back)
                returns = self._may_return_input(call, [i])
                if (returns is True or returns is None and not unpacked) and self.used_after(flow, other, span):
                    return other, returns is True
        return None

    def _may_return_input(self, call: ast.Call, passed: "list[int]") -> Optional[bool]:
        """A user function or module whose summary returns the argument at one of ``passed``
        (or a view of it), or an nn module measured to hand its input back (``nn.Dropout`` in
        eval mode, ``nn.Identity``: ``RETURNS_INPUT_MODULES``); None for a callee nothing is
        known of (not torch's, no summary): it may."""
        summary = self.summaries.of_call(call)
        if summary is not None:
            return (summary.returns in SHARES_INPUT or summary.returns is Returns.SLICES) and summary.returned_input in passed
        func = call.func
        if self.torch_name(func) is not None or isinstance(func, ast.Name) and func.id in _BUILTINS_NOT_RETURNING_ARGUMENTS:
            return False  # torch's own functions: their views are the dataflow's (``alias_source``)
        values = self._module_values(func)
        if values is None:
            return None  # `self.layers[i](x)`: not followed
        known = False  # the callee is an nn module of torch's (measured)
        for value in values:
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and value.func.attr in _MODULE_CHAIN:  # nn.Dropout(p).eval()
                value = value.func.value
            if isinstance(value, ast.Call):
                name = self.torch_name(value.func) or ""
                if name.startswith("torch.nn.") and name.rsplit(".", 1)[-1][:1].isupper():
                    known = True
                    if f"torch.nn.{name.rsplit('.', 1)[-1]}" in torch_api.RETURNS_INPUT_MODULES:
                        return True
        return False if known else None  # a callee the analysis cannot see into: it may hand it back

    def _module_values(self, func: ast.expr) -> "Optional[list[object]]":
        """What the module called as ``func`` was built from (``self.fc = nn.Linear(...)``:
        that call); None where the callee is no name or attribute chain."""
        if isinstance(func, ast.Call):  # nn.Identity()(x)
            return [func]
        key = target_key(func)
        if key is None:
            return None
        cls = self.enclosing_class(func) if key.startswith("self.") and key.count(".") == 1 else None
        if cls is not None:
            return list(self.class_attrs(cls).get(key[5:], []))
        entry = self.kinds.module_dict_entry(func) if key.startswith("self.") and key.count(".") == 2 else None
        if entry is not None:  # `self.transformer.drop`: an entry of a ModuleDict the class builds
            return entry
        return [b.value for owner in (self.owner(func), self.module)  # (bindings alone: the module's own walk)
                for b in self.flow(owner, nested=owner is not self.module).bindings.get(key, []) if b.form == "assign"]

    def returns_fresh(self, call: ast.Call) -> bool:
        """A module call known to return a new tensor: a module of the file whose summary returns
        an op's result, or torch's nn modules (every value the callee was built from) that
        do not hand their input back (``RETURNS_INPUT_MODULES``), none built with ``inplace=``."""
        summary = self.summaries.of_call(call)
        if summary is not None:
            return summary.returns is Returns.FRESH
        if self.kind(call.func) is not Kind.MODULE or self._may_return_input(call, list(range(len(call.args)))) is not False:
            return False
        values = self._module_values(call.func) or []
        return bool(values) and not any(isinstance(n, ast.keyword) and n.arg == "inplace"
                                        for v in values if isinstance(v, ast.AST) for n in ast.walk(v))

    def result_kept(self, call: ast.Call) -> bool:
        """Whether the file's code ``call`` runs may keep the tensor it returns (``self.last =
        out``): a write into the result reaches it there too (``kept.result_kept``)."""
        return kept.result_kept(self, call)

    def keeps_arguments(self, call: ast.Call) -> bool:
        """Whether the code ``call`` runs may keep a tensor it is given (``remember(h)`` storing it
        in a global, ``self.seen = t.detach()``): ``kept.keeps_arguments``."""
        return kept.keeps_arguments(self, call)

    def contract(self, target: ast.AST) -> Optional[ContractReason]:
        """Whether the function around ``target`` (one of its parameters) mutates it on
        purpose: a mutation contract (``Calls.contract``)."""
        func = self.owner(target)
        key = target_key(target)
        if not isinstance(func, FUNCTIONS) or key is None or "." in key:
            return None

        return self.calls.contract(func, key, self._read_after_call)

    def _read_after_call(self, site: CallSite, argument: ast.expr) -> bool:
        """Whether the caller at ``site`` reads ``argument`` again after the call."""
        flow = self.binder.flow(site.caller)
        return self.holders.argument_read_after(flow, target_key(argument) or "", self.statement_of(site.node))

    def own_values_passed(self, target: ast.AST) -> bool:
        """Whether ``target`` is a parameter of a ``forward`` every call of which in the file
        passes a tensor of the caller's own that nothing sees after the call
        (``arguments.own_values_passed``): rebinding it hides nothing from anyone."""
        func = self.owner(target)
        return isinstance(func, FUNCTIONS) and isinstance(target, ast.Name) \
            and arguments.own_values_passed(self, func, target.id)

    def handed_own_values(self, target: ast.AST) -> bool:
        """Whether ``target`` is a parameter that every call hands a tensor of the caller's own, which the
        caller reads no more: :meth:`own_values_passed`, or a private helper method's
        (``arguments.private_values_passed``). Only to let a proof go (no backward reaches the tensor)."""
        func = self.owner(target)
        return isinstance(func, FUNCTIONS) and isinstance(target, ast.Name) and (
            arguments.own_values_passed(self, func, target.id) or arguments.private_values_passed(self, func, target.id))

    def contract_through_container(self, target: ast.Name, stmt: Located) -> Optional[ContractReason]:
        """Whether ``target`` is taken out of a parameter (a list of tensors, as optimizer
        kernels take) whose contents the function mutates on purpose (``Calls.contract``)."""
        func = self.owner(target)
        if not isinstance(func, FUNCTIONS):
            return None

        for param in sorted(self.holders.holding_parameters(target.id, stmt)):
            found = self.calls.contract(func, param, self._read_after_call)
            if found:
                return found
        return None

    def may_promote(self, key: Optional[str], operands: Iterable[ast.expr],
                    target: Optional[ast.expr] = None, write: Optional[ast.AST] = None) -> bool:
        """Whether ``x = x op y`` could take another dtype than ``x op= y`` keeps. ``target``
        (x) and ``write`` (the statement writing it), where given: a floating ``x`` keeps its
        dtype where the code's other dtypes are all integral (``dtype.integral_only``)."""
        if not dtype.may_promote(self.kinds, key, operands, self.assume_same_dtype):
            return False
        other = self.other_dtype
        if other is None:
            return False
        return not (dtype.integral_only(other) and target is not None and self._floating_target(target, write))

    def _floating_target(self, target: ast.expr, write: Optional[ast.AST]) -> bool:
        """``target`` is known floating: by what it was made of (``dtype.Floating``), or because
        the write itself raises on an integral tensor (``x /= n``, ``x *= 0.5``): where the
        program gets past it, ``target`` is floating."""
        floating = self.hazards.floating
        if isinstance(write, ast.Expr):
            write = write.value
        return floating.floating(target) or (write is not None and floating.written_floating(write))

    @property
    def other_dtype(self) -> Optional[str]:
        """Where this file, or another file of the run linked to it by imports (through the
        index), makes a tensor of another dtype than float32, int64 and bool (``dtype.other_dtype``); None: the code
        computes in those only, so no op's out-of-place form can take another dtype."""
        if self._other_dtype is None:
            found = dtype.indexed_other_dtype(self.tree.source)
            if (found is None or dtype.integral_only(found)) and self.project is not None:
                linked = self.project.other_dtype(self.module_name)  # (a floating one settles it)
                found = linked if found is None or (linked is not None and not dtype.integral_only(linked)) else found
            self._other_dtype = (found,)
        return self._other_dtype[0]
