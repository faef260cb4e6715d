"""The release: the version written once, and the wheel that installs and runs without the source tree."""

from __future__ import annotations

import importlib.metadata
import pathlib
import subprocess
import sys
import tomllib

import pytest

import codemod

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_version_is_written_once_and_printed():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("inplacefix") == codemod.__version__
    shown = subprocess.run([sys.executable, "-m", "codemod", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert shown.returncode == 0 and shown.stdout.strip() == f"inplacefix {codemod.__version__}"


def test_the_changelog_has_a_section_for_this_version():
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in changelog
    assert f"## [{codemod.__version__}] - " in changelog


@pytest.mark.slow
def test_the_wheel_installs_in_a_fresh_venv_and_runs_check_fix_and_lsp(tmp_path):
    pytest.importorskip("build")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_wheel.py"), "--workdir", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all checks passed" in done.stdout
