"""Would a run-made rewrite turn a write that is the point into a rebinding nobody reads?

``for p in group["params"]: p.add_(e_w)`` moves the parameters the loop's iterable holds (SAM's
``first_step``); ``p = p.add(e_w)``, or ``p = p.clone()`` before the write, only rebinds the loop
variable, which nothing reads again: the mutation is gone and the program silently does less.
The snapshot oracle can verify such a no-op where the program's compared results never show the
mutated object (the moved weights put back before anything compared reads them), so ``repair``
asks the analysis first. The fact is the static rules' own (``Holders.rebinding_loses``, the
``dead-store`` reason of :mod:`codemod.rules.safety`): the name is read nowhere after the write
(no path reads it; a loop around the write counts as reading it again) while another holder
keeps its object (a loop's iterable, the caller's argument, an attribute's owner, a container).
A rebinding that is read afterwards is left to the verification.
"""

from __future__ import annotations

import ast
from typing import Optional

from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source


class DeadRebindings:
    """Per file text: the analysis, built once and only when a rewrite rebinds a name."""

    def __init__(self, source: Optional[Source], data: bytes) -> None:
        self._source = source
        self._data = data
        self._model: Optional[SemanticModel] = None
        self._failed = False

    def _analysis(self) -> Optional[SemanticModel]:
        if self._model is None and not self._failed:
            try:
                self._model = SemanticModel(self._source if self._source is not None else Source(self._data))
            except (SyntaxError, ValueError):  # not Python CPython parses: nothing known
                self._failed = True
        return self._model

    def lost(self, line: int, column: Optional[int], name: str) -> Optional[str]:
        """Why rebinding ``name`` at the statement on ``line`` (``column``: UTF-8 bytes, as the
        run reports it) would only drop the write, in words; None where it would not (or the
        statement is not found: unknown is left to the verification, as before)."""
        model = self._analysis()
        if model is None:
            return None
        stmt = _statement_at(model.module, line, column)
        if stmt is None:
            return None
        target = next((n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name), None)
        if target is None:
            return None
        lost = model.holders.rebinding_loses(target, stmt)
        if lost is None or lost[0] != "dead-store":
            return None
        return f"it rebinds `{name}`, which nothing reads afterwards, while {lost[1]} keeps the tensor: " \
               "it would only drop the write (dead-store)"


def _statement_at(module: ast.Module, line: int, column: Optional[int]) -> Optional[ast.stmt]:
    """The innermost simple statement holding (``line``, ``column``)."""
    best: Optional[ast.stmt] = None
    for node in ast.walk(module):
        if not isinstance(node, ast.stmt) or isinstance(node, _COMPOUND):
            continue
        end = node.end_lineno or node.lineno
        if not node.lineno <= line <= end:
            continue
        if column is not None and line == node.lineno and column < node.col_offset:
            continue
        if column is not None and line == end and node.end_col_offset is not None and column > node.end_col_offset:
            continue
        if best is None or (node.lineno, node.col_offset) >= (best.lineno, best.col_offset):
            best = node
    return best


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.If, ast.For, ast.AsyncFor, ast.While,
             ast.With, ast.AsyncWith, ast.Try) + ((ast.Match,) if hasattr(ast, "Match") else ()) \
    + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
