"""What every pass shares: reporting findings and applying the fixes it is allowed to apply.

A pass is a libcst ``VisitorBasedCodemodCommand``. Its ``visit_*`` methods only look and call
:meth:`InplacePass.report`; the base class turns the reports into edits. Run on its own (for
instance by libcst's codemod tooling), a pass applies its own safe fixes. Run by the engine,
all passes only report on one shared metadata wrapper (``apply_fixes=False``), so positions
refer to the original file and metadata is computed once; the engine then applies the chosen
fixes of all passes in one traversal with :class:`FixApplier`.
"""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst
from libcst.codemod import CodemodContext, VisitorBasedCodemodCommand
from libcst.metadata import (
    ParentNodeProvider,
    PositionProvider,
    QualifiedNameProvider,
    ScopeProvider,
)

from ..findings import Finding, Fix, Span, Status
from ..judgement import Judge


class FixApplier(cst.CSTTransformer):
    """Replaces nodes, by identity of the original, with what their fixes build.

    Several fixes may target one node (two insertions into one line); they run in descending
    ``Fix.order`` so that positional insertions do not shift each other.
    """

    def __init__(self, fixes: Iterable[Fix]) -> None:
        super().__init__()
        self._fixes: dict = {}
        for fix in fixes:
            self._fixes.setdefault(id(fix.node), []).append(fix)
        for group in self._fixes.values():
            group.sort(key=lambda f: f.order, reverse=True)

    def hazard(self, node: cst.CSTNode, target: Optional[cst.BaseExpression]) -> Optional[str]:
        """Why the in-place write at ``node`` into ``target`` breaks autograd, if it does."""
        return self.judge.hazards.explain(node, target) if target is not None else None

    def on_leave(self, original_node, updated_node):
        result = updated_node
        for fix in self._fixes.get(id(original_node), ()):
            if not isinstance(result, cst.CSTNode):
                break  # a flattened result takes no further edits; such a fix is built last
            result = fix.build(result)
        return result


class InplacePass(VisitorBasedCodemodCommand):
    CODE = ""
    NAME = ""
    METADATA_DEPENDENCIES = (
        PositionProvider,
        ParentNodeProvider,
        ScopeProvider,
        QualifiedNameProvider,
    )

    def __init__(
        self,
        context: CodemodContext,
        judge: Optional[Judge] = None,
        apply_fixes: bool = True,
        unsafe_fixes: bool = False,
    ) -> None:
        super().__init__(context)
        self._judge = judge
        self.apply_fixes = apply_fixes
        self.unsafe_fixes = unsafe_fixes
        self.findings: list = []
        self._applier = FixApplier(())

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            self._judge = Judge(self.context.wrapper)
        return self._judge

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        status: Status,
        reason: Optional[str] = None,
        fix: Optional[Fix] = None,
        hazard: Optional[str] = None,
    ) -> Finding:
        """Record a finding; with ``hazard`` (why it breaks backward) it gets the hazard code."""
        pos = self.judge.position(node)
        span = Span(pos.start.line, pos.start.column, pos.end.line, pos.end.column)
        code = self.CODE
        if hazard and status is not Status.SKIPPED:
            code, message = hazard_code(self.CODE), f"{message}: {hazard}"
        finding = Finding(code, message, span, status, reason, fix)
        self.findings.append(finding)
        if self.apply_fixes and finding.applies(self.unsafe_fixes):
            self._applier._fixes.setdefault(id(fix.node), []).append(fix)
        return finding

    def hazard(self, node: cst.CSTNode, target: Optional[cst.BaseExpression]) -> Optional[str]:
        """Why the in-place write at ``node`` into ``target`` breaks autograd, if it does."""
        return self.judge.hazards.explain(node, target) if target is not None else None

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if self.apply_fixes and isinstance(result, cst.CSTNode):
            result = self._applier.on_leave(original_node, result)
        return result


def hazard_code(code: str) -> str:
    """IPF001 -> IPF101: the same rewrite, on an op the hazard analysis shows to conflict."""
    return f"IPF1{code[4:]}"


def code(node: cst.CSTNode) -> str:
    """Source text of a node, for messages."""
    return cst.Module([]).code_for_node(node)


def rebind(
    targets: Iterable[cst.BaseAssignTargetExpression],
    value: cst.BaseExpression,
    also: Iterable[str] = (),
    like: Optional[cst.BaseSmallStatement] = None,
) -> cst.Assign:
    """``a = b = value``: bind every target (and the alias keys in ``also``) to ``value``.

    ``like`` lends its spacing around ``=`` (from an ``op=``) and its semicolon.
    """
    before = after = cst.SimpleWhitespace(" ")
    semicolon = cst.MaybeSentinel.DEFAULT
    if isinstance(like, cst.AugAssign):
        before, after = like.operator.whitespace_before, like.operator.whitespace_after
    if like is not None:
        semicolon = like.semicolon
    names = list(targets) + [cst.parse_expression(key) for key in also]
    return cst.Assign(
        targets=[
            cst.AssignTarget(t, whitespace_before_equal=before, whitespace_after_equal=after)
            for t in names
        ],
        value=value,
        semicolon=semicolon,
    )


def fix_title(node: cst.CSTNode, verb: str = "Rewrite as") -> str:
    """A one-line title: the first line of the new code (editors show it in a menu)."""
    lines = code(node).strip().splitlines()
    return f"{verb} `{lines[0]}{' …' if len(lines) > 1 else ''}`"
