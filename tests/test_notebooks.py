"""Notebooks: cells analysed as one program, only fixed cells rewritten, IPython syntax kept."""

from __future__ import annotations

import json
import linecache

import pytest
from typer.testing import CliRunner

from codemod.frontends.cli import app
from codemod.config import Settings
from codemod.engine.notebook import mask_ipython, process_notebook

from .conftest import FIXTURES

NOTEBOOKS = sorted(p for p in (FIXTURES / "notebooks").glob("*.ipynb") if not p.name.endswith(".out.ipynb"))
runner = CliRunner()


def fixed(path, settings=Settings()):
    return process_notebook(path.read_bytes(), str(path), settings, fix=True)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_expected_output_notebook(path, update_fixtures):
    result = fixed(path)
    expected = path.with_name(path.stem + ".out.ipynb")
    text = result.fixed if result.changed else path.read_text(encoding="utf-8")
    if update_fixtures:
        expected.write_text(text, encoding="utf-8")
    assert expected.read_text(encoding="utf-8") == text
    again = process_notebook(expected.read_bytes(), str(expected), Settings(), fix=True)
    assert not again.changed, "a second run changes nothing"


def test_nothing_to_fix_comes_back_byte_identical(tmp_path):
    path = tmp_path / "outputs.ipynb"
    data = (FIXTURES / "notebooks" / "outputs.ipynb").read_bytes()
    path.write_bytes(data)
    code = runner.invoke(app, ["fix", str(path)]).exit_code
    assert code == 0 and path.read_bytes() == data


def test_only_fixed_cells_change():
    path = FIXTURES / "notebooks" / "outputs.ipynb"
    result = fixed(path, Settings(select=("ALL",)))  # the harmless `y += 1` too
    before, after = json.loads(path.read_text()), json.loads(result.fixed)
    assert [c for c in after["cells"]][1:] == before["cells"][1:]
    changed = after["cells"][0]
    assert {k: v for k, v in changed.items() if k != "source"} == {k: v for k, v in before["cells"][0].items() if k != "source"}
    assert "y = y + 1  # mul by a number saves nothing: harmless\n" in changed["source"]
    assert result.fixed.count("\n") == path.read_text().count("\n"), "layout kept: one line per source line"


def test_magics_and_bad_cells_are_kept_byte_for_byte():
    path = FIXTURES / "notebooks" / "magics.ipynb"
    result = fixed(path)
    before, after = json.loads(path.read_text())["cells"], json.loads(result.fixed)["cells"]
    assert after[0] == before[0] and after[1] == before[1] and after[3] == before[3]
    assert "".join(after[2]["source"]) == "".join(before[2]["source"]).replace(
        "h += 1  # conflicts", "h = h + 1  # conflicts")
    [error] = result.skipped_parts
    assert error.message.startswith("cell 4 cannot be parsed: invalid syntax") and (error.line, error.column) == (1, 11)
    assert {f.cell for f in result.findings} == {3, 5}


def test_findings_name_cell_and_line():
    out = runner.invoke(app, ["check", str(FIXTURES / "notebooks" / "broken_training.ipynb")]).stdout
    assert ":cell 3:9:9: IPF101 [*] In-place `+=` on `out`: `out` is the output of `torch.sigmoid` at line 8" in out


def test_layout_that_cannot_be_reproduced_is_not_rewritten(tmp_path):
    nb = json.loads((FIXTURES / "notebooks" / "magics.ipynb").read_text())
    path = tmp_path / "odd.ipynb"
    path.write_text(json.dumps(nb, indent=3).replace('": ', '":  '))
    result = process_notebook(path.read_bytes(), str(path), Settings(), fix=True)
    assert result.fixed is None and "cannot be reproduced" in result.error.message


def test_notebooks_can_be_turned_off(tmp_path):
    (tmp_path / "nb.ipynb").write_bytes((FIXTURES / "notebooks" / "magics.ipynb").read_bytes())
    assert "IPF101" in runner.invoke(app, ["check", str(tmp_path)]).stdout
    assert runner.invoke(app, ["check", "--no-notebooks", str(tmp_path)]).stdout == ""


def run_cells(text: str):
    """Execute a notebook's code cells top to bottom, as Jupyter would (IPython lines skipped)."""
    namespace: dict = {}
    for cell in json.loads(text)["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or source.startswith("%%"):
            continue
        exec(compile("\n".join(mask_ipython(source).lines), "<cell>", "exec"), namespace)
    return namespace


def test_fixed_training_notebook_runs_backward():
    torch = pytest.importorskip("torch")
    path = FIXTURES / "notebooks" / "broken_training.ipynb"
    with pytest.raises(RuntimeError, match="inplace operation"):
        run_cells(path.read_text())
    namespace = run_cells(fixed(path).fixed)
    assert torch.isfinite(namespace["loss"])


def test_locator_names_the_jupyter_cell():
    torch = pytest.importorskip("torch")
    from codemod.runtime.locate import Locator

    source = "h = torch.sigmoid(w)\nh += 1\n"
    name = "<ipython-input-7-0123abcd>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    with Locator() as loc:
        exec(compile(source, name, "exec"), {"torch": torch, "w": torch.randn(3, requires_grad=True)})
    conflict = loc.conflicts[0]
    assert (conflict.save.cell, conflict.save.line, conflict.mutation.line) == ("In [7]", 1, 2)
    assert "cell In [7], line 2: h += 1" in conflict.describe()


def test_json_and_sarif_name_the_cell():
    path = str(FIXTURES / "notebooks" / "magics.ipynb")
    doc = json.loads(runner.invoke(app, ["check", path, "--format", "json"]).stdout)
    assert [(f["cell"], f["location"]["row"]) for f in doc["findings"]] == [(3, 4), (5, 2)]
    assert doc["errors"][0]["message"].startswith("cell 4 cannot be parsed: invalid syntax")
    assert doc["errors"][0]["location"] == {"row": 1, "column": 12}, "CPython's location in the cell"
    edit = doc["findings"][0]["fix"]["edits"][0]
    assert edit["content"].startswith("h = h + 1") and edit["location"]["row"] == 4
    sarif = json.loads(runner.invoke(app, ["check", path, "--format", "sarif"]).stdout)
    results = sarif["runs"][0]["results"]
    assert [r["properties"]["cell"] for r in results] == [3, 5]
    assert results[0]["message"]["text"].startswith("cell 3: In-place `+=` on `h`")
