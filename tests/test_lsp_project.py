"""The language server with the project-wide index of its workspace (real server, real files).

``a.py``'s helper mutates the output of ``sigmoid``: alone, a proven hazard. ``b.py`` only calls
it under ``torch.no_grad()``: the CLI's ``check a.py b.py`` knows it is no hazard. The server's
diagnostics for ``a.py`` must equal the CLI's for the same files, and follow ``b.py`` when it is
saved with the ``no_grad`` taken out.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys
import textwrap

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

A = textwrap.dedent("""\
    import torch


    def squash(x):
        y = torch.sigmoid(x)
        y.mul_(2)
        return y
    """)
B_NO_GRAD = textwrap.dedent("""\
    import torch

    from a import squash


    def run(x):
        with torch.no_grad():
            return squash(x)
    """)
B_GRAD = textwrap.dedent("""\
    import torch

    from a import squash


    def run(x):
        return squash(x)
    """)
WAIT_S = 20


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "a.py").write_text(A)
    (tmp_path / "b.py").write_text(B_NO_GRAD)
    return tmp_path


def cli_findings(workspace: pathlib.Path) -> set:
    """(code, row, column) of the CLI's default report for a.py, checked with b.py."""
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--format", "json",
                          "a.py", "b.py"], capture_output=True, text=True, cwd=workspace)
    assert run.returncode in (0, 1), run.stderr
    return {(f["code"], f["location"]["row"], f["location"]["column"])
            for f in json.loads(run.stdout)["findings"] if f["filename"] == "a.py"}


def shown(diagnostics) -> set:
    return {(d.code, d.range.start.line + 1, d.range.start.character + 1) for d in diagnostics}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "codemod", "lsp"]))
async def client(lsp_client: LanguageClient):
    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params):  # an editor watches the files the server asks it to
        lsp_client.registrations = params.registrations

    yield
    await lsp_client.shutdown_session()


async def start(client: LanguageClient, workspace: pathlib.Path, **settings) -> str:
    """Initialize on the workspace (hazards only, no quiet time) and open a.py; its URI."""
    await client.initialize_session(lsp.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=workspace.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options={"inplacefix": {"candidates": "hidden", "debounceMs": 0, **settings}},
    ))
    uri = (workspace / "a.py").as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=A)))
    return uri


async def published_until(client: LanguageClient, uri: str, expected: set) -> set:
    """The diagnostics last published for ``uri`` once they are ``expected`` (or the wait ends)."""
    for _ in range(WAIT_S * 20):
        if uri in client.diagnostics and shown(client.diagnostics[uri]) == expected:
            break
        await asyncio.sleep(0.05)
    return shown(client.diagnostics.get(uri, []))


async def logged(client: LanguageClient, words: str) -> str:
    for _ in range(WAIT_S * 20):
        found = [m.message for m in client.log_messages if words in m.message]
        if found:
            return found[-1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"nothing logged with {words!r}")


def test_the_cli_knows_the_cross_file_fact(workspace):
    alone = subprocess.run([sys.executable, "-m", "codemod", "check", "--no-cache", "--format", "json", "a.py"],
                           capture_output=True, text=True, cwd=workspace)
    assert [f["code"] for f in json.loads(alone.stdout)["findings"]] == ["IPF103"]
    assert cli_findings(workspace) == set()  # b.py calls squash only under no_grad


@pytest.mark.asyncio
async def test_diagnostics_equal_the_clis_and_follow_a_saved_file(client: LanguageClient, workspace):
    uri = await start(client, workspace)
    expected = cli_findings(workspace)
    assert await published_until(client, uri, expected) == expected

    (workspace / "b.py").write_text(B_GRAD)  # the no_grad taken out, on disk
    client.text_document_did_save(lsp.DidSaveTextDocumentParams(
        text_document=lsp.TextDocumentIdentifier(uri=(workspace / "b.py").as_uri())))
    expected = cli_findings(workspace)
    assert {code for code, *_ in expected} == {"IPF103"}
    assert await published_until(client, uri, expected) == expected


@pytest.mark.asyncio
async def test_a_file_changed_on_disk_refreshes_the_index(client: LanguageClient, workspace):
    uri = await start(client, workspace)
    assert await published_until(client, uri, set()) == set()
    watchers = [w for r in client.registrations for w in r.register_options["watchers"]]
    assert [w["globPattern"] for w in watchers] == ["**/*.py", "**/.inplacefix.toml", "**/inplacefix.toml",
                                                    "**/pyproject.toml"]
    (workspace / "b.py").write_text(B_GRAD)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
        lsp.FileEvent(uri=(workspace / "b.py").as_uri(), type=lsp.FileChangeType.Changed)]))
    expected = cli_findings(workspace)
    assert await published_until(client, uri, expected) == expected


@pytest.mark.asyncio
async def test_the_setting_turns_it_off(client: LanguageClient, workspace):
    uri = await start(client, workspace, projectIndex=False)
    assert "off" in await logged(client, "project index")
    assert {code for code, *_ in await published_until(client, uri, {("IPF103", 6, 5)})} == {"IPF103"}


@pytest.mark.asyncio
async def test_a_workspace_over_the_cap_has_no_index(client: LanguageClient, workspace):
    uri = await start(client, workspace, projectIndexMaxFiles=1)
    assert "more than 1 files" in await logged(client, "project index")
    assert {code for code, *_ in await published_until(client, uri, {("IPF103", 6, 5)})} == {"IPF103"}


@pytest.mark.asyncio
async def test_an_unreadable_file_leaves_the_rest_indexed(client: LanguageClient, workspace):
    (workspace / "c.py").write_bytes(b"def broken(:\n\xff\xfe")  # neither parses nor decodes
    uri = await start(client, workspace)
    expected = cli_findings(workspace)
    assert await published_until(client, uri, expected) == expected


@pytest.mark.asyncio
async def test_fix_all_uses_the_index_too(client: LanguageClient, workspace):
    """``fix a.py b.py`` changes nothing (squash runs under no_grad only): nor does the editor's
    fix-all, made in its child process with the same index."""
    fixed = subprocess.run([sys.executable, "-m", "codemod", "fix", "--no-cache", "--diff", "a.py", "b.py"],
                           capture_output=True, text=True, cwd=workspace)
    assert fixed.returncode in (0, 1) and "y = y.mul(2)" not in fixed.stdout, fixed.stdout + fixed.stderr
    uri = await start(client, workspace)
    assert await published_until(client, uri, set()) == set()  # the index is ready
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll])))
    assert list(actions) == []
