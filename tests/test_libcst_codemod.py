"""The libcst codemod command: the engine behind libcst's own codemod tooling."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from libcst.codemod import CodemodTest

from codemod.frontends.libcst_codemod import InplaceFixCommand

from .conftest import ROOT

BEFORE = """
import torch


def f(x: torch.Tensor):
    h = torch.sigmoid(x)
    h += 1  # the hazard
    y = x * 2  # nothing saved y
    y += 1
    return h, y
"""


class TestInplaceFixCommand(CodemodTest):
    TRANSFORM = InplaceFixCommand

    def test_hazards_by_default(self):
        self.assertCodemod(BEFORE, BEFORE.replace("h += 1", "h = h + 1"))

    def test_selection(self):
        after = BEFORE.replace("h += 1", "h = h + 1").replace("y += 1", "y = y + 1")
        self.assertCodemod(BEFORE, after, select="IPF")

    def test_nothing_to_fix_is_skipped(self):
        self.assertCodemod("import torch\nx = torch.ones(2)\n", "import torch\nx = torch.ones(2)\n",
                           expected_skip=True)


def test_libcst_tool_runs_the_command(tmp_path):
    (tmp_path / ".libcst.codemod.yaml").write_text("modules: ['codemod']\nrepo_root: '.'\n")
    (tmp_path / "m.py").write_text(textwrap.dedent(BEFORE))
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "--no-format", "frontends.libcst_codemod.InplaceFixCommand", "m.py"],
        cwd=tmp_path, capture_output=True, text=True, env={"PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    assert "h = h + 1" in (tmp_path / "m.py").read_text()
