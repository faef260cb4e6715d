"""Diagnostics at once when the server is idle, and changes that arrive while an analysis runs
coalesced into one analysis of the newest text after it (``lsp_tasks.Coalescer``): no fixed
wait on a single edit, one analysis at a time per document, and nothing published for a
version the editor has already replaced."""

from __future__ import annotations

import asyncio
import sys
import time

import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter, register_lsp_features

from codemod.frontends.lsp_tasks import DEBOUNCE_MS, Coalescer
from tests.test_lsp_load import module

SERVER = [sys.executable, "-m", "codemod", "lsp"]


class Job:
    """A job that records the value it read when it started, and can be held running."""

    def __init__(self, state: dict) -> None:
        self.state = state
        self.read: list = []
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self) -> None:
        self.read.append(self.state["value"])
        await self.release.wait()


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0)


def test_no_quiet_time_by_default():
    from codemod.frontends.lsp import EditorSettings

    assert DEBOUNCE_MS == 0 and EditorSettings.from_dict(None).debounce_ms == 0


async def test_an_idle_document_is_analysed_without_waiting():
    state = {"value": 1}
    job, runs = Job(state), Coalescer()
    runs.schedule("doc", 0, job)
    await settle()
    assert job.read == [1]


async def test_changes_during_a_run_coalesce_into_one_run_of_the_newest():
    state = {"value": 1}
    job, runs = Job(state), Coalescer()
    job.release.clear()  # the first run is busy
    runs.schedule("doc", 0, job)
    await settle()
    assert job.read == [1] and runs.running("doc")
    for value in range(2, 12):  # ten changes while it runs
        state["value"] = value
        runs.schedule("doc", 0, job)
    await settle()
    assert job.read == [1], "a second run started while the first one runs"
    assert runs.superseded("doc"), "the running job is told a newer run waits"
    job.release.set()
    await settle()
    assert job.read == [1, 11]  # one more run, of the newest value
    assert not runs.running("doc") and not runs.superseded("doc")


async def test_documents_do_not_wait_for_each_other():
    state = {"value": 1}
    slow, fast, runs = Job(state), Job(state), Coalescer()
    slow.release.clear()
    runs.schedule("a", 0, slow)
    runs.schedule("b", 0, fast)
    await settle()
    assert slow.read == [1] and fast.read == [1]
    slow.release.set()


async def test_a_quiet_time_still_restarts_on_each_change():
    state = {"value": 1}
    job, runs = Job(state), Coalescer()
    for value in range(1, 6):
        state["value"] = value
        runs.schedule("doc", 0.05, job)
        await asyncio.sleep(0.01)
    assert job.read == []
    await asyncio.sleep(0.15)
    assert job.read == [5]


async def test_cancel_drops_the_waiting_run():
    state = {"value": 1}
    job, runs = Job(state), Coalescer()
    job.release.clear()
    runs.schedule("doc", 0, job)
    await settle()
    runs.schedule("doc", 0, job)
    runs.cancel("doc")
    job.release.set()
    await settle()
    assert job.read == [1] and not runs.running("doc")


def recording_client() -> LanguageClient:
    """pytest-lsp's client, keeping every publishDiagnostics: (uri, version, diagnostics)."""
    client = LanguageClient(converter_factory=default_converter)

    def publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams):
        client.published.append((params.uri, params.version, params.diagnostics))

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    client.published = []
    return client


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, client_factory=recording_client))
async def client(lsp_client: LanguageClient):
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))  # defaults
    yield
    await lsp_client.shutdown_session()


def change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)]))


async def diagnostics_of(client: LanguageClient, uri: str, version: int, timeout: float = 60):
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        for u, v, diagnostics in client.published:
            if u == uri and v == version:
                return diagnostics
        await asyncio.sleep(0.005)
    raise AssertionError(f"no diagnostics for version {version} of {uri}: {[v for _, v, _ in client.published]}")


def key(diagnostics) -> list:
    return sorted((d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character,
                   d.code, d.message, d.severity) for d in diagnostics)


async def test_a_burst_ends_with_the_diagnostics_of_a_fresh_analysis(client: LanguageClient):
    uri, fresh = "file:///tmp/inplacefix_lsp_test/coalesce.py", "file:///tmp/inplacefix_lsp_test/fresh.py"
    text = module(60)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    await diagnostics_of(client, uri, 1)
    texts = {}
    for version in range(2, 42):  # a burst: lines added near the top and typing inside a function
        texts[version] = ("# note\n" * (version % 3) + text).replace("z += 1\n", f"z += {version}\n", version % 7)
        change(client, uri, version, texts[version])
    last = await diagnostics_of(client, uri, 41)
    await asyncio.sleep(0.5)  # anything still on its way
    versions = [v for u, v, _ in client.published if u == uri]
    assert versions == sorted(set(versions)) and versions[-1] == 41, versions  # in order, none after the last
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(  # the same text, analysed from nothing
        text_document=lsp.TextDocumentItem(uri=fresh, language_id="python", version=1, text=texts[41])))
    assert key(last) == key(await diagnostics_of(client, fresh, 1)) and len(last) == 120
    for u, v, diagnostics in client.published:  # each version published is what that text has
        if u == uri and v in texts:
            expected = texts[v].count("h += 1\n") + texts[v].count("z += ")
            assert len(diagnostics) == expected, (v, len(diagnostics), expected)


async def test_a_single_edit_is_not_held_back(client: LanguageClient):
    """No fixed quiet time by default: an edit of a small document can be answered in well
    under the 50 ms the server always waited before (the fastest of ten: a loaded machine
    delays some, a fixed wait delays every one)."""
    uri = "file:///tmp/inplacefix_lsp_test/single.py"
    text = module(3)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        text_document=lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    await diagnostics_of(client, uri, 1)
    times = []
    for version in range(2, 12):
        start = time.perf_counter()
        change(client, uri, version, text.replace("h += 1", f"h += {version}", 1))
        await diagnostics_of(client, uri, version)
        times.append(time.perf_counter() - start)
    assert min(times) < 0.045, times
