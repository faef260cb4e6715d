"""IPF004 subscript assignment: clone the tensor before writing into part of it.

Matches a statement that writes into part of a tensor: ``d[...] = v``, ``d[...] op= v``
(which stays in place even as ``d[i] = d[i] + v``), and in-place methods or functions on a
subscript (``d[0].add_(v)``, ``F.relu_(d[:, 0])``). The base must be a name or attribute chain
(``self.buf``). Produces ``d = d.clone()`` right before the statement, in the same block, so
whatever autograd saved of the old ``d`` stays intact. A run of writes into the same tensor gets
one clone, and a statement already preceded by ``d = d.clone()`` is left alone.

Fix safety: never for anything not known to be a tensor (dicts, lists, NumPy arrays, unknown
names get no fix: ``.clone()`` would fail on them). Unsafe when the base is a parameter the
caller may rely on, or has aliases used later (the fix rebinds them: ``d = e = d.clone()``).
No fix for views whose base is used later (the write must reach it), for ``nn.Parameter``
attributes, or for names that are not local to the function.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst
import libcst.matchers as m

from .. import torch_api
from ..findings import Fix, Status
from ..judgement import Kind, subscript_base, target_key
from .base import InplacePass, code, fix_title, rebind


class SubscriptAssignPass(InplacePass):
    CODE = "IPF004"
    NAME = "subscript-assignment"
    DESCRIPTION = "Clone a tensor before assigning into a subscript or slice of it."

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Subscript):
                self._candidate(node, t.target)
                return

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Subscript):
            self._candidate(node, node.target)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        receiver: Optional[cst.BaseExpression] = None
        name = self.judge.torch_name(func)
        if name is not None:
            if name in torch_api.INPLACE_FUNCTIONS and node.args:
                receiver = node.args[0].value
        elif isinstance(func, cst.Attribute) and func.attr.value in torch_api.INPLACE_METHODS:
            receiver = func.value
        if isinstance(receiver, cst.Subscript):
            self._candidate(node, receiver)

    def _candidate(self, node: cst.CSTNode, target: cst.Subscript) -> None:
        base = subscript_base(target)
        stmt = self.judge.statement_of(node)
        message = f"Write into part of `{code(base)}`"
        if self._string_index(target):
            return  # d["key"]: a mapping, not a tensor
        if target_key(base) is not None and self._already_cloned(stmt, target_key(base)):
            return
        verdict = self.judge.assess(node, base, require_known=True, dtype_neutral=True)
        if verdict.status is None:
            return
        hazard = self.hazard(node, base) if verdict.status is not Status.SKIPPED else None
        container, index = self._container(stmt)
        if verdict.status in (Status.SAFE, Status.UNSAFE) and container is not None:
            clone = rebind(
                [base.deep_clone()],
                cst.Call(func=cst.Attribute(value=base.deep_clone(), attr=cst.Name("clone"))),
                verdict.also_rebind,
            )
            # `h[t] = f(h)`: the value is computed first and may save (a view of) `h` for
            # backward, so it must be computed before the clone, not from it.
            temp = None
            if isinstance(stmt, (cst.Assign, cst.AugAssign)) and reads(stmt.value, target_key(base)):
                temp = self.judge.fresh_name(f"{target_key(base).rsplit('.', 1)[-1]}_value")
            fix = Fix(container, lambda c: insert_before(c, index, clone, temp),
                      fix_title(clone, "Insert"), order=index)
            self.report(node, message, verdict.status, verdict.reason, fix, hazard=hazard)
        else:
            self.report(node, message, verdict.status, verdict.reason or "unsupported-target", hazard=hazard)

    def _string_index(self, target: cst.Subscript) -> bool:
        return any(
            isinstance(el.slice, cst.Index) and self.judge.kind(el.slice.value) is Kind.OTHER
            and isinstance(el.slice.value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString))
            for el in target.slice
        )

    def _container(self, stmt: cst.CSTNode):
        """The line or suite holding ``stmt``, and its index there."""
        parent = self.judge.parent(stmt)
        if isinstance(parent, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for i, small in enumerate(parent.body):
                if small is stmt:
                    return parent, i
        return None, 0

    def _already_cloned(self, stmt: cst.CSTNode, key: str) -> bool:
        """Right after ``key = key.clone()``, or after a write into ``key`` that gets one."""
        prev = self._previous_statement(stmt)
        if m.matches(prev, m.Assign(value=m.Call(func=m.Attribute(attr=m.Name("clone")), args=[]))):
            return (
                any(target_key(t.target) == key for t in prev.targets)
                and target_key(prev.value.func.value) == key
            )
        return prev is not None and self._writes_into(prev, key)

    def _writes_into(self, stmt: cst.CSTNode, key: str) -> bool:
        """``key[...] = v`` / ``key[...] op= v`` whose value does not read ``key``."""
        if isinstance(stmt, cst.Assign):
            targets, value = [t.target for t in stmt.targets], stmt.value
        elif isinstance(stmt, cst.AugAssign):
            targets, value = [stmt.target], stmt.value
        else:
            return False
        if len(targets) != 1 or not isinstance(targets[0], cst.Subscript):
            return False
        if target_key(subscript_base(targets[0])) != key:
            return False
        reads = m.findall(value, m.Name() | m.Attribute())
        return not any(target_key(r) == key for r in reads)

    def _previous_statement(self, stmt: cst.CSTNode) -> Optional[cst.CSTNode]:
        container = self.judge.parent(stmt)
        if isinstance(container, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            i = next(i for i, s in enumerate(container.body) if s is stmt)
            if i > 0:
                return container.body[i - 1]
            if isinstance(container, cst.SimpleStatementSuite):
                return None
            block = self.judge.parent(container)
            body = getattr(block, "body", None)
            if isinstance(block, (cst.IndentedBlock, cst.Module)) and isinstance(body, (list, tuple)):
                j = next(j for j, s in enumerate(body) if s is container)
                if j > 0 and isinstance(body[j - 1], cst.SimpleStatementLine):
                    return body[j - 1].body[-1]
        return None


def reads(expr: cst.CSTNode, key: str) -> bool:
    return any(target_key(n) == key for n in m.findall(expr, m.Name() | m.Attribute()))


def insert_before(container, index: int, clone: cst.Assign, temp: Optional[str] = None):
    """Put ``clone`` before the small statement at ``index`` of a line or suite.

    With ``temp``, the statement's value is first computed into ``temp``:
    ``tmp = value; d = d.clone(); d[i] = tmp``. Before the first statement of a line, the new
    statements get lines of their own above it, the first taking the blank lines there;
    comments stay with the statement they describe.
    """
    body = list(container.body)
    new = []
    if temp is not None:
        stmt = body[index]
        new.append(cst.Assign(targets=[cst.AssignTarget(cst.Name(temp))], value=stmt.value))
        body[index] = stmt.with_changes(value=cst.Name(temp))
    new.append(clone)
    if isinstance(container, cst.SimpleStatementLine) and index == 0:
        leading = list(container.leading_lines)
        blanks = max((i + 1 for i, line in enumerate(leading) if line.comment is None), default=0)
        lines = [cst.SimpleStatementLine([s]) for s in new]
        lines[0] = lines[0].with_changes(leading_lines=leading[:blanks])
        return cst.FlattenSentinel([
            *lines, container.with_changes(body=body, leading_lines=leading[blanks:]),
        ])
    semicolon = cst.Semicolon(whitespace_after=cst.SimpleWhitespace(" "))
    body[index:index] = [s.with_changes(semicolon=semicolon) for s in new]
    return container.with_changes(body=body)
