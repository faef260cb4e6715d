"""The language server, driven end to end over stdio by a real LSP client (pytest-lsp)."""

from __future__ import annotations

import sys
import textwrap

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

URI = "file:///tmp/inplacefix_lsp_test/model.py"
TEXT = textwrap.dedent(
    """\
    import torch


    def f(x: torch.Tensor):
        h = torch.sigmoid(x)
        h += 1
        z = x * 2
        z += 1
        y = torch.tanh(x)
        y += h
        return h + z + y


    def f_half(x):  # the file computes in half too: `y = y + h` may promote (dtype-promotion)
        return f(x.half())
    """
)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codemod", "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"inplacefix": {"candidates": "hint"}},
    ))
    yield
    await lsp_client.shutdown_session()


def apply(text: str, edits) -> str:
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[e.range.start.line] + e.range.start.character
        end = offsets[min(e.range.end.line, len(lines))] + (e.range.end.character if e.range.end.line < len(lines) else 0)
        text = text[:start] + e.new_text + text[end:]
    return text


async def actions_for(client: LanguageClient, first: int, last: int, kind: str):
    """The code actions for lines ``first``..``last`` (0-based) of the kind asked for."""
    return await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=URI),
        range=lsp.Range(lsp.Position(first, 0), lsp.Position(last, 10)),
        context=lsp.CodeActionContext(diagnostics=[], only=[kind]),
    ))


async def open_document(client: LanguageClient, text: str = TEXT):
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=URI, language_id="python", version=1, text=text)
    ))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return client.diagnostics[URI]


async def test_diagnostics_warn_on_hazards_and_hint_the_rest(client: LanguageClient):
    diagnostics = await open_document(client)
    by_line = {d.range.start.line + 1: d for d in diagnostics}
    assert by_line[6].code == "IPF101" and by_line[6].severity == lsp.DiagnosticSeverity.Warning
    assert "output of `torch.sigmoid`" in by_line[6].message
    assert by_line[8].code == "IPF001" and by_line[8].severity == lsp.DiagnosticSeverity.Hint
    assert by_line[10].code == "IPF101" and "unsafe" in by_line[10].message


async def test_quick_fix_edits_the_text(client: LanguageClient):
    await open_document(client)
    actions = await actions_for(client, 5, 5, lsp.CodeActionKind.QuickFix)
    titles = [a.title for a in actions]
    assert titles == ["IPF101: Rewrite as `h = h + 1`", "Suppress IPF101 on this line"]
    fixed = apply(TEXT, actions[0].edit.changes[URI])
    assert "    h = h + 1\n" in fixed and "    h += 1\n" not in fixed
    suppressed = apply(TEXT, actions[1].edit.changes[URI])
    assert "    h += 1  # inplacefix: ignore[IPF101]\n" in suppressed


async def test_unsafe_fixes_are_labelled(client: LanguageClient):
    await open_document(client)
    actions = await actions_for(client, 9, 9, lsp.CodeActionKind.QuickFix)
    assert actions[0].title.endswith("(unsafe: may change behaviour)") and not actions[0].is_preferred


async def test_fix_all_applies_safe_fixes_only(client: LanguageClient):
    await open_document(client)
    actions = await actions_for(client, 0, 0, lsp.CodeActionKind.SourceFixAll)
    assert [a.kind for a in actions] == [lsp.CodeActionKind.SourceFixAll]
    fixed = apply(TEXT, actions[0].edit.changes[URI])
    assert "h = h + 1" in fixed and "z = z + 1" in fixed
    assert "    y += h\n" in fixed, "the unsafe fix is not part of fix-all"


async def test_change_republishes_and_settings_hide_candidates(client: LanguageClient):
    await open_document(client)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=URI, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=TEXT.replace("    h += 1\n", "    h = h + 1\n"))],
    ))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert 6 not in {d.range.start.line + 1 for d in client.diagnostics[URI]}
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"inplacefix": {"candidates": "hidden"}}
    ))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert {d.code for d in client.diagnostics[URI]} == {"IPF101"}


async def test_unparsable_document_gets_an_error_diagnostic(client: LanguageClient):
    diagnostics = await open_document(client, "import torch\ndef f(:\n")
    assert [d.severity for d in diagnostics] == [lsp.DiagnosticSeverity.Error]


NOTEBOOK = "file:///tmp/inplacefix_lsp_test/train.ipynb"
CELLS = [
    "import torch\nw = torch.randn(3, requires_grad=True)\n%matplotlib inline",
    "h = torch.exp(w)\nh += 1",
]


async def test_notebook_cells_get_diagnostics_and_fixes(client: LanguageClient):
    cell_uris = [f"vscode-notebook-cell:/tmp/inplacefix_lsp_test/train.ipynb#C{i}" for i in range(2)]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
        notebook_document=lsp.NotebookDocument(
            uri=NOTEBOOK, notebook_type="jupyter-notebook", version=1,
            cells=[lsp.NotebookCell(kind=lsp.NotebookCellKind.Code, document=u) for u in cell_uris],
        ),
        cell_text_documents=[
            lsp.TextDocumentItem(uri=u, language_id="python", version=1, text=t) for u, t in zip(cell_uris, CELLS)
        ],
    ))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    for _ in range(5):
        if cell_uris[1] in client.diagnostics:
            break
        await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    diagnostics = client.diagnostics[cell_uris[1]]
    assert [(d.code, d.range.start.line) for d in diagnostics] == [("IPF101", 1)]
    assert "output of `torch.exp` at line 1" in diagnostics[0].message
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=cell_uris[1]),
        range=lsp.Range(lsp.Position(1, 0), lsp.Position(1, 6)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix]),
    ))
    assert apply(CELLS[1], actions[0].edit.changes[cell_uris[1]]) == "h = torch.exp(w)\nh = h + 1"


async def test_a_notebook_cell_that_does_not_parse_is_marked_where_python_stops(client: LanguageClient):
    cell_uris = [f"vscode-notebook-cell:/tmp/inplacefix_lsp_test/broken.ipynb#C{i}" for i in range(2)]
    texts = ["import torch\nh = torch.exp(torch.ones(2))", "x = 1\ny = (2,\nh += 1"]
    client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
        notebook_document=lsp.NotebookDocument(
            uri="file:///tmp/inplacefix_lsp_test/broken.ipynb", notebook_type="jupyter-notebook", version=1,
            cells=[lsp.NotebookCell(kind=lsp.NotebookCellKind.Code, document=u) for u in cell_uris],
        ),
        cell_text_documents=[
            lsp.TextDocumentItem(uri=u, language_id="python", version=1, text=t) for u, t in zip(cell_uris, texts)
        ],
    ))
    for _ in range(6):
        await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if client.diagnostics.get(cell_uris[1]):
            break
    errors = client.diagnostics[cell_uris[1]]
    assert len(errors) == 1 and "cell 2 cannot be parsed" in errors[0].message
    assert errors[0].range.start.line == 1  # the `(` Python never saw closed, not the cell's first line


def test_editor_settings_are_checked_like_pyproject_settings():
    from codemod.frontends.lsp import EditorSettings

    good = EditorSettings.from_dict({"inplacefix": {"select": ["ipf1"], "unsafeFixes": False}})
    assert good.select == ("IPF1",) and good.unsafe_fixes is False and good.problems == ()
    bad = EditorSettings.from_dict({"inplacefix": {"select": ["FOO"], "ignore": "IPF104", "unsafeFixes": "false",
                                                   "candidates": "all", "debounceMs": -1}})
    assert bad.select is None and bad.ignore is None  # not "every code but F, O": ignored whole
    assert bad.unsafe_fixes is True  # the default, not bool("false")
    assert len(bad.problems) == 5 and any("unknown rule selector `FOO`" in p for p in bad.problems)
