"""Where a fix is built: a plan decided on the ``ast`` and what it may ask of libcst's tree."""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Tuple, Union

from codemod.findings import Fix
from codemod.fixes import _cst as cst

Anchor = Tuple[int, int]  # (line, character column) where a libcst node starts
Line = Union["cst.SimpleStatementLine", "cst.SimpleStatementSuite"]  # small statements' holders
Block = Union["cst.Module", "cst.IndentedBlock"]  # statements' holders


class FixSite:
    """What a plan may ask about libcst's tree besides its own node."""

    def container(self, stmt: cst.BaseSmallStatement) -> Tuple[Line, int]:
        """The line or suite holding the small statement ``stmt``, and its index there."""
        raise NotImplementedError

    def block(self, stmt: cst.BaseStatement) -> Tuple[Block, int]:
        """The block (the module or an indented block) holding the statement ``stmt`` (a
        line of small statements or a compound statement), and its index there: the site of
        fixes that move or wrap whole statements (``fixes.edits.wrap_in_with``)."""
        raise NotImplementedError

    @property
    def module(self) -> cst.Module:
        """The parsed module (for fixes on the whole file: ``fixes.edits.ensure_import``)."""
        raise NotImplementedError


@dataclasses.dataclass
class Plan:
    """A fix decided on the ``ast``, to be built on libcst's tree of the same file."""

    anchor: Anchor  # where the libcst node to build from starts
    node_type: str  # the name of that node's libcst type ("AugAssign", "Arg"...)
    make: Callable[[cst.CSTNode, FixSite], Optional[Fix]]  # None: no fix after all
    whole_module: bool = False  # the fix edits the module as well (adds an import)
