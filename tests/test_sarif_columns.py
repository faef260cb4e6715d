"""SARIF columns: the run says how they are counted, and they point at the code in that count
even after an emoji (2 utf-16 units, SARIF's default kind) on the line."""

from __future__ import annotations

import json
import textwrap

from typer.testing import CliRunner

from codemod.frontends.cli import app

SOURCE = textwrap.dedent(
    """\
    import torch


    def f(x):
        h = torch.sigmoid(x)
        s = "😀😀"; h += 1
        return h, s
    """
)


def region_text(lines: list, region: dict, kind: str) -> str:
    """The text a SARIF viewer highlights for a one-line ``region`` under ``kind``."""
    line = lines[region["startLine"] - 1]
    start, end = region["startColumn"] - 1, region["endColumn"] - 1
    if kind == "unicodeCodePoints":
        return line[start:end]
    assert kind == "utf16CodeUnits", kind
    return line.encode("utf-16-le")[2 * start:2 * end].decode("utf-16-le")


def test_sarif_declares_its_column_kind_and_counts_in_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(SOURCE, encoding="utf-8")
    out = CliRunner().invoke(app, ["check", "--format", "sarif", "model.py"]).stdout
    [run] = json.loads(out)["runs"]
    kind = run.get("columnKind", "utf16CodeUnits")  # SARIF 2.1.0's default when absent
    [result] = run["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region_text(SOURCE.splitlines(), region, kind) == "h += 1"
    assert kind == "unicodeCodePoints"
