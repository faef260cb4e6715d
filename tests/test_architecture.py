"""The house's rules, enforced: one-way imports between layers (import-linter's contracts in
pyproject.toml), a check that never imports libcst or torch, and a deliberate back-edge that
the contract must catch (so the contract itself cannot silently stop working)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from .conftest import ROOT

LINT_IMPORTS = os.path.join(os.path.dirname(sys.executable), "lint-imports")


def lint_imports(root) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=root, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_layer_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_a_back_edge_breaks_the_layer_contract(tmp_path):
    """A module of the analysis that imports a rule, even inside a function, is caught."""
    shutil.copytree(ROOT / "codemod", tmp_path / "codemod", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "codemod" / "analysis" / "back_edge.py").write_text(
        "def rules():\n    from codemod.rules import registry\n\n    return registry.rules()\n"
    )
    result = lint_imports(tmp_path)
    assert result.returncode != 0
    assert "codemod.analysis is not allowed to import codemod.rules" in result.stdout
    assert "codemod.analysis.back_edge -> codemod.rules.registry" in result.stdout


def test_mypy_types_the_analysis_and_the_fixes():
    """The analysis and the fixes pass mypy with the project's settings ([tool.mypy] in
    pyproject.toml: every function annotated, no bare containers, no implicit Optional).
    mypy keeps its cache in .mypy_cache (which it tells git to ignore): about 1 s warm, 10 cold."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-m", "mypy", "codemod/analysis", "codemod/fixes"], cwd=ROOT,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
