"""Notebooks as users write them: IPython syntax found on tokens (a `?` in a comment is not help),
notebooks on stdin, other kernels, nbformat 3, malformed cells, and the last cell's newline."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from codemod.config import Settings
from codemod.engine.notebook import mask_ipython, process_notebook
from codemod.frontends.cli import app

runner = CliRunner()
HEAD = "import torch\nw = torch.ones(3, requires_grad=True)\n"


def notebook(*sources, metadata=None, as_list=True) -> str:
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": s.splitlines(keepends=True) if as_list else s} for s in sources]
    meta = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    doc = {"cells": cells, "metadata": metadata if metadata is not None else meta, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def check(text: str, fix: bool = False, settings: Settings = Settings()):
    return process_notebook(text.encode(), "nb.ipynb", settings, fix=fix)


def invoke(*args, input=None):
    result = runner.invoke(app, [str(a) for a in args], input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def test_question_mark_in_a_comment_is_not_help():
    result = check(notebook(HEAD + "h = torch.sigmoid(w)\nh += 1  # right?\nh.sum().backward()\n"))
    assert [(f.code, f.cell, f.span.line) for f in result.findings] == [("IPF101", 1, 4)]


def test_comment_ending_in_a_question_mark_keeps_the_cell():
    result = check(notebook(HEAD + "def f(x):\n# why?\n    h = torch.sigmoid(x)\n    h += 1\n    return h\n"))
    assert result.skipped_parts == [] and [f.code for f in result.findings] == ["IPF101"]


def test_continuation_line_starting_with_percent_is_python():
    source = HEAD + "h = torch.sigmoid(w)\nk = (3\n% 2)\nh += 1\n"
    result = check(notebook(source))
    assert result.skipped_parts == [] and [f.span.line for f in result.findings] == [6]
    assert mask_ipython(source).masked == []


def test_ipython_lines_are_still_masked_and_kept():
    source = ("%matplotlib inline\n!pip install x\nfiles = !ls\nw?\n??w\nh = torch.sigmoid(w)\n"
              "for i in range(2):\n    %time h.sum()\nh += 1\nw.grad?\n%timeit \\\n  h.sum()\nk = 1\n")
    masked = mask_ipython(source)
    assert masked.masked == ["%matplotlib inline", "!pip install x", "files = !ls", "w?", "??w",
                             "    %time h.sum()", "w.grad?", "%timeit \\", "  h.sum()"]
    text = notebook(HEAD, source)
    result = check(text, fix=True)
    assert result.skipped_parts == [] and [f.cell for f in result.findings] == [2]
    after = "".join(json.loads(result.fixed)["cells"][1]["source"])
    assert after == source.replace("h += 1\n", "h = h + 1\n")


@pytest.mark.parametrize("ending", ["\n", ""])
def test_a_changed_last_cell_gains_no_blank_line(ending):
    text = notebook(HEAD, "h = torch.sigmoid(w)\nh += 1" + ending)
    result = check(text, fix=True)
    assert "".join(json.loads(result.fixed)["cells"][1]["source"]) == "h = torch.sigmoid(w)\nh = h + 1" + ending


def test_notebook_on_stdin_is_read_as_a_notebook():
    text = notebook(HEAD + "h = torch.sigmoid(w)\nh += 1\n")
    result = invoke("check", "-", "--stdin-filename", "x.ipynb", input=text)
    assert result.exit_code == 1 and "x.ipynb:cell 1:4:1: IPF101" in result.stdout
    doc = json.loads(invoke("check", "-", "--stdin-filename", "x.ipynb", "--format", "json", input=text).stdout)
    assert [(f["cell"], f["location"]["row"]) for f in doc["findings"]] == [(1, 4)]


@pytest.mark.parametrize("metadata", [
    {"kernelspec": {"display_name": "R", "language": "R", "name": "ir"}, "language_info": {"name": "R"}},
    {"kernelspec": {"display_name": "Julia 1.10", "language": "julia", "name": "julia-1.10"}},
    {"language_info": {"name": "julia"}},
], ids=["r", "julia-kernelspec", "julia-language-info"])
def test_other_kernels_are_skipped_with_a_notice(tmp_path, metadata):
    path = tmp_path / "other.ipynb"
    path.write_text(notebook("x <- c(1, 2)\nx[1] <- 0\nh += 1?\n", metadata=metadata))
    result = invoke("check", path)
    assert result.exit_code == 0 and result.stdout == ""
    assert "not a Python notebook" in result.stderr and "cannot be parsed" not in result.stderr


NBFORMAT3 = {
    "metadata": {"name": ""}, "nbformat": 3, "nbformat_minor": 0,
    "worksheets": [{"cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Old"]},
        {"cell_type": "code", "collapsed": False, "input": ["import torch\n", "w = torch.ones(3, requires_grad=True)\n"],
         "language": "python", "metadata": {}, "outputs": []},
        {"cell_type": "code", "collapsed": False, "input": ["h = torch.sigmoid(w)\n", "h += 1"],
         "language": "python", "metadata": {}, "outputs": []},
    ], "metadata": {}}],
}


def test_nbformat_3_is_checked_and_fixed():
    text = json.dumps(NBFORMAT3, indent=1) + "\n"
    result = check(text, fix=True)
    assert [(f.code, f.cell, f.span.line) for f in result.findings] == [("IPF101", 3, 2)]
    after = json.loads(result.fixed)
    assert after["worksheets"][0]["cells"][2]["input"] == ["h = torch.sigmoid(w)\n", "h = h + 1"]
    assert {k: v for k, v in after.items() if k != "worksheets"} == {k: v for k, v in NBFORMAT3.items() if k != "worksheets"}


MALFORMED = {
    "a-list": "[]",
    "cells-a-dict": '{"cells": {}, "nbformat": 4}',
    "no-cells": '{"nbformat": 4, "metadata": {}}',
    "cell-a-number": '{"cells": [5], "nbformat": 4}',
    "source-a-number": '{"cells": [{"cell_type": "code", "source": 5}], "nbformat": 4}',
    "source-of-numbers": '{"cells": [{"cell_type": "code", "source": [1, 2]}], "nbformat": 4}',
    "worksheets-a-string": '{"worksheets": "x", "nbformat": 3}',
    "metadata-a-list": '{"cells": [], "metadata": [], "nbformat": 4}',
    "kernelspec-a-string": '{"cells": [], "metadata": {"kernelspec": "python3"}, "nbformat": 4}',
    "not-utf8": b'{"cells": [{"cell_type": "code", "source": "caf\xe9"}]}',
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_notebooks_are_clear_per_file_errors(tmp_path, name):
    bad = MALFORMED[name]
    (tmp_path / "bad.ipynb").write_bytes(bad if isinstance(bad, bytes) else bad.encode())
    (tmp_path / "good.ipynb").write_text(notebook(HEAD + "h = torch.sigmoid(w)\nh += 1\n"))
    result = invoke("check", tmp_path)
    assert result.exit_code == 2
    [error] = [line for line in result.stderr.splitlines() if "error:" in line]
    assert "bad.ipynb:1:1: error: cannot read the notebook: " in error and "internal error" not in error
    assert "good.ipynb:cell 1:4:1: IPF101" in result.stdout
