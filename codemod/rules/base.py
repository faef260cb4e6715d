"""What every rule shares: reporting findings, and planning their fixes on libcst's tree.

A rule decides on CPython's ``ast`` (cheap to parse and walk, so every file can be screened
and analysed): its ``visit_<AstNode>`` methods look, ask the shared semantic model, and call
:meth:`Rule.report`. A finding that offers a fix carries a :class:`Plan`: where the
libcst node it replaces starts, and how to build the replacement from that node. Only when a
fix is wanted (``fix``, edits for an editor or JSON) is the file parsed by libcst, the plans
turned into :class:`~codemod.findings.Fix` objects (``codemod.fixes.apply``), and all of them
applied in one traversal by ``fixes.apply.FixApplier`` — lossless, comments and formatting kept.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Callable, Optional, Union

from codemod.findings import Finding, Fix, Span, Status
from codemod.fixes import _cst as cst
from codemod.fixes.site import FixSite, Plan
from codemod.rules.safety import CONTRACTS

if TYPE_CHECKING:
    from codemod.analysis.hazard import Hazard
    from codemod.analysis.model import SemanticModel

# Where it is used (the hazard of a report given as text), not here: importing the rules (their
# table of codes, names and documentation: ``rules.registry``) imports no analysis that
# analyses, so a rerun answered from the cache runs without it.


class Rule:
    """A rule: one file in ``codemod/rules/``, found by the registry (``rules.registry``).

    A rule declares what the registry derives everything else from:
    ``CODE`` (``IPF0xx``; its hazard forms ``IPF1xx``, proven, and ``IPF2xx``, possible, are
    derived), ``NAME``, ``TRIGGERS`` (regular
    expressions over bytes, one of which must occur in a file's text for the rule to find
    anything there: the text screen run before parsing), ``visit_<AstNode>`` methods (the node
    types the walk files and hands it, in source order), optionally :meth:`could_start` (a cheap
    look at one such node: the pre-screen after parsing), and its documentation as the class
    docstring: a one-line summary, then Ruff-style sections (What it does / Why is this bad? /
    Example / Fix safety), printed by ``inplacefix rule CODE``. ``HAZARD_FORM`` says when the
    hazard form is reported (a rule whose ``IPF1xx`` means something else says so there).
    """

    CODE = ""
    NAME = ""
    TRIGGERS: tuple = ()
    HAZARD_FORM = "where the hazard analysis shows the write modifies a tensor autograd saved for backward"
    POSSIBLE_FORM = True  # has an IPF2xx form (a hazard resting on what the analysis cannot see)

    @classmethod
    def could_start(cls, node: ast.AST) -> bool:
        """Could a finding start at ``node`` (one of the visited types)? Errs on the side of yes."""
        return True

    def __init__(self, model: SemanticModel) -> None:
        self.model = model
        self.source = model.source
        self.findings: list = []

    def report(
        self,
        node: ast.AST,
        message: str,
        status: Status,
        reason: Optional[str] = None,
        plan: Optional[Plan] = None,
        hazard: Union[Hazard, str, None] = None,
    ) -> Finding:
        """Record a finding; with ``hazard`` (why it breaks backward; a plain string is a
        proven one) it gets the hazard code of its tier: IPF1xx proven, IPF2xx possible."""
        span = Span(*self.source.char_span(node))
        code = self.CODE
        if isinstance(hazard, str):
            from codemod.analysis.hazard import Hazard

            hazard = Hazard(hazard)
        if hazard and hazard.proven and self.model.budget_spent():
            from codemod.analysis.hazard import Tier

            hazard = hazard._replace(tier=Tier.POSSIBLE) if self.POSSIBLE_FORM else None  # unknown: no proof
        if hazard and hazard.proven and status is Status.SKIPPED and reason in CONTRACTS:
            status = Status.MANUAL  # mutated on purpose, yet proven to break backward: shown, no fix
        if hazard and status is not Status.SKIPPED:
            assert hazard.proven or self.POSSIBLE_FORM, f"{self.CODE} has no possible-hazard form"
            make = hazard_code if hazard.proven else possible_code
            code, message = make(self.CODE), f"{message}: {hazard.reason}"
        finding = Finding(code, message, span, status, reason, plan=plan)
        self.findings.append(finding)
        return finding

    def plan(self, node: ast.AST, node_type: str, make: Callable[[cst.CSTNode, FixSite], Fix]) -> Plan:
        """A plan to build a fix from the libcst node of type ``node_type`` where ``node`` starts."""
        return Plan((node.lineno, self.source.char_column(node.lineno, node.col_offset)), node_type, make)

    def hazard(self, node: ast.AST, target: Optional[ast.AST]) -> Optional[Hazard]:
        """Why the in-place write at ``node`` into ``target`` breaks autograd, if it does."""
        return self.model.hazards.explain(node, target) if target is not None else None

    def code(self, node: ast.AST) -> str:
        """Source text of a node, on one line, for messages."""
        return self.source.snippet(node)


def calls_trailing_underscore(call: ast.Call) -> bool:
    """``x.add_(...)``, ``relu_(...)``: a callee named like PyTorch's in-place ops (and
    ``nn.init``'s), not like a private helper (``_f(...)``)."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name.endswith("_") and not name.startswith("_")


# In-place methods whose out-of-place twin computes something else: a comparison or
# ``logical_not_`` writes its 0/1 into the receiver in the receiver's dtype (a float mask) where
# the twin returns a bool tensor (``1 - mask`` then raises, ``mask.mean()`` refuses).
_BOOL_TWINS = frozenset({
    "eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_", "less_", "less_equal_",
    "not_equal_", "logical_and_", "logical_or_", "logical_xor_", "logical_not_",
})


def twin_keeps_result(call: ast.Call) -> bool:
    """``x.<m>_(...)``'s out-of-place twin ``x.<m>(...)`` computes what the in-place call writes
    (in the receiver's dtype; operand promotion is judged apart): not for the methods of
    ``_BOOL_TWINS``, nor for ``bernoulli_`` without ``p`` (it draws with p=0.5, the twin with
    p=the receiver's values)."""
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if method in _BOOL_TWINS:
        return False
    return method != "bernoulli_" or bool(call.args) or any(k.arg == "p" for k in call.keywords)


def may_write_in_place(node: ast.AST) -> bool:
    """The node screen of rules that look at every write: an ``op=``, an assignment into a
    subscript, or a call named like an in-place op (``could_start`` of those rules)."""
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Subscript) for t in node.targets)
    if isinstance(node, ast.Call):
        return calls_trailing_underscore(node)
    return True


def hazard_code(code: str) -> str:
    """IPF001 -> IPF101: the same rewrite, on an op the hazard analysis shows to conflict."""
    return f"IPF1{code[4:]}"


def possible_code(code: str) -> str:
    """IPF001 -> IPF201: the same rewrite, where the hazard analysis cannot see whether the
    written tensor was saved (a call it cannot see into, a value from the caller)."""
    return f"IPF2{code[4:]}"
