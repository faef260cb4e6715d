"""inplacefix as a libcst codemod command, for pipelines built on libcst's codemod tooling.

With ``modules: [codemod]`` in ``.libcst.codemod.yaml``::

    python -m libcst.tool codemod frontends.libcst_codemod.InplaceFixCommand --select IPF src/

runs the same engine as ``inplacefix fix`` on every file libcst's runner hands it (its ``-j``,
its diff and its summary), and composes with other commands. Files with nothing to fix are
skipped, as are files the engine reports errors for.
"""

from __future__ import annotations

import argparse

import libcst as cst
from libcst.codemod import Codemod, CodemodContext, SkipFile

from codemod.config import Settings, split_codes
from codemod.engine.pipeline import fix_source


class InplaceFixCommand(Codemod):
    DESCRIPTION = "Rewrite PyTorch in-place operations that break autograd (inplacefix)."

    def __init__(self, context: CodemodContext, select: str = "IPF1", unsafe_fixes: bool = False) -> None:
        super().__init__(context)
        self.settings = Settings(select=split_codes([select]) or ("IPF1",), unsafe_fixes=unsafe_fixes)

    @staticmethod
    def add_args(arg_parser: argparse.ArgumentParser) -> None:
        arg_parser.add_argument("--select", default="IPF1",
                                help="rule codes or prefixes, comma-separated (default: hazards, IPF1)")
        arg_parser.add_argument("--unsafe-fixes", action="store_true", help="apply unsafe fixes too")

    def transform_module_impl(self, tree: cst.Module) -> cst.Module:
        result = fix_source(tree.bytes, self.context.filename or "<module>", self.settings)
        if result.error is not None:
            raise SkipFile(result.error.message)
        if not result.changed:
            raise SkipFile("no in-place rewrite applies")
        return cst.parse_module(result.fixed_bytes)
