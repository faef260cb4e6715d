"""IPF004 subscript assignment: clone the tensor before writing into part of it.

The rule's documentation is its class docstring (``inplacefix rule CODE`` prints it)."""

from __future__ import annotations

import ast
from typing import Optional

from codemod import torch_api
from codemod.analysis.syntax import subscript_base, target_key
from codemod.findings import Fix, Status
from codemod.fixes.edits import clone_of, fix_title, insert_before
from codemod.rules.base import Rule, may_write_in_place
from codemod.rules.safety import CONTRACTS, assess


class SubscriptAssignment(Rule):
    """Clone a tensor before assigning into a subscript or slice of it.

    ## What it does
    Finds statements that write into part of a tensor: ``d[...] = v``, ``d[...] op= v`` (which
    stays in place even as ``d[i] = d[i] + v``), and in-place methods or functions on a
    subscript (``d[0].add_(v)``, ``F.relu_(d[:, 0])``). The base must be a name or attribute
    chain (``self.buf``). The fix puts ``d = d.clone()`` right before the statement, in the
    same block; a run of writes into the same tensor gets one clone, and a statement already
    preceded by ``d = d.clone()`` is left alone.

    ## Why is this bad?
    Writing into a slice writes into the tensor itself. If autograd saved ``d`` (or a view of
    it) for backward, ``backward()`` fails with the in-place error. Cloning first leaves the
    saved tensor intact; the clone takes the write.

    ## Example
    ```python
    h = torch.tanh(x)
    h[:, 0] = 0
    ```
    Use instead:
    ```python
    h = torch.tanh(x)
    h = h.clone()
    h[:, 0] = 0
    ```

    ## Fix safety
    Never for anything not known to be a tensor (dicts, lists, NumPy arrays, unknown names get
    no fix: ``.clone()`` would fail on them). Unsafe when the base is a parameter the caller may
    rely on, or has aliases used later (the fix rebinds them: ``d = e = d.clone()``). No fix for
    views whose base is used later (the write must reach it), for ``nn.Parameter`` attributes,
    or for names that are not local to the function. The fix costs one copy of the tensor.
    """

    CODE = "IPF004"
    NAME = "subscript-assignment"
    TRIGGERS = (rb"\][\s\\]*=(?!=)", rb"(?:[-+*/%&|^@]|\*\*|//|<<|>>)=", rb"[A-Za-z]\w*_\s*\(")

    @classmethod
    def could_start(cls, node: ast.AST) -> bool:
        return may_write_in_place(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            if isinstance(t, ast.Subscript):
                self._candidate(node, t)
                return

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Subscript):
            self._candidate(node, node.target)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        receiver: Optional[ast.AST] = None
        name = self.model.torch_name(func)
        if name is not None:
            if name in torch_api.INPLACE_FUNCTIONS and node.args:
                receiver = node.args[0]
        elif isinstance(func, ast.Attribute) and func.attr in torch_api.INPLACE_METHODS:
            receiver = func.value
        if isinstance(receiver, ast.Subscript):
            self._candidate(node, receiver)

    def _candidate(self, node: ast.AST, target: ast.Subscript) -> None:
        base = subscript_base(target)
        stmt = self.model.statement_of(node)
        message = f"Write into part of `{self.code(base)}`"
        if self._string_index(target):
            return  # d["key"]: a mapping, not a tensor
        key = target_key(base)
        if key is not None and self._already_cloned(stmt, key) \
                and not (isinstance(stmt, (ast.Assign, ast.AugAssign)) and reads(stmt.value, key)):
            return  # (`b[:, 1] = f(b[:, 0])` after `b[:, 0] = x`: f may save a view of the clone)
        verdict = assess(self.model, node, base, require_known=True, dtype_neutral=True)
        if verdict.status is None:
            return
        hazard = self.hazard(node, base) if verdict.status is not Status.SKIPPED or verdict.reason in CONTRACTS else None
        if verdict.status in (Status.SAFE, Status.UNSAFE) and self._in_a_line(stmt):
            also = verdict.also_rebind
            # `h[t] = f(h)`: the value is computed first and may save (a view of) `h` for
            # backward, so it must be computed before the clone, not from it.
            # A write inside the value (`h = d[0].add_(1).mul_(2)`) runs with it: the clone goes
            # before the statement, and a value reading `d` elsewhere (it may save it before the
            # write runs) gets no fix.
            temp = None
            if isinstance(stmt, (ast.Assign, ast.AugAssign)) and node is not stmt:
                if reads_outside(stmt.value, key, self._chain_of(node)):
                    self.report(node, message, Status.MANUAL, "read-in-statement", hazard=hazard)
                    return
            elif isinstance(stmt, (ast.Assign, ast.AugAssign)) and reads(stmt.value, key):
                temp = self.model.fresh_name(f"{key.rsplit('.', 1)[-1]}_value")

            def make(small, site) -> Fix:
                container, index = site.container(small)
                clone = clone_of(key, also)
                return Fix(container, lambda c: insert_before(c, index, clone, temp),
                           fix_title(clone, "Insert"), order=index)

            plan = self.plan(stmt, "BaseSmallStatement", make)
            self.report(node, message, verdict.status, verdict.reason, plan, hazard=hazard)
        else:
            self.report(node, message, verdict.status, verdict.reason or "unsupported-target", hazard=hazard)

    def _chain_of(self, node: ast.AST) -> ast.AST:
        """The outermost call of a chain of in-place calls starting at ``node``
        (``d[0].add_(1).mul_(d[1])``: they all run on the part written, after its clone)."""
        while True:
            attr = self.model.parent(node)
            call = self.model.parent(attr) if isinstance(attr, ast.Attribute) else None
            if not (isinstance(attr, ast.Attribute) and attr.value is node and attr.attr in torch_api.INPLACE_METHODS
                    and isinstance(call, ast.Call) and call.func is attr):
                return node
            node = call

    @staticmethod
    def _string_index(target: ast.Subscript) -> bool:
        index = target.slice
        elements = index.elts if isinstance(index, ast.Tuple) else [index]
        return any(
            isinstance(el, ast.JoinedStr) or (isinstance(el, ast.Constant) and isinstance(el.value, str))
            for el in elements
        )

    def _in_a_line(self, stmt: ast.AST) -> bool:
        """A simple statement (one that sits in a line or suite libcst can insert into)."""
        return not isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith,
                                     ast.Try, ast.TryStar, ast.FunctionDef, ast.AsyncFunctionDef,
                                     ast.ClassDef, ast.Match))

    def _already_cloned(self, stmt: ast.AST, key: str) -> bool:
        """Right after ``key = key.clone()`` (or ``key = other.clone()``: a fresh tensor that no op
        has saved either, IPF005's "update a copy"), or after a write into ``key`` that gets one."""
        prev = self._previous_statement(stmt)
        if (
            isinstance(prev, ast.Assign) and isinstance(prev.value, ast.Call)
            and isinstance(prev.value.func, ast.Attribute) and prev.value.func.attr == "clone"
            and not prev.value.args and not prev.value.keywords
        ):
            return any(target_key(t) == key for t in prev.targets)
        return prev is not None and self._writes_into(prev, key)

    @staticmethod
    def _writes_into(stmt: ast.AST, key: str) -> bool:
        """``key[...] = v`` / ``key[...] op= v`` whose value does not read ``key``."""
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AugAssign):
            targets, value = [stmt.target], stmt.value
        else:
            return False
        if len(targets) != 1 or not isinstance(targets[0], ast.Subscript):
            return False
        if target_key(subscript_base(targets[0])) != key:
            return False
        return not reads(value, key)

    def _previous_statement(self, stmt: ast.AST) -> Optional[ast.AST]:
        """The simple statement just before ``stmt`` in its block, if there is one."""
        parent = self.model.parent(stmt)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(parent, field, None)
            if isinstance(stmts, list):
                for i, s in enumerate(stmts):
                    if s is stmt:
                        return stmts[i - 1] if i > 0 and self._in_a_line(stmts[i - 1]) else None
        return None


def reads(expr: ast.AST, key: str) -> bool:
    return any(
        isinstance(n, (ast.Name, ast.Attribute)) and target_key(n) == key for n in ast.walk(expr)
    )




def reads_outside(expr: ast.AST, key: str, inner: ast.AST) -> bool:
    """``expr`` reads ``key`` somewhere other than inside ``inner``."""
    todo = [expr]
    while todo:
        n = todo.pop()
        if n is inner:
            continue
        if isinstance(n, (ast.Name, ast.Attribute)) and target_key(n) == key:
            return True
        todo.extend(ast.iter_child_nodes(n))
    return False
