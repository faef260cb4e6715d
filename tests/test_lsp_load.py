"""The language server under editor load, over stdio with a real client: bursts of changes are
analysed once, a large fix-all runs off the event loop and can be cancelled, and ``exit`` ends
the process with the code the LSP specification gives."""

from __future__ import annotations

import asyncio
import json
import pathlib
import subprocess
import sys
import textwrap
import time

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter, register_lsp_features

SERVER = [sys.executable, "-m", "codemod", "lsp"]
DEBOUNCE_MS = 150

BLOCK = textwrap.dedent(
    """

    def step{i}(x: torch.Tensor, w: torch.Tensor):
        h = torch.sigmoid(x @ w)
        h += 1
        z = x * 2
        z += 1
        return h + z
    """
)


def module(functions: int) -> str:
    return "import torch\n" + "".join(BLOCK.format(i=i) for i in range(functions))


def recording_client() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics: (time, uri, version)."""
    client = LanguageClient(converter_factory=default_converter)

    def publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams):
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append((time.perf_counter(), params.uri, params.version))

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    client.published = []
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=recording_client))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(),
        initialization_options={"inplacefix": {"debounceMs": DEBOUNCE_MS}},
    ))
    yield
    await lsp_client.shutdown_session()


def open_document(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))


async def published(client: LanguageClient, uri: str, version: int, timeout: float = 60) -> float:
    """When the diagnostics of ``version`` of ``uri`` arrived."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        for at, u, v in client.published:
            if u == uri and v == version:
                return at
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics for version {version} of {uri}: {client.published}")


async def test_a_burst_of_changes_is_analysed_once(client: LanguageClient):
    uri = "file:///tmp/inplacefix_lsp_test/burst.py"
    text = module(40)
    open_document(client, uri, text)
    await published(client, uri, 1)
    for version in range(2, 102):  # typing "h += 1" into "h += 100...": 100 versions
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(
                text=text.replace("h += 1\n", f"h += {version}\n", 1))]))
    await published(client, uri, 101)
    await asyncio.sleep(3 * DEBOUNCE_MS / 1000)  # nothing else is on its way
    versions = [v for _, u, v in client.published if u == uri and v != 1]
    assert versions[-1] == 101 and len(versions) <= 3, versions  # was 100 publications
    assert len(client.diagnostics[uri]) == 80


@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(), reason="reads /proc")
async def test_quick_fix_is_answered_while_a_large_fix_all_runs(client: LanguageClient):
    small, big = "file:///tmp/inplacefix_lsp_test/small.py", "file:///tmp/inplacefix_lsp_test/big.py"
    open_document(client, small, module(1))
    await published(client, small, 1)
    open_document(client, big, module(600))  # 4,200 lines: its fix-all takes seconds
    fix_all = asyncio.ensure_future(client.protocol.send_request_async(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=big),
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll]),
    ), msg_id="big-fix-all"))
    await asyncio.sleep(0.3)
    start = time.perf_counter()
    actions = await asyncio.wait_for(client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=small),
        range=lsp.Range(lsp.Position(5, 0), lsp.Position(5, 0)),  # h += 1
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix]),
    )), timeout=30)
    answered = time.perf_counter() - start
    assert actions[0].title == "IPF101: Rewrite as `h = h + 1`"
    assert not fix_all.done(), f"the fix-all finished first; the quick fix took {answered:.2f} s"
    workers = children(client._server.pid)
    assert workers, "the fix-all runs in a child process"
    client.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id="big-fix-all"))
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(fix_all, timeout=5)
    for _ in range(100):  # cancelled, the fix-all stops: its process is killed
        if not workers & children(client._server.pid):
            break
        await asyncio.sleep(0.05)
    assert not workers & children(client._server.pid)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(  # a new process
        text_document=lsp.TextDocumentIdentifier(uri=small),
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll]),
    ))
    assert actions[0].edit.changes[small][0].new_text == module(1).replace("h += 1", "h = h + 1").replace(
        "z += 1", "z = z + 1")


def children(pid: int) -> set:
    """The live child processes of ``pid`` (Linux /proc; zombies count as gone)."""
    found = set()
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


async def test_fix_all_of_a_large_file_completes_off_the_loop(client: LanguageClient):
    uri = "file:///tmp/inplacefix_lsp_test/medium.py"
    text = module(60)
    open_document(client, uri, text)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll]),
    ))
    [edit] = actions[0].edit.changes[uri]
    assert edit.range.end == lsp.Position(text.count("\n"), 0)
    assert edit.new_text == text.replace("h += 1", "h = h + 1").replace("z += 1", "z = z + 1")


# --- exit codes, with a real process and raw JSON-RPC --------------------------------------------

def message(**fields) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **fields}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def run_session(*messages: bytes, timeout: float = 60) -> subprocess.CompletedProcess:
    """Start the server, send ``messages`` and keep stdin open until it exits by itself."""
    process = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdin.write(b"".join(messages))
    process.stdin.flush()
    try:
        process.wait(timeout=timeout)
    finally:
        process.kill()
        process.stdin.close()
    return subprocess.CompletedProcess(SERVER, process.returncode, process.stdout.read(), process.stderr.read())


INITIALIZE = (message(id=1, method="initialize", params={"capabilities": {}}),
              message(method="initialized", params={}))


def test_exit_without_shutdown_exits_1():
    assert run_session(*INITIALIZE, message(method="exit")).returncode == 1


def test_exit_after_shutdown_exits_0():
    assert run_session(*INITIALIZE, message(id=2, method="shutdown"), message(method="exit")).returncode == 0


def test_exit_does_not_wait_for_a_running_fix_all():
    uri = "file:///tmp/inplacefix_lsp_test/exit.py"
    start = time.perf_counter()
    done = run_session(
        *INITIALIZE,
        message(method="textDocument/didOpen", params={"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": module(1500)}}),  # 10,500 lines
        message(id=2, method="textDocument/codeAction", params={
            "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
                                                    "end": {"line": 0, "character": 0}},
            "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        message(id=3, method="shutdown"), message(method="exit"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert time.perf_counter() - start < 10  # the fix-all alone takes over 15 s


async def test_fix_all_for_a_text_changed_meanwhile_is_dropped(client: LanguageClient):
    """A fix-all replaces the whole document: made for an older version it would undo the
    edits typed while it ran."""
    uri = "file:///tmp/inplacefix_lsp_test/typing.py"
    text = module(150)
    open_document(client, uri, text)
    fix_all = asyncio.ensure_future(client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
        context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.SourceFixAll]),
    )))
    await asyncio.sleep(0)  # sent before the change
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text + "# typed meanwhile\n")]))
    assert not await asyncio.wait_for(fix_all, timeout=60)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def resolving_client(lsp_client: LanguageClient):
    """A client that resolves code actions' edits (VS Code does)."""
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(code_action=lsp.CodeActionClientCapabilities(
            resolve_support=lsp.ClientCodeActionResolveOptions(properties=["edit"]))))))
    yield
    await lsp_client.shutdown_session()


async def test_the_light_bulb_offers_fix_all_and_resolves_it_when_picked(resolving_client: LanguageClient):
    """A request that does not name ``source.fixAll`` (sent on every cursor move) does not pay
    for the fix-all: its edit is made on ``codeAction/resolve``."""
    client, uri, text = resolving_client, "file:///tmp/inplacefix_lsp_test/bulb.py", module(60)
    open_document(client, uri, text)
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=lsp.Range(lsp.Position(5, 0), lsp.Position(5, 0)),
        context=lsp.CodeActionContext(diagnostics=[]),
    ))
    [fix_all] = [a for a in actions if a.kind == lsp.CodeActionKind.SourceFixAll]
    assert fix_all.edit is None and actions[0].title == "IPF101: Rewrite as `h = h + 1`"
    resolved = await client.code_action_resolve_async(fix_all)
    [edit] = resolved.edit.changes[uri]
    assert edit.new_text == text.replace("h += 1", "h = h + 1").replace("z += 1", "z = z + 1")
    assert (edit.range.start, edit.range.end) == (lsp.Position(0, 0), lsp.Position(text.count("\n"), 0))


def test_debounce_setting_is_validated():
    from codemod.frontends.lsp import EditorSettings

    assert EditorSettings.from_dict({"inplacefix": {"debounceMs": 0}}).debounce_ms == 0
    assert EditorSettings.from_dict({"inplacefix": {"debounceMs": 120}}).debounce_ms == 120
    for bad in ("100", -1, True, None, 10**6):  # a wrong value keeps the default, never a crash
        assert EditorSettings.from_dict({"inplacefix": {"debounceMs": bad}}).debounce_ms == 0
    assert EditorSettings.from_dict(None).debounce_ms == 0
