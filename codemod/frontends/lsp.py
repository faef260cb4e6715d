"""The language server: ``inplacefix lsp`` over stdio (pygls).

Diagnostics on open, change and save: hazards (IPF1xx) as warnings, possible hazards (IPF2xx)
and other in-place candidates as hints (or hidden, by setting, unless `select` names them). Code actions per diagnostic: the fix (unsafe ones say so) and
"suppress on this line"; ``source.fixAll`` applies the safe fixes only. It never runs user code.

Notebook documents (``notebookDocument/*``) are analysed as one program of their code cells,
with diagnostics and quick fixes per cell.

Settings, from the editor (``initializationOptions`` or ``workspace/didChangeConfiguration``
under ``inplacefix``) on top of ``[tool.inplacefix]`` in the nearest pyproject.toml:
``select``, ``ignore``, ``unsafeFixes`` (offer unsafe fixes as quick fixes; default true, they are
labelled), ``candidates`` (``"hint"`` or ``"hidden"``: how to show in-place ops that are no
hazard), ``assumeSameDtype``, ``debounceMs`` (a quiet time after a change before it is analysed;
default 0: a change is analysed at once, and changes that arrive while an analysis runs are
coalesced into one analysis of the newest text after it, ``lsp_tasks.Coalescer``),
``projectIndex`` (default true: files of the workspace are analysed with its project-wide index,
as ``check`` does, ``lsp_project``) and ``projectIndexMaxFiles`` (above it, no index; 5,000).

Positions go both ways through the encoding negotiated at ``initialize`` (``lsp_positions``).
Handlers on the event loop only take snapshots of the documents; analyses and quick fixes run
in worker threads, the fix-all in a child process (``lsp_tasks``, ``lsp_fixall``), and what was
made for a text the editor has since changed is dropped. A document of ``lsp_big.BIG_LINES``
lines or more is analysed in a process of its own, killed when a newer version makes its work
stale, so requests for the other documents never wait for it.

A ``[tool.inplacefix]`` table that is not valid is said in the editor (``window/showMessage``,
an error naming the file and key), and the last valid settings of that pyproject.toml (or the
defaults) hold meanwhile. JSON-RPC errors as the specification gives them: a request whose
params do not fit gets ``-32602``, any request after ``shutdown`` gets ``-32600``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import dataclasses
import hashlib
import logging
import os
import pathlib
import sys
import threading
from typing import Dict, List, NamedTuple, Optional
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from codemod import __version__
from codemod.config import CONFIG_NAMES, ConfigError, Settings, load_settings, selector_problem
from codemod.rules.registry import UNUSED_SUPPRESSION, code_url, table
from codemod.engine.pipeline import FileResult, add_edits, process_source
from codemod.findings import Finding, Status
from codemod.frontends.lsp_big import BigDocuments, Stopped, is_big
from codemod.frontends.lsp_fixall import FixProcess
from codemod.frontends.lsp_positions import Positions, use_lsp_lines
from codemod.frontends.lsp_project import MAX_FILES, WorkspaceIndex
from codemod.frontends.lsp_tasks import DEBOUNCE_MS, Coalescer, Workers

SOURCE = "inplacefix"
FIX_ALL_TITLE = "inplacefix: fix all safe in-place fixes"
SWITCH_INTERVAL_S = 0.001  # the server's GIL switch interval (``main``)


@dataclasses.dataclass
class EditorSettings:
    select: Optional[tuple] = None
    ignore: Optional[tuple] = None
    unsafe_fixes: bool = True
    candidates: str = "hint"  # or "hidden"
    assume_same_dtype: Optional[bool] = None
    debounce_ms: float = DEBOUNCE_MS  # quiet time after a change before it is analysed (none)
    project_index: bool = True  # analyse workspace files with the project-wide index
    project_index_max_files: int = MAX_FILES  # a larger workspace gets no index

    problems: tuple = ()  # settings that were not valid (ignored), in words for the editor

    @classmethod
    def from_dict(cls, raw) -> "EditorSettings":
        """The editor's settings, each checked as pyproject.toml's are: a value that is not
        valid is ignored (the default holds) and named in ``problems``."""
        raw = (raw or {}).get("inplacefix", raw or {}) if isinstance(raw, dict) else {}
        problems = []

        def selectors(key):
            value = raw.get(key)
            if value is None or value == []:
                return None
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            why = None if ok else f"must be a list of rule codes, not {value!r}"
            for v in value if ok else ():
                why = why or selector_problem(v.strip().upper(), table().keys())
            if why:
                problems.append(f"inplacefix.{key}: {why}")
                return None
            return tuple(v.strip().upper() for v in value)

        def boolean(key, default):
            value = raw.get(key, default)
            if value is None or isinstance(value, bool):
                return value
            problems.append(f"inplacefix.{key}: must be true or false, not {value!r}")
            return default

        candidates = raw.get("candidates", "hint")
        if candidates not in ("hint", "hidden"):
            problems.append(f"inplacefix.candidates: must be \"hint\" or \"hidden\", not {candidates!r}")
            candidates = "hint"
        debounce = raw.get("debounceMs", DEBOUNCE_MS)
        if not (isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and 0 <= debounce <= 10_000):
            problems.append(f"inplacefix.debounceMs: must be a number of milliseconds (0-10000), not {debounce!r}")
            debounce = DEBOUNCE_MS
        max_files = raw.get("projectIndexMaxFiles", MAX_FILES)
        if not (isinstance(max_files, int) and not isinstance(max_files, bool) and max_files >= 0):
            problems.append(f"inplacefix.projectIndexMaxFiles: must be a number of files, not {max_files!r}")
            max_files = MAX_FILES
        return cls(
            select=selectors("select"),
            ignore=selectors("ignore"),
            unsafe_fixes=boolean("unsafeFixes", True),
            candidates=candidates,
            assume_same_dtype=boolean("assumeSameDtype", None),
            debounce_ms=debounce,
            project_index=boolean("projectIndex", True) is not False,
            project_index_max_files=max_files,
            problems=tuple(problems),
        )


class FixAllJob(NamedTuple):
    key: tuple  # the text's digest, the editor settings and the index (its generation) it was made for
    future: concurrent.futures.Future  # of the CodeAction (or None: nothing to fix)
    token: object  # names the job to FixProcess.stop


class Snapshot(NamedTuple):
    """A document's text as it was when a job was started: the job runs in a worker thread
    while the event loop applies later changes to the document."""

    uri: str
    text: str
    version: Optional[int]
    path: str


_ANSWERED = object()  # a message already answered with an error: nothing more to do


class Protocol(LanguageServerProtocol):
    """pygls's protocol, with the error responses JSON-RPC and LSP require where pygls answers
    nothing: a request whose params do not fit its method gets ``-32602`` (InvalidParams), and
    any request after ``shutdown`` gets ``-32600`` (InvalidRequest). Notifications are never
    answered (pygls logs a bad one)."""

    def structure_message(self, data):
        if not (isinstance(data, dict) and "jsonrpc" in data and "method" in data and "id" in data):
            return super().structure_message(data)  # a notification, a response, or a nested object
        if self._shutdown and data["method"] != lsp.EXIT:
            self._answer_error(data["id"], JsonRpcInvalidRequest(
                f"the server is shut down: {data['method']} is not handled after shutdown"))
            return _ANSWERED
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            cause = exc.__cause__
            detail = _params_problem(cause) if cause is not None else ""
            exc.message = f"{exc.message} for {data['method']}{': ' + detail if detail else ''}"
            self._answer_error(data["id"], exc)
            return _ANSWERED

    def _answer_error(self, msg_id, exc: JsonRpcException) -> None:
        if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
            msg_id = None  # JSON-RPC: an id that cannot be read is answered with null
        self._send_response(msg_id, None, exc.to_response_error())

    def handle_message(self, message) -> None:
        if message is _ANSWERED:
            return
        super().handle_message(message)


def _params_problem(exc: BaseException) -> str:
    """What cattrs found wrong, in one line (the first leaf of its exception group)."""
    from cattrs.errors import ClassValidationError

    try:
        from cattrs import transform_error

        if isinstance(exc, ClassValidationError):
            return "; ".join(e.replace("@ $.params", "@ params") for e in transform_error(exc, path="$"))[:500]
    except Exception:  # noqa: BLE001 - only a nicer message
        pass
    return f"{type(exc).__name__}: {exc}"[:500]


class InplacefixServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "inplacefix", __version__,
            protocol_cls=Protocol,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(notebook_selector=[
                lsp.NotebookDocumentFilterWithCells(
                    cells=[lsp.NotebookCellLanguage(language="python")], notebook="jupyter-notebook"
                ),
            ]),
        )
        self.editor = EditorSettings()
        self.pulls_diagnostics = False  # the client asks with textDocument/diagnostic
        self._cache: dict = {}  # uri -> (content hash, FileResult)
        # Held by every worker-thread job that analyses or uses cached results. CPython 3.11's
        # ast.parse is not thread-safe (a garbage collection running Python finalizers during
        # it makes another thread's parse fail: "AST constructor recursion depth mismatch"),
        # and cached findings get their edits in place. The event loop never takes it.
        self.analysis_lock = threading.RLock()
        self._fix_all: Dict[str, FixAllJob] = {}  # uri -> its latest fix-all
        self.fixer = FixProcess()
        self.analyses = Coalescer()  # per document: one analysis at a time, the newest text next
        self.workers = Workers()
        self.fix_workers = Workers(threads=1)  # wait for the fix process (one job at a time)
        self.shut_down = False  # `shutdown` was received: `exit` then exits 0, else 1
        self.project = WorkspaceIndex(self.analysis_lock)  # built and refreshed off the event loop
        self.index_workers = Workers(threads=1)
        self.indexing: Optional[asyncio.Task] = None  # the build under way
        self.index_again = False  # asked for while one was under way: build again after it
        self.loop: Optional[asyncio.AbstractEventLoop] = None  # the event loop (set at initialize)
        self._settings_lock = threading.Lock()
        self._good_settings: Dict[str, Settings] = {}  # pyproject.toml -> its last valid settings
        self._settings_errors: Dict[str, str] = {}  # pyproject.toml -> the error said for it
        self.big = BigDocuments()  # documents of BIG_LINES lines or more: analysed in a process each
        self._big_cache: dict = {}  # uri -> (key, FileResult without fix plans)
        self._big_lock = threading.Lock()

    def project_settings(self, path: str) -> Settings:
        """``[tool.inplacefix]`` of the nearest pyproject.toml, as ``check`` reads it. One that is
        not valid is said in the editor (``window/showMessage``, an error naming the file and
        key, as ``check`` names them, once until it changes), and the last valid settings read
        for the same pyproject.toml hold meanwhile, or the defaults if none was valid yet."""
        key = _pyproject_of(path)
        try:
            base = load_settings(None, pathlib.Path(path), table().keys())
        except ConfigError as exc:
            with self._settings_lock:
                kept = self._good_settings.get(key)
                new = self._settings_errors.get(key) != str(exc)
                self._settings_errors[key] = str(exc)
            if new:
                held = ("the last valid settings of this project are kept" if kept is not None
                        else "the default settings are used")
                self.tell(lsp.MessageType.Error, f"inplacefix: {exc} ({held} until it is fixed)")
            return kept if kept is not None else Settings()
        with self._settings_lock:
            self._good_settings[key] = base
            fixed = self._settings_errors.pop(key, None) is not None
        if fixed:
            self.tell(lsp.MessageType.Info, f"inplacefix: the settings of {key} are valid again")
        return base

    def tell(self, kind: lsp.MessageType, message: str) -> None:
        """``window/showMessage``, from any thread (sent from the event loop)."""
        params = lsp.ShowMessageParams(type=kind, message=message)
        loop = self.loop
        if loop is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self.window_show_message(params)
        else:
            loop.call_soon_threadsafe(self.window_show_message, params)

    def settings_for(self, path: str) -> Settings:
        base = self.project_settings(path)
        select = self.editor.select or base.select
        ignore = self.editor.ignore or base.ignore
        if self.editor.candidates != "hidden":
            select = ("ALL",)  # candidates are shown as hints; `select` still filters hazards
            chosen = dataclasses.replace(base, select=self.editor.select or base.select, ignore=ignore)
            if not chosen.selects(UNUSED_SUPPRESSION):  # no candidate: only where asked for
                ignore = ignore + (UNUSED_SUPPRESSION,)
        settings = dataclasses.replace(
            base,
            select=select,
            ignore=ignore,
            assume_same_dtype=self.editor.assume_same_dtype
            if self.editor.assume_same_dtype is not None else base.assume_same_dtype,
        )
        try:
            return settings.for_file(path)  # per-file ignores, as `check` applies them
        except ConfigError:
            return settings

    # Called on the event loop: what a worker thread will need, taken now.

    def snapshot(self, uri: str) -> Snapshot:
        document = self.workspace.get_text_document(uri)
        return Snapshot(uri, document.source, document.version, document.path or uri)

    def is_open(self, uri: str) -> bool:
        return unquote(uri) in self.workspace.text_documents  # pygls's key

    def is_current(self, snapshot: Snapshot) -> bool:
        """Whether the document is still open at the version ``snapshot`` was taken of."""
        if not self.is_open(snapshot.uri):
            return False
        document = self.workspace.get_text_document(snapshot.uri)
        return document.version == snapshot.version and document.source == snapshot.text

    def notebook_of(self, cell_uri: str):
        """The notebook document a cell belongs to, if any."""
        return self.workspace.get_notebook_document(cell_uri=cell_uri)

    def cells_of(self, notebook) -> List[Snapshot]:
        """Snapshots of a notebook's code cells, in order."""
        return [self.snapshot(c.document) for c in notebook.cells if c.kind == lsp.NotebookCellKind.Code]

    def positions(self, snapshot: Snapshot) -> Positions:
        return Positions(snapshot.text, self.workspace.position_codec)

    # Called in worker threads: they read only their snapshots.

    def analyse_notebook(self, path: str, cells: List[Snapshot], edits: bool = False) -> dict:
        """Cell URI -> findings (cell coordinates), for a notebook's code cells as one program."""
        from codemod.engine.notebook import Cell, analyse_cells

        result = FileResult(path)
        with self.analysis_lock:
            analyse_cells([Cell(i, c.text, False) for i, c in enumerate(cells)], path,
                          self.settings_for(path), result, edits=edits)
        by_cell = {c.uri: [] for c in cells}
        for finding in result.findings:
            by_cell[cells[finding.cell - 1].uri].append(finding)
        for error in result.skipped_parts:
            number = int(error.message.split()[1])
            by_cell[cells[number - 1].uri].append(error)
        return by_cell

    def analyse(self, snapshot: Snapshot) -> FileResult:
        """The findings (with edits) for the snapshot's text; cached by content. A big document
        is analysed in its own process (``lsp_big``): its findings come without fix plans, and
        :class:`Stopped` is raised when a newer version made the work stale."""
        if is_big(snapshot.text):
            return self._analyse_big(snapshot)
        uri, text, path = snapshot.uri, snapshot.text, snapshot.path
        state = self.project.state  # the index it is analysed with, and which one it was
        index, module = self.project.lookup(path, state) if self.editor.project_index else (None, "")
        digest = (hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest(), state.generation)
        with self.analysis_lock:
            cached = self._cache.get(uri)
            if cached and cached[0] == digest:
                return cached[1]
            # Edits are made later, only for the findings a code action asks about; functions and
            # classes the edit left alone keep their findings, moved with them (engine.incremental,
            # which also keys them on what the index tells of this module).
            result = process_source(text.encode("utf-8", "surrogatepass"), path, self.settings_for(path),
                                    incremental=True, previous=cached[1] if cached else None,
                                    project=index, module_name=module)
            self._cache[uri] = (digest, result)
            return result

    def _big_job(self, snapshot: Snapshot) -> tuple:
        """What a big document's process is asked (text, path, settings, pickled index, module)
        and the key of its answer (the text, the index, the settings)."""
        state = self.project.state
        index, module = self.project.lookup(snapshot.path, state) if self.editor.project_index else (None, "")
        settings = self.settings_for(snapshot.path)
        pickled = self.project.pickled(self.analysis_lock) if index is not None else None
        key = (hashlib.sha1(snapshot.text.encode("utf-8", "surrogatepass")).hexdigest(), state.generation,
               repr(settings), module)
        return key, (snapshot.text, snapshot.path, settings, pickled, module if pickled else "")

    def _analyse_big(self, snapshot: Snapshot) -> FileResult:
        key, args = self._big_job(snapshot)
        with self._big_lock:
            cached = self._big_cache.get(snapshot.uri)
        if cached is not None and cached[0] == key:
            return cached[1]
        findings, error = self.big.analyse(snapshot.uri, snapshot.version, key, *args)
        result = FileResult(snapshot.path, findings=findings, error=error)
        with self._big_lock:
            self._big_cache[snapshot.uri] = (key, result)
        return result

    def big_quick_fixes(self, snapshot: Snapshot, lines: range) -> List[Finding]:
        """The findings on ``lines`` of a big document, with their edits (made in its process)."""
        key, args = self._big_job(snapshot)
        findings, _ = self.big.quick_fixes(snapshot.uri, snapshot.version, key, *args, (lines.start, lines.stop))
        return findings

    def forget_results(self) -> None:
        """Every document's results (the settings changed); the processes stay."""
        self._cache.clear()
        with self._big_lock:
            self._big_cache.clear()

    def forget(self, uri: str) -> None:
        """The document was closed: its results and its process go."""
        self._cache.pop(uri, None)
        with self._big_lock:
            self._big_cache.pop(uri, None)
        self.big.close(uri)

    def fix_all_job(self, snapshot: Snapshot) -> FixAllJob:
        """The fix-all of the snapshot's text, in the fix process; shared by the requests for
        the same text and settings. A job for an older text of the document is stopped."""
        key = (hashlib.sha1(snapshot.text.encode("utf-8", "surrogatepass")).digest(), repr(self.editor),
               self.project.state.generation)
        known = self._fix_all.get(snapshot.uri)
        if known is not None and known.key == key and not _failed(known.future):
            return known
        if known is not None:
            self.stop_fix_all(snapshot.uri, known)
        token = object()
        job = FixAllJob(key, self.fix_workers.submit(_fix_all_action, self, snapshot, token), token)
        self._fix_all[snapshot.uri] = job
        return job

    def stop_fix_all(self, uri: str, job: FixAllJob) -> None:
        """Stop a fix-all nobody waits for any more (cancelled, or made for an older text)."""
        if not job.future.done() and not job.future.cancel():  # running: in the process, or waiting for it
            self.fixer.stop(job.token)
        if self._fix_all.get(uri) is job:
            del self._fix_all[uri]

    def shown(self, finding: Finding) -> bool:
        if finding.status is Status.SKIPPED:
            return False
        if finding.code.startswith("IPF1"):
            select = self.editor.select
            return select is None or any(finding.code.startswith(p) or p == "ALL" for p in select)
        if finding.code.startswith("IPF2") and any(finding.code.startswith(p) for p in self.editor.select or ()):
            return True  # possible hazards asked for by code: hints even with candidates hidden
        return self.editor.candidates != "hidden"


def _pyproject_of(path: str) -> str:
    """The nearest pyproject.toml at or above the file (the folder when there is none): the
    settings that hold when the file's settings are not valid are those last read for it."""
    folder = pathlib.Path(path).parent
    try:
        folder = folder.resolve()
    except (OSError, RuntimeError):
        pass
    for parent in (folder, *folder.parents):
        candidate = parent / "pyproject.toml"
        if candidate.is_file():
            return str(candidate)
    return str(folder)


server = InplacefixServer()


def _diagnostic(f: Finding, positions: Positions) -> lsp.Diagnostic:
    hazard = f.code.startswith("IPF1")
    mark = {Status.SAFE: " [fix available]", Status.UNSAFE: " [unsafe fix available]"}.get(f.status, "")
    return lsp.Diagnostic(
        range=positions.range(f.span),
        message=f"{f.message}{mark}" + (f" ({f.reason})" if f.reason else ""),
        severity=lsp.DiagnosticSeverity.Warning if hazard else lsp.DiagnosticSeverity.Hint,
        code=f.code,
        code_description=lsp.CodeDescription(href=url) if (url := code_url(f.code)) else None,
        source=SOURCE,
    )


def _error(message: str, line: int, column: int, positions: Positions) -> lsp.Diagnostic:
    at = positions.position(line, column)
    return lsp.Diagnostic(range=lsp.Range(at, at), message=message,
                          severity=lsp.DiagnosticSeverity.Error, source=SOURCE)


def diagnose(ls: InplacefixServer, snapshot: Snapshot) -> Optional[List[lsp.Diagnostic]]:
    """The diagnostics of one document (in a worker thread); None when the analysis was
    stopped (a newer version of a big document arrived)."""
    try:
        result = ls.analyse(snapshot)
    except Stopped:
        return None
    positions = ls.positions(snapshot)
    diagnostics = [_diagnostic(f, positions) for f in result.findings if ls.shown(f)]
    if result.error is not None:
        diagnostics.append(_error(result.error.message, result.error.line, result.error.column, positions))
    return diagnostics


def diagnose_notebook(ls: InplacefixServer, path: str, cells: List[Snapshot]) -> Dict[str, list]:
    """Cell URI -> its diagnostics (in a worker thread)."""
    by_cell = ls.analyse_notebook(path, cells)
    out = {}
    for cell in cells:
        positions = ls.positions(cell)
        out[cell.uri] = [
            _diagnostic(item, positions) if isinstance(item, Finding)
            else _error(item.message, item.line, item.column, positions)  # CPython's place in the cell
            for item in by_cell[cell.uri] if not isinstance(item, Finding) or ls.shown(item)
        ]
    return out


def schedule(ls: InplacefixServer, uri: str, debounce: bool = False) -> None:
    """Publish the diagnostics of a document (or of the notebook a cell is in): at once when
    none of it is being analysed (after the editor's quiet time ``debounceMs`` if ``debounce``
    and one is set), else once the running analysis ends, of the newest text (``Coalescer``)."""
    notebook = ls.notebook_of(uri)
    if notebook is not None:
        schedule_notebook(ls, notebook.uri, debounce)
        return
    ls.analyses.schedule(uri, ls.editor.debounce_ms / 1000 if debounce else 0, lambda: _publish(ls, uri))


async def _publish(ls: InplacefixServer, uri: str) -> None:
    if not ls.is_open(uri) or ls.pulls_diagnostics:  # a client that pulls asks when it wants them
        return
    snapshot = ls.snapshot(uri)
    diagnostics = await ls.workers.run(diagnose, ls, snapshot)
    if diagnostics is not None and ls.is_current(snapshot) and not ls.analyses.superseded(uri):
        # (else a newer version, or new settings or index, is analysed next: these are dropped)
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=snapshot.version))


def schedule_notebook(ls: InplacefixServer, notebook_uri: str, debounce: bool = False) -> None:
    ls.analyses.schedule(notebook_uri, ls.editor.debounce_ms / 1000 if debounce else 0,
                          lambda: _publish_notebook(ls, notebook_uri))


async def _publish_notebook(ls: InplacefixServer, notebook_uri: str) -> None:
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return
    cells = ls.cells_of(notebook)
    by_cell = await ls.workers.run(diagnose_notebook, ls, notebook.uri, cells)
    if all(ls.is_current(cell) for cell in cells) and not ls.analyses.superseded(notebook_uri):
        for cell in cells:
            ls.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=cell.uri, diagnostics=by_cell[cell.uri], version=cell.version))


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: InplacefixServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    schedule_notebook(ls, params.notebook_document.uri)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: InplacefixServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    schedule_notebook(ls, params.notebook_document.uri, debounce=True)


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: InplacefixServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
    schedule_notebook(ls, params.notebook_document.uri)


@server.feature(lsp.INITIALIZE)
def on_initialize(ls: InplacefixServer, params: lsp.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    ls.editor = EditorSettings.from_dict(params.initialization_options)
    text = params.capabilities.text_document if params.capabilities else None
    ls.pulls_diagnostics = bool(text is not None and text.diagnostic is not None)
    use_lsp_lines(ls.workspace)


@server.feature(lsp.TEXT_DOCUMENT_DIAGNOSTIC,
                lsp.DiagnosticOptions(inter_file_dependencies=True, workspace_diagnostics=False,
                                      identifier=SOURCE))
async def pull_diagnostics(ls: InplacefixServer, params: lsp.DocumentDiagnosticParams):
    """Pull diagnostics (``textDocument/diagnostic``): the document's diagnostics now, as
    pushed ones would be (a client that pulls gets no pushed ones)."""
    uri = params.text_document.uri
    notebook = ls.notebook_of(uri)
    if notebook is not None:
        cells = ls.cells_of(notebook)
        by_cell = await ls.workers.run(diagnose_notebook, ls, notebook.uri, cells)
        return lsp.RelatedFullDocumentDiagnosticReport(items=by_cell.get(uri, []))
    diagnostics = await ls.workers.run(diagnose, ls, ls.snapshot(uri))
    return lsp.RelatedFullDocumentDiagnosticReport(items=diagnostics or [])


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: InplacefixServer, params: lsp.HoverParams) -> Optional[lsp.Hover]:
    """Hover on a rule code in a ``# noqa:`` or ``# inplacefix: ignore[...]`` comment."""
    from codemod.frontends.lsp_hover import code_at, hover_text

    document = ls.workspace.get_text_document(params.text_document.uri)
    lines = document.lines
    if params.position.line >= len(lines):
        return None
    at = ls.workspace.position_codec.position_from_client_units(lines, params.position)
    line = lines[at.line].rstrip("\r\n")
    found = code_at(line, at.character)
    if found is None:
        return None
    code, start, end = found
    positions = Positions(document.source, ls.workspace.position_codec)
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=hover_text(code)),
                     range=lsp.Range(positions.position(at.line + 1, start), positions.position(at.line + 1, end)))


@server.feature(lsp.INITIALIZED)
def on_initialized(ls: InplacefixServer, params: lsp.InitializedParams) -> None:
    _tell_problems(ls)
    _watch_files(ls)
    refresh_index(ls)


def refresh_index(ls: InplacefixServer) -> None:
    """(Re)build the workspace's index in the background; open documents are analysed again
    when it changed. One build at a time: asked for meanwhile, it runs again after."""
    if ls.indexing is not None and not ls.indexing.done():
        ls.index_again = True
        return
    ls.indexing = asyncio.ensure_future(_build_index(ls))


async def _build_index(ls: InplacefixServer) -> None:
    while True:
        ls.index_again = False
        try:
            folders = _workspace_folders(ls)
            if not ls.editor.project_index or not folders:
                outcome = ls.project.clear()
                if ls.editor.project_index:
                    outcome = dataclasses.replace(outcome, message="inplacefix: no workspace folder, no project index")
            else:
                outcome = await ls.index_workers.run(ls.project.build, folders, ls.editor.project_index_max_files)
        except Exception:  # noqa: BLE001 - never the end of diagnostics (the pool stopped at shutdown...)
            logging.getLogger(__name__).exception("project index")
            return
        ls.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Info, message=outcome.message))
        if outcome.changed and not ls.shut_down:
            analyse_open_documents(ls)
        if not ls.index_again or ls.shut_down:
            return


def analyse_open_documents(ls: InplacefixServer) -> None:
    """The open documents' diagnostics again (new settings, a new index): pushed, or, to a
    client that pulls them, a ``workspace/diagnostic/refresh`` asking it to pull again."""
    if ls.pulls_diagnostics:
        workspace = ls.client_capabilities.workspace
        diagnostics = workspace.diagnostics if workspace is not None else None
        if diagnostics is not None and diagnostics.refresh_support:
            ls.workspace_diagnostic_refresh(None)
        return
    for uri in list(ls.workspace.text_documents):
        schedule(ls, uri)


def _workspace_folders(ls: InplacefixServer) -> List[pathlib.Path]:
    """The workspace folders on this machine (the root when the client names none)."""
    from pygls.uris import to_fs_path

    uris = [f.uri for f in ls.workspace.folders.values()] or ([ls.workspace.root_uri] if ls.workspace.root_uri else [])
    paths = [to_fs_path(uri) for uri in uris]
    return [pathlib.Path(p) for p in dict.fromkeys(paths) if p and os.path.isdir(p)]


def _watch_files(ls: InplacefixServer) -> None:
    """Ask the client to tell of ``.py`` files changed on disk (by git, a formatter, another
    editor), when it can and there is a workspace to index: the index is refreshed; and of
    ``pyproject.toml`` files: the open documents are analysed again with their settings."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace is not None else None
    if not ls.editor.project_index or watched is None or not watched.dynamic_registration:
        return
    if not _workspace_folders(ls):  # nothing to index
        return
    ls.client_register_capability(lsp.RegistrationParams(registrations=[lsp.Registration(
        id="inplacefix-watch-py", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[lsp.FileSystemWatcher(glob_pattern="**/*.py"),
                      *[lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in CONFIG_NAMES]]))]))


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: InplacefixServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith(tuple("/" + name for name in CONFIG_NAMES)) for change in params.changes):
        ls.forget_results()  # analysed with the settings before: again, with the new ones
        analyse_open_documents(ls)
        refresh_index(ls)
    elif any(change.uri.endswith(".py") for change in params.changes):
        refresh_index(ls)


def _tell_problems(ls: InplacefixServer) -> None:
    """Settings the editor sent that are not valid: said once, as a warning (they are ignored)."""
    for problem in ls.editor.problems:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=problem))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: InplacefixServer, params: lsp.DidOpenTextDocumentParams) -> None:
    schedule(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: InplacefixServer, params: lsp.DidChangeTextDocumentParams) -> None:
    ls.big.newer(params.text_document.uri, params.text_document.version)  # stale work stops
    schedule(ls, params.text_document.uri, debounce=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: InplacefixServer, params: lsp.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri.endswith(".py"):
        refresh_index(ls)  # what the saved file tells of the others (content-cached: cheap)
    schedule(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: InplacefixServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls.analyses.cancel(params.text_document.uri)
    ls.forget(params.text_document.uri)
    job = ls._fix_all.get(params.text_document.uri)
    if job is not None:
        ls.stop_fix_all(params.text_document.uri, job)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: InplacefixServer, params: lsp.DidChangeConfigurationParams) -> None:
    ls.editor = EditorSettings.from_dict(params.settings)
    _tell_problems(ls)
    ls._cache.clear()
    analyse_open_documents(ls)
    refresh_index(ls)


@server.feature(lsp.SHUTDOWN)
def on_shutdown(ls: InplacefixServer, params: None) -> None:
    ls.shut_down = True
    ls.analyses.cancel_all()
    ls.workers.stop()
    ls.fix_workers.stop()
    ls.index_workers.stop()
    ls.fixer.close()
    ls.big.close_all()


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll],
                          resolve_provider=True),
)
async def code_actions(ls: InplacefixServer, params: lsp.CodeActionParams):
    """Built in worker threads: a fix-all of a large file must not hold up other messages.
    A cancelled request is answered at once (pygls cancels this coroutine).

    A request that does not ask for ``source.fixAll`` by name (the editor's light bulb, on
    every cursor move) gets the fix-all without its edit when the client can resolve it
    (``codeAction/resolve``): the edit is made only if the user picks it."""
    uri = params.text_document.uri
    snapshot = ls.snapshot(uri)
    notebook = ls.notebook_of(uri)
    only = params.context.only
    if notebook is not None:  # no fix-all for a cell: it would be one of the notebook
        only = [k for k in (only or [lsp.CodeActionKind.QuickFix]) if k.startswith(lsp.CodeActionKind.QuickFix)]
    wants_fix_all = not only or lsp.CodeActionKind.SourceFixAll in only or lsp.CodeActionKind.Source in only
    lazy = wants_fix_all and not only and _resolves_edits(ls)
    fix_all = ls.fix_all_job(snapshot) if wants_fix_all and not lazy else None
    actions = []
    if not only or any(k.startswith(lsp.CodeActionKind.QuickFix) for k in only):
        cells = ls.cells_of(notebook) if notebook is not None else None
        actions = await ls.workers.run(_quick_fixes, ls, params.range, snapshot, notebook and notebook.uri, cells)
    if lazy and await ls.workers.run(_has_safe_fix, ls, snapshot):
        actions.append(lsp.CodeAction(title=FIX_ALL_TITLE, kind=lsp.CodeActionKind.SourceFixAll, data={"uri": uri}))
    if fix_all is not None:
        action = await _wait_for_fix_all(ls, uri, fix_all)
        if action is not None:
            actions.append(action)
    if ls.is_open(uri) and not ls.is_current(snapshot):
        return []  # the edits are for a text the editor no longer has; it will ask again
    return actions


@server.feature(lsp.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: InplacefixServer, action: lsp.CodeAction) -> lsp.CodeAction:
    """The edit of a fix-all offered without one, for the document's text now."""
    uri = action.data.get("uri") if isinstance(action.data, dict) else None
    if action.kind != lsp.CodeActionKind.SourceFixAll or not isinstance(uri, str) or not ls.is_open(uri):
        return action
    snapshot = ls.snapshot(uri)
    made = await _wait_for_fix_all(ls, uri, ls.fix_all_job(snapshot))
    if made is not None and ls.is_current(snapshot):
        action.edit = made.edit
    return action


async def _wait_for_fix_all(ls: InplacefixServer, uri: str, job: FixAllJob) -> Optional[lsp.CodeAction]:
    """The job's action; a cancelled request stops the job (an editor cancels a request it no
    longer needs), a failed or stopped job gives none."""
    try:
        return await asyncio.shield(asyncio.wrap_future(job.future))
    except asyncio.CancelledError:
        if asyncio.current_task().cancelling():  # this request was cancelled
            ls.stop_fix_all(uri, job)
            raise
        return None  # the job was stopped: made for a text the document no longer has
    except Exception:  # noqa: BLE001 - logged; the other code actions still go back
        logging.getLogger(__name__).exception("fix-all of %s failed", uri)
        return None


def _failed(future: concurrent.futures.Future) -> bool:
    return future.done() and (future.cancelled() or future.exception() is not None)


def _resolves_edits(ls: InplacefixServer) -> bool:
    """Whether the client can fill in a code action's edit with ``codeAction/resolve``."""
    text_document = ls.client_capabilities.text_document
    code_action = text_document.code_action if text_document is not None else None
    support = code_action.resolve_support if code_action is not None else None
    return support is not None and "edit" in support.properties


def _has_safe_fix(ls: InplacefixServer, snapshot: Snapshot) -> bool:
    """Whether a shown finding has a safe fix (what a fix-all would apply)."""
    try:
        findings = ls.analyse(snapshot).findings
    except Stopped:
        return False
    return any(f.status is Status.SAFE and f.fixable and ls.shown(f) for f in findings)


def _quick_fixes(ls: InplacefixServer, rng: lsp.Range, snapshot: Snapshot,
                 notebook: Optional[str], cells: Optional[List[Snapshot]]) -> list:
    """The fix and the suppression of each shown finding on the lines of ``rng``."""
    uri = snapshot.uri
    positions = ls.positions(snapshot)
    lines = positions.lines_of(rng)
    if notebook is None and is_big(snapshot.text):  # its own process: the lock is not held meanwhile
        try:
            findings = ls.big_quick_fixes(snapshot, lines)
        except Stopped:
            return []
        return _actions(ls, uri, findings, lines, positions, cell=False)
    with ls.analysis_lock:  # edits are added to the cached findings
        if notebook is not None:
            findings = [f for f in ls.analyse_notebook(notebook, cells, edits=True).get(uri, [])
                        if isinstance(f, Finding)]
            result = FileResult(uri, findings=findings)
        else:
            result = ls.analyse(snapshot)
        for f in result.findings:
            if not ls.shown(f) or f.span.end_line < lines.start or f.span.line >= lines.stop:
                continue
            if f.edit is None and f.plan is not None and f.cell is None:
                add_edits(result, snapshot.text.encode("utf-8", "surrogatepass"), [f])
        source = result.source if notebook is None else None  # (the analysed text's ast)
        tree = source.tree if source is not None and source.text == positions.text else None
        return _actions(ls, uri, result.findings, lines, positions, cell=notebook is not None, tree=tree)


def _actions(ls: InplacefixServer, uri: str, findings: List[Finding], lines: range, positions: Positions,
             cell: bool, tree=None) -> list:
    """The fix (when it has its edit) and the suppression of each shown finding on ``lines``
    (``tree``: the text's ``ast``, when at hand: where the comment goes is then found from the
    statement around the finding, not the whole text)."""
    actions = []
    comment_at = None  # where a suppression comment goes, once asked for
    for f in findings:
        if not ls.shown(f) or f.span.end_line < lines.start or f.span.line >= lines.stop:
            continue
        diagnostic = _diagnostic(f, positions)
        if f.edit is not None and (f.status is Status.SAFE or (f.status is Status.UNSAFE and ls.editor.unsafe_fixes)):
            unsafe = " (unsafe: may change behaviour)" if f.status is Status.UNSAFE else ""
            actions.append(lsp.CodeAction(
                title=f"{f.code}: {f.fix_title}{unsafe}",
                kind=lsp.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=f.status is Status.SAFE,
                edit=lsp.WorkspaceEdit(changes={uri: [positions.text_edit(f.edit)]}),
            ))
        if comment_at is None:
            comment_at = _comment_lines(positions.text, cell, tree)
        line = comment_at(f.span.end_line) if comment_at else None
        if line is not None:
            actions.append(_suppress_action(uri, f, diagnostic, positions, line))
    return actions


def _comment_lines(text: str, cell: bool, tree=None):
    """Line -> where a comment suppressing findings on it goes: the end of that line, or of the
    line ending the string or backslash continuation it is in (never inside a string, never
    after a ``\\``); False where the text cannot be tokenized (with ``tree``: per line, None)."""
    from codemod.engine.suppression import comment_line_finder, comment_lines

    if tree is not None and not cell:
        return comment_line_finder(text, tree)
    if cell:  # a notebook cell: its IPython lines masked, as the analysis reads it
        from codemod.engine.notebook import mask_ipython

        text = "\n".join(mask_ipython(text).lines)
    return comment_lines(text) or False


def _suppress_action(uri: str, f: Finding, diagnostic, positions: Positions, line: int) -> lsp.CodeAction:
    at = positions.line_end(line)
    return lsp.CodeAction(
        title=f"Suppress {f.code} on this line",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(lsp.Range(at, at), f"  # inplacefix: ignore[{f.code}]")]}),
    )


def _fix_all_action(ls: InplacefixServer, snapshot: Snapshot, token: object) -> Optional[lsp.CodeAction]:
    """Every safe fix of the shown findings, as one edit of the whole document (made in the fix
    process; this worker thread only waits for it)."""
    path = snapshot.path
    settings = dataclasses.replace(ls.settings_for(path), unsafe_fixes=False)
    if ls.editor.candidates == "hidden":
        settings = dataclasses.replace(settings, select=ls.editor.select or ("IPF1",))
    index, module = ls.project.lookup(path) if ls.editor.project_index else (None, "")
    pickled = ls.project.pickled(ls.analysis_lock) if index is not None else None
    fixed = ls.fixer.fix_all(token, snapshot.text, path, settings, pickled, module if pickled else "")
    if fixed is None:
        return None
    return lsp.CodeAction(
        title=FIX_ALL_TITLE,
        kind=lsp.CodeActionKind.SourceFixAll,
        edit=lsp.WorkspaceEdit(changes={snapshot.uri: [
            lsp.TextEdit(lsp.Range(lsp.Position(0, 0), ls.positions(snapshot).end()), fixed)]}),
    )


def main() -> None:
    from codemod.engine.pipeline import tune_gc

    tune_gc(one_shot=False)
    # An analysis runs in a worker thread, and reading one message takes pygls's reader thread
    # and the event loop a few turns of the GIL each. At CPython's default switch interval
    # (5 ms) a running analysis held each turn back up to 5 ms: a burst of changes was read
    # slower than it was analysed (versions analysed and published one by one, seconds to
    # settle). At 1 ms the messages are read between.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    server.start_io()
    # pygls ends its loop on `exit` (or when the client goes away) and swallows the exit code.
    # The LSP specification: 0 if `shutdown` came first, else 1. Exit now, without waiting for
    # a worker still busy with a dropped job.
    server.fixer.close()
    server.big.close_all()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(ValueError, OSError):  # pygls closes stdout on `exit`
            stream.flush()
    os._exit(0 if server.shut_down else 1)
