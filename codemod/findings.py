"""Plain data shared by the rules, the engine and the front ends.

A rule reports a :class:`Finding` for every in-place candidate it looked at. A finding carries a
status that says what the tool will do with it and, unless the fix is safe, a reason code that
says why not. Front ends only render these objects.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import TYPE_CHECKING, Any, Callable, Optional, Tuple

if TYPE_CHECKING:  # libcst is only imported where a fix is built
    import libcst as cst

class Status(str, enum.Enum):
    SAFE = "safe"  # a fix that keeps what the program computes; applied by `fix`
    UNSAFE = "unsafe"  # a fix that may change behaviour; applied with --unsafe-fixes
    MANUAL = "manual"  # needs a person: no rewrite is offered
    SKIPPED = "skipped"  # intended in-place code (no_grad, optimizer, ...); left alone


# Reason codes: why a candidate is not a safe fix. The text is what users read.
REASONS = {
    # skipped: in-place on purpose, not an autograd conflict
    "no-grad": "runs with grad disabled (no_grad / inference_mode / set_grad_enabled(False))",
    "data-or-grad": "writes through `.data` or `.grad`, which autograd does not track",
    "nn-init": "`torch.nn.init` initialises weights in place on purpose",
    "optimizer": "optimizer code updates parameters in place on purpose",
    "buffer": "a registered buffer (running statistics, caches) is updated in place on purpose",
    "grad-guard": "runs only when grad is off or the tensor does not require grad (an "
    "`is_grad_enabled()` or `requires_grad` test)",
    "no-grad-callers": "every call of this function runs with grad disabled (under no_grad, "
    "from an optimizer's step, from functions only called so) or where nothing it is given "
    "requires grad (a guard: `if not torch.is_grad_enabled()`, a `requires_grad` test, a "
    "predicate function returning one)",
    "grad-unseen": "runs under a context named like torch's grad-off ones (`no_grad`, "
    "`inference_mode`) that is not resolved to torch (a `torch` handed in as a parameter, another "
    "module's): whether grad is on there is not seen",
    "cloned-before": "the write goes into a copy made by the statement just before "
    "(`x = x.clone()`), which nothing saved or holds",
    "autograd-function": "runs inside a custom autograd function or custom op, where autograd "
    "records nothing",
    # skipped: a mutation contract (the function mutates its argument on purpose)
    "trailing-underscore": "the function's name ends in `_`, PyTorch's sign that it mutates its "
    "argument on purpose",
    "mutation-as-output": "the function returns nothing for the parameter it mutates (or "
    "something else): the mutation is its output",
    "callers-rely-on-mutation": "a caller ignores the function's result or reads the argument "
    "after the call: the mutation is what it relies on",
    # unsafe: a fix exists but may change behaviour
    "unknown-type": "the target is not known to be a tensor",
    "dtype-promotion": "the out-of-place form takes the promoted dtype of its operands, "
    "while the in-place form keeps the target's (e.g. half += float32 stays half)",
    "param-mutation": "the target is a parameter mutated before any rebinding; the caller may "
    "rely on seeing the change",
    "alias": "another name refers to the same tensor and is used later; the fix rebinds it too",
    "mutation-relied-on": "a call site relies on the module mutating its input",
    "builder-called-elsewhere": "the module is returned by a function other files may call: whether their "
    "call sites rely on it mutating its input is not seen",
    "shared-name": "the name is declared global or nonlocal: code holding its old tensor would "
    "not see the change",
    "input-used-later": "the input is read again later and would no longer see the change",
    "may-not-require-grad": "the tensor may not require grad: if it does not and the new value "
    "is differentiable, no_grad would cut that gradient",
    "value-requires-grad": "the new value may require grad (it is computed with grad on from "
    "tensors that do): a `no_grad` wrap stores it without its gradient, so a later backward would "
    "not reach what it was computed from; whether the update is a state set or part of the "
    "computation is yours to say",
    "call-may-alias": "a name bound from a call the analysis cannot see into, which was given the "
    "target, is read afterwards: the call may have handed the tensor back (or a view of it), and "
    "then it would not see a rebinding",
    "set-elsewhere": "the attribute is bound nowhere in this module (a parent class in another "
    "file, or the caller, set it): who else holds its tensor, and would not see a rebinding, is "
    "not known",
    "held-elsewhere": "another holder (a loop's iterable, the object an attribute was read "
    "from, a container) keeps the tensor and would not see the change",
    # manual: no fix offered
    "side-effect-target": "evaluating the target twice would repeat a call",
    "dynamic-inplace": "`inplace` is set from a variable",
    "flag-set-after": "the module's `inplace` flag is switched on after it is built: turn it off there (or "
    "drop the line) by hand",
    "nested-call": "the in-place call is part of a larger expression",
    "no-twin": "the method has no out-of-place equivalent the tool can write",
    "conditional-alias": "another name refers to the tensor on one path only (`loc = h if rev "
    "else w`): a rebinding cannot say which tensor the condition picked, so the write stays yours "
    "to rewrite",
    "view-alias": "the target is a view of (or viewed by) another tensor that is used later; "
    "the change must reach it",
    "leaf-read-after": "the leaf made with requires_grad=True is read again after the update by "
    "the computation that is differentiated: that code means \"update a copy\": the fix (unsafe) "
    "writes the update on a copy (`c2 = c.index_copy(...)`, `c2 = c.clone()` before `c2[i] = v`; "
    "`c = c + v` where the leaf is not used again) and the later reads on it; the leaf keeps its values (a `no_grad` wrap would update the leaf "
    "instead: which one you meant is yours to say)",
    "hooked-output": "the target is a module's output a forward hook made a leaf that requires grad "
    "(or a view of it): the update is meant in the graph, on a copy, and a `no_grad` wrap would cut "
    "its gradients; the copy could not be written here (the name is rebound, aliased or used in a "
    "nested scope after the update, or the write is not a statement of the function's own body)",
    "leaf-update": "the target is a leaf that requires grad: PyTorch refuses to update it in place "
    "with grad on; IPF005 wraps the update in `torch.no_grad()` (or updates a copy)",
    "view-write": "the target is a view PyTorch refuses to modify in place (an output of "
    "chunk/split/unbind, a view made under no_grad, a custom Function's view), or the tensor "
    "such a view was taken from, read afterwards; IPF006 writes into a copy",
    "views-read-after": "views taken of the tensor before the write are read after it: in place "
    "they would see the change (PyTorch refuses it); the fix keeps that where it can (outputs of "
    "chunk/unbind made ordinary views, views made under no_grad detached), else it rebinds the "
    "tensor and they keep the values from before",
    "no-grad-view-write": "a view PyTorch refuses to modify with grad on is written under no_grad "
    "and then used with grad on (PyTorch raises at that use); the fix, where one exists, lets the "
    "write reach the tensor viewed as the no_grad block says (outputs of chunk/unbind made ordinary "
    "views, views made under no_grad detached); if the use should see a copy instead, take one "
    "where the view is made (`v = h[0].clone()`)",
    "view-base-read-after": "the tensor viewed (or a name for the same memory) is read after "
    "the write: in place it would have seen the change; the fix keeps that where it can (outputs "
    "of chunk/unbind made ordinary views, views made under no_grad detached: PyTorch's \"both "
    "inside no_grad\"), else it writes into a copy, which hides it",
    "dead-store": "the fix would rebind a name nobody reads again while another holder (a "
    "loop's iterable, an attribute's owner, a container, the caller) keeps the tensor: it would "
    "only drop the mutation",
    "parameter": "the target is an nn.Parameter attribute, which cannot be rebound to a "
    "plain tensor",
    "non-local-name": "the name is not bound in this function; rebinding it would make it local",
    "unsupported-target": "the target is not a name or attribute chain",
    "view-attribute": "the target is a tensor's view attribute (`y.real`, `h.T`, `p.data`), made at "
    "each read: assigning to it copies into the tensor (still in place) or cannot be done, and a "
    "name bound from the write would stop being a view of the tensor; write out of place by hand",
    "read-in-statement": "the statement reads the tensor again outside the write, where an op may "
    "save it before the write runs: a clone before the statement or after it would not separate them",
}


@dataclasses.dataclass(frozen=True)
class Span:
    """A source range: 1-based lines, 0-based columns in characters, end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclasses.dataclass(frozen=True)
class Edit:
    """Replace ``span`` of the original text with ``content`` (what an editor applies)."""

    span: Span
    content: str


# A fix is a function from the (possibly already updated) node to its replacement, so fixes on
# nested nodes compose when they are applied in one traversal.
Builder = Callable[["cst.CSTNode"], "cst.CSTNode | cst.FlattenSentinel | cst.RemovalSentinel"]


@dataclasses.dataclass
class Fix:
    node: "cst.CSTNode"  # the original node the builder replaces
    build: Builder
    title: str  # e.g. "Rewrite as `x = x + y`"
    order: int = 0  # fixes of one node are built in descending order (insert positions)
    also: Tuple["Fix", ...] = ()  # companion fixes applied with this one (``import torch``)


@dataclasses.dataclass
class Finding:
    code: str
    message: str
    span: Span
    status: Status
    reason: Optional[str] = None
    fix: Optional[Fix] = None  # the rewrite itself; dropped when results leave the process
    edit: Optional[Edit] = None  # filled by the engine when a front end needs it
    fix_title: Optional[str] = None
    cell: Optional[int] = None  # the notebook cell (counted from 1), for .ipynb files
    fixable: bool = False  # a fix exists (its title and edit are built only when wanted)
    plan: Optional[Any] = None  # how to build the fix on libcst's tree (``fixes.site.Plan``)

    def __post_init__(self) -> None:
        if self.fix is not None and self.fix_title is None:
            self.fix_title = self.fix.title
        self.fixable = self.fixable or self.fix_title is not None or self.plan is not None

    @property
    def counts(self) -> bool:
        """Whether the finding asks for action (and makes `check` exit 1)."""
        return self.status is not Status.SKIPPED

    def applies(self, unsafe_fixes: bool) -> bool:
        if not self.fixable:
            return False
        return self.status is Status.SAFE or (unsafe_fixes and self.status is Status.UNSAFE)
