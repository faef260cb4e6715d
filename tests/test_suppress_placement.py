""""Suppress IPFxxx on this line" puts its comment where a comment can go and where it is read:
never after a continuation backslash (the file would not parse) nor inside a triple-quoted
string (the string would change and nothing be suppressed). The editor's edit is applied as a
client applies it; the file must parse to the same program and ``check`` must no longer report
the finding. A real server over stdio, real libcst."""

from __future__ import annotations

import ast
import json
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from typer.testing import CliRunner

from codemod.frontends.cli import app

from .test_lsp_positions import apply, open_document, position_at

pytestmark = pytest.mark.asyncio(loop_scope="module")
runner = CliRunner()

BACKSLASH = textwrap.dedent(
    """\
    import torch


    def f(x):
        h = torch.sigmoid(x)
        y = h.add_(1) + \\
            2
        return y
    """
)
TRIPLE_QUOTED = textwrap.dedent(
    '''\
    import torch


    def f(x):
        g = torch.exp(x)
        g.mul_(2); s = """
        text
        """
        return g, s
    '''
)
BOTH = textwrap.dedent(
    '''\
    import torch


    def f(x):
        g = torch.exp(x)
        y = g.mul_(2) + len("""
        a""") + \\
            len(\'\'\'b
        \'\'\')
        return y
    '''
)
CASES = {
    "backslash": (BACKSLASH, "h.add_(1)", "IPF103"),
    "triple_quoted": (TRIPLE_QUOTED, "g.mul_(2)", "IPF103"),
    "string_then_backslash_then_string": (BOTH, "g.mul_(2)", "IPF103"),
    "backslash_cr_only": (BACKSLASH.replace("\n", "\r"), "h.add_(1)", "IPF103"),
    "triple_quoted_crlf": (TRIPLE_QUOTED.replace("\n", "\r\n"), "g.mul_(2)", "IPF103"),
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codemod", "lsp"]),
                    scope="module")
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(
            general=lsp.GeneralClientCapabilities(position_encodings=["utf-16"])),
        initialization_options={"inplacefix": {"candidates": "hint"}},
    ))
    lsp_client.encoding = "utf-16"
    yield
    await lsp_client.shutdown_session()


async def suppress_edit(client: LanguageClient, uri: str, text: str, needle: str, code: str):
    index = text.index(needle)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(position_at(text, index, "utf-16"), position_at(text, index + len(needle), "utf-16")),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix]),
    ))
    [action] = [a for a in actions if a.title == f"Suppress {code} on this line"]
    return action.edit.changes[uri]


async def open_notebook(client: LanguageClient, path: str, cells: list, wait_for: int) -> list:
    """Open a notebook of code ``cells``; wait until cell ``wait_for`` has diagnostics. Its
    cells' URIs."""
    uris = [f"vscode-notebook-cell:{path}#C{i}" for i in range(len(cells))]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
        notebook_document=lsp.NotebookDocument(
            uri=f"file://{path}", notebook_type="jupyter-notebook", version=1,
            cells=[lsp.NotebookCell(kind=lsp.NotebookCellKind.Code, document=u) for u in uris]),
        cell_text_documents=[lsp.TextDocumentItem(uri=u, language_id="python", version=1, text=t)
                             for u, t in zip(uris, cells)],
    ))
    for _ in range(8):
        await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if client.diagnostics.get(uris[wait_for]):
            break
    return uris


def reported(tmp_path, name: str, text: str) -> set:
    (tmp_path / name).write_bytes(text.encode("utf-8"))
    result = runner.invoke(app, ["check", "--select", "ALL", "--format", "json", str(tmp_path / name)])
    document = json.loads(result.stdout)
    assert document["errors"] == []
    return {f["code"] for f in document["findings"]}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_suppress_comment_parses_and_suppresses(client: LanguageClient, case, tmp_path):
    text, needle, code = CASES[case]
    uri = f"file:///tmp/inplacefix_suppress/{case}.py"
    assert code in reported(tmp_path, "before.py", text)
    await open_document(client, text, uri)
    edited = apply(text, await suppress_edit(client, uri, text, needle, code), "utf-16")
    assert "# inplacefix: ignore[" + code + "]" in edited
    assert ast.dump(ast.parse(edited)) == ast.dump(ast.parse(text))  # parses; no string changed
    assert code not in reported(tmp_path, "after.py", edited)


async def test_suppress_in_a_notebook_cell(client: LanguageClient, tmp_path):
    """A cell: the comment goes after the continuation, in the cell; the IPython line above it
    (masked for the analysis) does not stop it."""
    cells = ["import torch\nx = torch.randn(3, requires_grad=True)",
             "%matplotlib inline\nh = torch.sigmoid(x)\ny = h.add_(1) + \\\n    2\ny.sum().backward()"]
    uris = await open_notebook(client, "/tmp/inplacefix_suppress/cells.ipynb", cells, wait_for=1)
    edited = apply(cells[1], await suppress_edit(client, uris[1], cells[1], "h.add_(1)", "IPF103"), "utf-16")
    assert edited == cells[1].replace("    2\n", "    2  # inplacefix: ignore[IPF103]\n")


async def test_a_comment_in_a_cr_only_file_is_read_on_its_own_line(tmp_path):
    """The reader counts lines as ``ast`` does: in a CR-only file the comment on line 4 is on
    line 4 (the ``tokenize`` module alone reads the whole file as line 1)."""
    text = ("import torch\rx = torch.randn(3, requires_grad=True)\rh = torch.sigmoid(x)\r"
            "h += 1  # inplacefix: ignore[IPF101]\rh += 2\r")
    (tmp_path / "model.py").write_bytes(text.encode("utf-8"))
    result = runner.invoke(app, ["check", "--format", "json", str(tmp_path / "model.py")])
    rows = [f["location"]["row"] for f in json.loads(result.stdout)["findings"]]
    assert rows == [5]
