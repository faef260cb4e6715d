"""The language server after an edit that moves every function (a line added near the top):
the diagnostics and quick fixes it sends are exactly those of the same text opened afresh."""

from __future__ import annotations

import sys
import textwrap

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

EDITED = "file:///tmp/inplacefix_lsp_incremental/edited.py"
FRESH = "file:///tmp/inplacefix_lsp_incremental/fresh.py"
TEXT = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, x):
            gate = torch.sigmoid(self.fc(x))
            gate *= 2.0
            out = x * gate
            out += x
            return out


    def helper(t):
        y = torch.tanh(t)
        y += 1
        return y
    """
)
MOVED = TEXT.replace("import torch.nn as nn\n", "import torch.nn as nn\n# a line near the top\n\n")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codemod", "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        initialization_options={"inplacefix": {"candidates": "hint", "debounceMs": 0}},
    ))
    yield
    await lsp_client.shutdown_session()


async def published(client: LanguageClient, uri: str, version: int) -> list:
    while True:
        params = await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if params.uri == uri and params.version == version:
            return params.diagnostics


async def quick_fixes(client: LanguageClient, uri: str, line: int) -> list:
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 20)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix])))
    return [(a.title, [e.range for e in a.edit.changes[uri]] if a.edit and a.edit.changes else None,
             [e.new_text for e in a.edit.changes[uri]] if a.edit and a.edit.changes else None) for a in actions or []]


async def test_a_line_added_near_the_top_gives_what_a_fresh_analysis_gives(client: LanguageClient):
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=EDITED, language_id="python", version=1, text=TEXT)))
    before = await published(client, EDITED, 1)
    lines = sorted({d.range.start.line for d in before})
    assert len(lines) >= 3 and any("at line" in d.message for d in before)
    for line in lines:  # quick fixes asked for before the edit: their edits must not leak into the next
        await quick_fixes(client, EDITED, line)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=EDITED, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=MOVED)]))
    after = await published(client, EDITED, 2)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=FRESH, language_id="python", version=1, text=MOVED)))
    fresh = await published(client, FRESH, 1)
    assert [(d.range, d.message, d.code, d.severity) for d in after] == \
        [(d.range, d.message, d.code, d.severity) for d in fresh]
    assert {d.range.start.line for d in after} == {line + 2 for line in lines}
    for line in lines:
        mine, theirs = await quick_fixes(client, EDITED, line + 2), await quick_fixes(client, FRESH, line + 2)
        assert mine == theirs and any(edits for _, edits, _ in mine)
