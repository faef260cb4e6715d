"""Language server latency: diagnostics after an edit, and code actions, on a 1,000-line module.

Drives ``inplacefix lsp`` over stdio with a real LSP client (pytest-lsp's, built on pygls), as
an editor does. Each round edits the document, waits for its diagnostics, then asks for the
quick fix of a finding in the edited part. Two kinds of edit: typing inside one function (the
functions and classes left alone keep their findings) and adding or removing a line near the
top (every function moves: they keep their findings too, moved). Reports p50 and p95 in
milliseconds after warm-up rounds, and cold figures: the document's first diagnostics on a fresh
server, and the first edit of each kind. ``--debounce-ms N`` sets the
server's quiet time before an analysis (``debounceMs``; none by default: a change is analysed
at once, changes during an analysis are coalesced).
Then bursts: 100 ``didChange`` sent at once (an editor replaying an undo, a formatter, a
macro); reports the time until the last version's diagnostics arrive and how many versions
were published. Then typing: bursts of 10 keystrokes 100 ms apart (typing) and 33 ms apart (a
key held down); reports, per keystroke, the time until diagnostics at least that new arrive,
per burst the time from its last keystroke to its diagnostics, and stale publications (none
may come after a newer version's; those the client had already replaced when they arrived are
counted: the server had not read the newer change yet).
With ``--workspace N`` the module is a file of a workspace folder with N other files that import
and call it (some under ``torch.no_grad()``): the server builds the project-wide index of the
workspace after ``initialized`` and analyses the module with it. Cold figures then add the time
until the index is ready (and the module's diagnostics made with it are published) and the first
edit of each kind after it. ``--cache`` keeps the index's cache folder of a previous run (warm).
``--in-process``: the analysis of each edit alone, in CPU time, without server or client.
Usage: ``python bench/lsp_latency.py [--rounds 30] [--debounce-ms N] [--workspace 20 [--cache]] [--in-process]``.
"""

from __future__ import annotations

import asyncio
import pathlib
import shutil
import statistics
import sys
import tempfile
import time

from lsprotocol import types as lsp
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, default_converter, register_lsp_features

BLOCK = '''

class Block{i}(nn.Module):
    """A residual block with a gate ({i})."""

    def __init__(self, dim=64):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.norm(x)
        h = self.fc1(h)
        h = self.act(h)
        gate = torch.sigmoid(self.fc2(h))
        gate *= 2.0
        out = h * gate
        out += x
        scores = out @ out.transpose(-2, -1)
        probs = torch.softmax(scores, dim=-1)
        probs.masked_fill_(probs < 0.01, 0.0)
        mixed = probs @ out
        mixed[:, 0] = 0.0
        return mixed


def helper{i}(t: torch.Tensor, n: int):
    total = 0
    for k in range(n):
        total += k
    y = t * 2
    y += 1
    return y, total
'''


def module_text(lines: int = 1000) -> str:
    text = "import torch\nimport torch.nn as nn\n"
    i = 0
    while text.count("\n") < lines:
        text += BLOCK.format(i=i)
        i += 1
    return text


CALLER = '''import torch

from bench_module import Block{a}, helper{b}


def make_{i}(dim=64):
    return Block{a}(dim)


def step_{i}(model, x):
    y, n = helper{b}(x, 3)
    if {i} % 2:
        with torch.no_grad():
            z, _ = helper{c}(x, n)
    return model(y)
'''


def write_workspace(folder: pathlib.Path, text: str, others: int) -> pathlib.Path:
    """The module and ``others`` files that import and call it; the module's path."""
    module = folder / "bench_module.py"
    module.write_text(text)
    for i in range(others):
        (folder / f"user_{i}.py").write_text(CALLER.format(i=i, a=i % 5, b=i % 7, c=(i + 3) % 7))
    return module


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def edits(text: str):
    """(name, edit of round r -> (new text, line of a finding with a fix in the edited part))."""
    lines = text.splitlines()
    last = max(i for i, t in enumerate(lines) if "out += x" in t)
    first = next(i for i, t in enumerate(lines) if "out += x" in t)
    cut = text.rindex("gate *= 2.0")

    def inside(r):  # typing inside one function: the rest of the module is unchanged
        return text[:cut] + f"gate *= 2.{r}" + text[cut + len("gate *= 2.0"):], last

    def shifting(r):  # a line added near the top, or taken away again: every function moves
        if r % 2:
            return text.replace("import torch.nn as nn\n", f"import torch.nn as nn  # edit {r}\n", 1), first
        return text.replace("import torch.nn as nn\n", f"import torch.nn as nn\n# edit {r}\n", 1), first + 1

    return [("an edit inside one function", inside), ("a line added or removed near the top", shifting)]


def recording_client() -> LanguageClient:
    """pytest-lsp's client, also keeping when each version's diagnostics arrived."""
    client = LanguageClient(converter_factory=default_converter)

    def publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams):
        client.published[params.version] = time.perf_counter()
        client.every.append((params.version, time.perf_counter()))

    def log(client: LanguageClient, params: lsp.LogMessageParams):
        client.logs.append((params.message, time.perf_counter()))

    def register(client: LanguageClient, params: lsp.RegistrationParams):
        return None  # an editor would watch the files

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish,
                                   lsp.WINDOW_LOG_MESSAGE: log, lsp.CLIENT_REGISTER_CAPABILITY: register})
    client.published, client.every, client.logs = {}, [], []
    return client


async def index_ready(client: LanguageClient, version: int) -> float:
    """When the module's diagnostics made with the index arrived (the republish after the
    server logged that the index is ready)."""
    while True:
        ready = [t for m, t in client.logs if "project index" in m]
        if ready:
            if "ready" not in next(m for m, _ in client.logs if "project index" in m):
                raise SystemExit(f"no index: {client.logs}")
            after = [t for v, t in client.every if v == version and t >= ready[0]]
            if after:
                return after[0]
        await asyncio.sleep(0.001)


async def published(client: LanguageClient, version: int) -> float:
    while version not in client.published:
        await asyncio.sleep(0.001)
    return client.published[version]


async def typing(client: LanguageClient, uri: str, edit, version: int, gap_ms: float):
    """Ten bursts of ten keystrokes, ``gap_ms`` apart (each a new version of the document), and
    a pause after each. Per keystroke, the time until diagnostics of its version or a newer one
    arrived (what the editor shows is at least that new); per burst, the time from its last
    keystroke to that version's diagnostics and how many versions were published. Stale
    publications: a version published after a newer one (never allowed), and one that arrived
    when the client had already sent a newer change (the server had not read it yet)."""
    shown_ms, settle_ms, counts = [], [], []
    out_of_order = superseded = 0
    for burst in range(10):
        first, sent = version + 1, {}
        start_publishes = len(client.every)
        for key in range(10):
            version += 1
            sent[version] = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=edit(1000 + burst * 10 + key)[0])]))
            await asyncio.sleep(gap_ms / 1000)
        await published(client, version)
        await asyncio.sleep(0.3)  # anything still on its way is counted
        arrivals = client.every[start_publishes:]
        for v, at in sent.items():
            shown_ms.append((min(t for w, t in arrivals if w >= v) - at) * 1e3)
        settle_ms.append((client.published[version] - sent[version]) * 1e3)
        counts.append(sum(first <= w for w, _ in arrivals))
        newest = 0
        for w, at in arrivals:
            out_of_order += w < newest
            newest = max(newest, w)
            superseded += any(v > w and t < at for v, t in sent.items())
    return shown_ms, settle_ms, counts, [out_of_order, superseded, version]


def in_process(rounds: int) -> None:
    """The analysis alone, in this process (no server, no wire): CPU milliseconds of
    ``editor_source`` per edit, each reusing the previous version's result, as the server does.
    CPU time, so other processes on the machine count less than in the figures above."""
    from codemod.config import Settings
    from codemod.engine.pipeline import editor_source, tune_gc

    tune_gc(one_shot=False)  # as the server does
    text = module_text()
    settings = Settings()
    previous = editor_source(text.encode(), "m.py", settings)
    print(f"{text.count(chr(10))}-line module, {rounds} rounds after 3 warm-up, in process (analysis only)")
    for label, edit in edits(text):
        times = []
        for r in range(rounds + 3):
            changed, _ = edit(r)
            start = time.process_time()
            previous = editor_source(changed.encode(), "m.py", settings, previous)
            times.append((time.process_time() - start) * 1e3)
        times = times[3:]
        print(f"{label}: CPU p50 {statistics.median(times):6.1f} ms   p95 {percentile(times, 0.95):6.1f} ms")


async def main(rounds: int, debounce_ms, workspace: int = 0, keep_cache: bool = False) -> None:
    client = recording_client()
    text = module_text()
    folder = None
    if workspace:
        folder = pathlib.Path(tempfile.gettempdir()) / "inplacefix_bench_workspace"
        if folder.exists():
            for p in folder.iterdir():
                if p.is_file():
                    p.unlink()
                elif not keep_cache:
                    shutil.rmtree(p)
        folder.mkdir(exist_ok=True)
        uri = write_workspace(folder, text, workspace).as_uri()
    else:
        uri = "file:///tmp/bench_module.py"
    await client.start_io(sys.executable, "-m", "codemod", "lsp")
    options = {"inplacefix": {"debounceMs": debounce_ms}} if debounce_ms is not None else None
    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), initialization_options=options,
        root_uri=folder.as_uri() if folder else None,
        workspace_folders=[lsp.WorkspaceFolder(uri=folder.as_uri(), name="bench")] if folder else None))
    start = time.perf_counter()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(
        lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    opened = (await published(client, 1) - start) * 1e3
    warmup, version, shown = 3, 1, text
    quiet = "server default" if debounce_ms is None else f"{debounce_ms} ms"
    print(f"{text.count(chr(10))}-line module, {rounds} rounds after {warmup} warm-up, debounce: {quiet}")
    print(f"cold: the document opened on a fresh server (imports, a whole-module analysis) {opened:7.1f} ms")
    if workspace:
        indexed = (await index_ready(client, 1) - start) * 1e3
        cache = "kept from the run before" if keep_cache else "empty"
        print(f"workspace: the module and {workspace} files calling it, index cache {cache}")
        print(f"cold: the project index ready and the module's diagnostics with it published {indexed:7.1f} ms "
              f"after the open ({next(m for m, _ in client.logs if 'project index' in m)})")
    for label, edit in edits(text):
        diag_ms, action_ms, cold = [], [], None
        for r in range(rounds + warmup):
            changed, line = edit(r)
            version += 1
            start = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=changed)]))
            diagnosed = await published(client, version)
            actions = await client.text_document_code_action_async(lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri),
                range=lsp.Range(lsp.Position(line, 0), lsp.Position(line, 10)),
                context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.QuickFix])))
            done = time.perf_counter()
            assert any(a.edit and not a.title.startswith("Suppress") for a in actions), actions  # a rewrite is offered
            if cold is None and changed != shown:  # (round 0 of the first kind is the opened text)
                cold = (diagnosed - start) * 1e3
            shown = changed
            if r >= warmup:
                diag_ms.append((diagnosed - start) * 1e3)
                action_ms.append((done - diagnosed) * 1e3)
        print(f"{label} (cold: the first one {cold:.1f} ms)")
        for name, values in (("  diagnostics", diag_ms), ("  quick fix (code actions)", action_ms),
                             ("  both", [a + b for a, b in zip(diag_ms, action_ms)])):
            print(f"{name:28} p50 {statistics.median(values):7.1f} ms   p95 {percentile(values, 0.95):7.1f} ms")
    _, inside = edits(text)[0]
    settle_ms, counts = [], []
    for burst in range(5):
        first = version + 1
        start = time.perf_counter()
        for r in range(100):
            version += 1
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=inside(burst * 100 + r)[0])]))
        settle_ms.append((await published(client, version) - start) * 1e3)
        await asyncio.sleep(0.5)  # anything still on its way is counted
        counts.append(sum(first <= v <= version for v in client.published))
    print("a burst of 100 changes")
    print(f"  settled (last version's diagnostics) p50 {statistics.median(settle_ms):7.1f} ms   "
          f"max {max(settle_ms):7.1f} ms; versions published per burst: {sorted(counts)}")
    for gap_ms, name in ((100, "typing, a keystroke every 100 ms"), (33, "a key held down, one every 33 ms")):
        shown_ms, settle_ms, counts, (out_of_order, superseded, version) = await typing(
            client, uri, inside, version, gap_ms)
        print(f"{name} (10 bursts of 10)")
        print(f"  {'each keystroke to diagnostics as new':40} p50 {statistics.median(shown_ms):7.1f} ms   "
              f"p95 {percentile(shown_ms, 0.95):7.1f} ms")
        print(f"  {'the last keystroke to its diagnostics':40} p50 {statistics.median(settle_ms):7.1f} ms   "
              f"p95 {percentile(settle_ms, 0.95):7.1f} ms")
        print(f"  versions published per burst: {sorted(counts)}; published after a newer one: {out_of_order}; "
              f"superseded by a change already sent when they arrived: {superseded}")
    await client.shutdown_session()


if __name__ == "__main__":
    n = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 30
    d = int(sys.argv[sys.argv.index("--debounce-ms") + 1]) if "--debounce-ms" in sys.argv else None
    w = int(sys.argv[sys.argv.index("--workspace") + 1]) if "--workspace" in sys.argv else 0
    if "--in-process" in sys.argv:
        in_process(n)
    else:
        asyncio.run(main(n, d, w, "--cache" in sys.argv))
