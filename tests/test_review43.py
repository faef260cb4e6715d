"""Stop-43 review (rev43): defects found by reading stop 42's analysis code and the suppression
screen, each shown by a program run with torch before it was fixed."""

from __future__ import annotations

import textwrap

import pytest
import torch
from typer.testing import CliRunner

from codemod.engine.suppression import directives, suppressions
from codemod.frontends.cli import app

runner = CliRunner()

BODY = """\
import torch
def f(x):
    y = x.sigmoid()
    y += 1  {comment}
    return y
"""


def test_the_hazard_is_real():
    x = torch.randn(3, requires_grad=True)
    y = x.sigmoid()
    y += 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("comment", ["# NOQA: IPF101", "# NOQA", "# NoQa: ipf101", "# INPLACEFIX: ignore[IPF101]",
                                     "# Inplacefix: Ignore"])
def test_suppression_comments_in_any_case(tmp_path, monkeypatch, comment):
    """Ruff (a case-insensitive matcher) and flake8 (``re.IGNORECASE``) take ``# NOQA: CODE``; so
    does our comment pattern, but the cheap screen before it looked for lowercase words only, so
    a file whose only suppression was upper-case reported the finding anyway."""
    source = BODY.format(comment=comment)
    assert 4 in suppressions(source)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(source)
    result = runner.invoke(app, ["check", "--no-cache", "m.py"])
    assert result.exit_code == 0, result.stdout


def test_file_level_comment_in_any_case():
    source = "# INPLACEFIX: NOQA: IPF101\n" + BODY.format(comment="")
    assert [d.lines.start for d in directives(source)] == [0]


def test_control_unsuppressed_still_reported(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(BODY.format(comment="# NOQA: IPF104"))
    result = runner.invoke(app, ["check", "--no-cache", "m.py"])
    assert result.exit_code == 1 and "IPF101" in result.stdout
