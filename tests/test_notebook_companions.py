"""Notebooks keep the companion edits of a fix in the cell it fixes: the ``no_grad`` wrap of a
module's parameter needs ``import torch`` (the notebook imports only ``torch.nn as nn`` and
``from torch import randn``). The written notebook runs (its cells executed in order, with
torch); ``check --format json`` and the editor's quick fix give an edit of that cell alone, in
its own lines, with no internal cell marker (``__inplacefix_cell__``) in any edit or diff."""

from __future__ import annotations

import json
import sys

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from typer.testing import CliRunner

from codemod.frontends.cli import app

from .test_lsp_positions import apply, position_at
from .test_suppress_placement import open_notebook

runner = CliRunner()

CELLS = [
    "import torch.nn as nn\nfrom torch import randn",
    "x = 1",
    "class TreeModel(nn.Module):\n"
    "    def __init__(self, vocab, dim, vectors):\n"
    "        super().__init__()\n"
    "        self.emb = nn.Embedding(vocab, dim)\n"
    "        self.emb.weight.copy_(vectors)\n"
    "        self.out = nn.Linear(dim, 2)\n"
    "\n"
    "    def forward(self, ids):\n"
    "        return self.out(self.emb(ids).mean(0))\n",
    "model = TreeModel(10, 4, randn(10, 4))\n"
    "y = model(randn(10).abs().mul(3).long().clamp(max=9))\n"
    "y.sum().backward()\n"
    "grad = model.emb.weight.grad",
]
MARKER = "__inplacefix_cell__"


def notebook(cells) -> str:
    nb = {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                   "source": c.splitlines(keepends=True)} for c in cells],
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4, "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1) + "\n"


def run_cells(cells) -> dict:
    """The cells executed in order in one namespace, as a kernel runs them."""
    namespace: dict = {}
    for number, source in enumerate(cells, 1):
        exec(compile(source, f"<cell {number}>", "exec"), namespace)
    return namespace


def test_the_broken_notebook_fails_when_run():
    with pytest.raises(RuntimeError, match="leaf Variable"):
        run_cells(CELLS)


def test_fix_writes_the_import_into_the_fixed_cell(tmp_path, monkeypatch):
    (tmp_path / "train.ipynb").write_text(notebook(CELLS))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["fix", "--diff", "train.ipynb"])
    assert result.exit_code == 1, result.stderr
    assert MARKER not in result.stdout and "+import torch\n" in result.stdout
    result = runner.invoke(app, ["fix", "train.ipynb"])
    assert result.exit_code == 0, result.stderr
    cells = ["".join(c["source"]) for c in json.loads((tmp_path / "train.ipynb").read_text())["cells"]]
    assert MARKER not in "".join(cells)
    assert cells[:2] == CELLS[:2] and cells[3] == CELLS[3]  # only the fixed cell changed
    assert cells[2].startswith("import torch\n")
    namespace = run_cells(cells)  # no NameError: torch is imported where the wrap needs it
    assert namespace["grad"] is not None


def _apply_cell_edit(source: str, edit: dict) -> str:
    lines = source.splitlines(keepends=True) + [""]
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(loc):
        return starts[loc["row"] - 1] + loc["column"] - 1

    return source[:offset(edit["location"])] + edit["content"] + source[offset(edit["end_location"]):]


def test_check_json_edit_is_of_the_cell(tmp_path, monkeypatch):
    (tmp_path / "train.ipynb").write_text(notebook(CELLS))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--format", "json", "train.ipynb"])
    [finding] = json.loads(result.stdout)["findings"]
    [edit] = finding["fix"]["edits"]
    assert finding["cell"] == 3 and MARKER not in edit["content"]
    assert edit["location"]["row"] >= 1 and edit["end_location"]["row"] <= CELLS[2].count("\n") + 1
    cells = list(CELLS)
    cells[2] = _apply_cell_edit(CELLS[2], edit)
    assert run_cells(cells)["grad"] is not None


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codemod", "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(position_encodings=["utf-16"])),
        initialization_options={"inplacefix": {"candidates": "hint"}},
    ))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_quick_fix_in_a_cell_edits_that_cell(client: LanguageClient):
    uris = await open_notebook(client, "/tmp/inplacefix_companions/train.ipynb", CELLS, wait_for=2)
    text = CELLS[2]
    index = text.index("self.emb.weight.copy_")
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uris[2]),
        range=lsp.Range(position_at(text, index, "utf-16"), position_at(text, index + 5, "utf-16")),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix]),
    ))
    [wrap] = [a for a in actions if "no_grad" in a.title]
    assert list(wrap.edit.changes) == [uris[2]]  # that cell only
    assert all(MARKER not in e.new_text for e in wrap.edit.changes[uris[2]])
    cells = list(CELLS)
    cells[2] = apply(text, wrap.edit.changes[uris[2]], "utf-16")
    assert cells[2].startswith("import torch\n")
    assert run_cells(cells)["grad"] is not None


def test_a_module_imported_only_by_a_later_cell_is_imported_in_the_fixed_cell(tmp_path, monkeypatch):
    """``import torch`` in the last cell: the wrap's ``torch`` is not there yet when the cell
    it fixes runs, so the fixed cell imports it too (and the cells before are left alone)."""
    cells = ["from torch import nn, randn", CELLS[2], CELLS[3], "import torch\nversion = torch.__version__"]
    (tmp_path / "later.ipynb").write_text(notebook(cells))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--format", "json", "later.ipynb"])
    [edit] = json.loads(result.stdout)["findings"][0]["fix"]["edits"]
    edited = list(cells)
    edited[1] = _apply_cell_edit(cells[1], edit)
    assert run_cells(edited)["grad"] is not None
    assert runner.invoke(app, ["fix", "later.ipynb"]).exit_code == 0
    written = ["".join(c["source"]) for c in json.loads((tmp_path / "later.ipynb").read_text())["cells"]]
    assert written[1] == edited[1] and written[0] == cells[0] and written[2:] == cells[2:]
    assert run_cells(written)["grad"] is not None
