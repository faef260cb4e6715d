"""The view family's findings reach every front end like the others: JSON (with the edit),
SARIF (as a rule with its level), and the editor over the language server's protocol."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from typer.testing import CliRunner

from codemod.frontends.cli import app

POLICY = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn


    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(4, 4)

        def forward(self, h):
            mu, log_std = self.head(h).chunk(2, -1)
            log_std.clamp_(-20, 2)
            return mu, log_std.exp()
    """
)
URI = "file:///tmp/inplacefix_view_test/policy.py"


def check(tmp_path, monkeypatch, *args):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "policy.py").write_text(POLICY)
    result = CliRunner().invoke(app, ["check", "--no-cache", *args, "policy.py"])
    return result.exit_code, json.loads(result.stdout)


def test_json_carries_the_proven_error_and_its_edit(tmp_path, monkeypatch):
    code, doc = check(tmp_path, monkeypatch, "--format", "json")
    assert code == 1
    [finding] = doc["findings"]  # reported by default: PyTorch always raises here
    assert finding["code"] == "IPF106" and finding["rule"] == "view-write-hazard"
    assert finding["location"] == {"row": 12, "column": 9} and finding["status"] == "safe"
    assert finding["fix"]["applicability"] == "safe"
    assert [e["content"].strip() for e in finding["fix"]["edits"]] == ["log_std = log_std.clamp(-20, 2)"]


def test_sarif_lists_the_rule_and_the_result(tmp_path, monkeypatch):
    code, doc = check(tmp_path, monkeypatch, "--format", "sarif")
    run = doc["runs"][0]
    assert "IPF106" in {r["id"] for r in run["tool"]["driver"]["rules"]}
    [result] = run["results"]
    assert result["ruleId"] == "IPF106" and result["level"] == "warning"
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 12


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codemod", "lsp"]))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=client_capabilities("visual-studio-code")))
    yield
    await lsp_client.shutdown_session()


async def test_the_editor_warns_and_offers_the_fix(client: LanguageClient):
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=URI, language_id="python", version=1, text=POLICY)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    [diagnostic] = [d for d in client.diagnostics[URI] if d.code == "IPF106"]
    assert diagnostic.range.start.line == 11 and diagnostic.severity == lsp.DiagnosticSeverity.Warning
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=URI),
        range=lsp.Range(lsp.Position(11, 0), lsp.Position(11, 10)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix])))
    [fix] = [a for a in actions if a.title.startswith("IPF106")]
    assert fix.title == "IPF106: Rewrite as `log_std = log_std.clamp(-20, 2)`" and fix.is_preferred
    [edit] = fix.edit.changes[URI]
    assert edit.new_text.strip() == "log_std = log_std.clamp(-20, 2)"


def test_rule_ipf106_says_what_it_reports():
    """``inplacefix rule IPF106`` describes views PyTorch refuses, not saved tensors (the
    generic hazard sentence stays the other rules')."""
    view = CliRunner().invoke(app, ["rule", "IPF106"])
    assert view.exit_code == 0
    first = view.output.split("\n\n")[1]
    assert "proves PyTorch raises" in first and "autograd saved" not in first
    saved = CliRunner().invoke(app, ["rule", "IPF101"])
    assert "modifies a tensor autograd saved for backward" in saved.output.split("\n\n")[1]
