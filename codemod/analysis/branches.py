"""Where statements sit in ``if``/``else`` branches and blocks: what one pass can run.

Plain syntax, for the hazard analysis's questions "does this save run before that write?":
two branches of one ``if`` never both run in one pass; an ``if``/``elif``/``else`` whose every
branch assigns a name rebinds it on every pass; ``if x.requires_grad:`` splits a function into
the part where x requires grad and the part where it does not.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Sequence

from codemod.analysis.syntax import target_key


def binds(block: Sequence[ast.stmt], key: str) -> bool:
    """A statement of ``block`` (at its top level) assigns ``key``."""
    for stmt in block:
        if isinstance(stmt, ast.Assign):
            for target in stmt.targets:
                parts = target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]
                if any(target_key(part) == key for part in parts):
                    return True
    return False


def always_binds(test: ast.If, key: str) -> bool:
    """Every branch of ``if``/``elif``/``else`` assigns ``key`` at its top level."""
    if not binds(test.body, key) or not test.orelse:
        return False
    if len(test.orelse) == 1 and isinstance(test.orelse[0], ast.If):
        return binds(test.orelse, key) or always_binds(test.orelse[0], key)
    return binds(test.orelse, key)


def requires_grad_test(test: ast.expr, name: str) -> Optional[bool]:
    """``name.requires_grad`` -> True, ``not name.requires_grad`` -> False, else None."""
    negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
    inner = test.operand if isinstance(test, ast.UnaryOp) and negated else test
    if isinstance(inner, ast.Attribute) and inner.attr == "requires_grad" and isinstance(inner.value, ast.Name) \
            and inner.value.id == name:
        return not negated
    return None


def statement_lists(node: ast.AST) -> List[List[ast.stmt]]:
    """The statement lists a node holds (body, orelse, finalbody, handlers' bodies)."""
    found = [getattr(node, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(node, f, None), list)]
    return [b for b in found if b and isinstance(b[0], ast.stmt)]


def branch(node: ast.AST, test: ast.If) -> Optional[str]:
    """Which branch of ``test`` holds ``node``: "body", "orelse", or None."""
    for name, block in (("body", test.body), ("orelse", test.orelse)):
        if block and any(within(node, stmt) for stmt in block):
            return name
    return None


def within(node: ast.AST, outer: ast.AST) -> bool:
    """Whether ``node`` lies in ``outer``'s source span."""
    inner = (node.lineno, node.col_offset), (node.end_lineno or 0, node.end_col_offset or 0)  # type: ignore[attr-defined]
    span = (outer.lineno, outer.col_offset), (outer.end_lineno or 0, outer.end_col_offset or 0)  # type: ignore[attr-defined]
    return span[0] <= inner[0] and inner[1] <= span[1]
