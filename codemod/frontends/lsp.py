"""The language server: ``inplacefix lsp`` over stdio (pygls).

Diagnostics on open, change and save: hazards (IPF1xx) as warnings, other in-place candidates
as hints (or hidden, by setting). Code actions per diagnostic: the fix (unsafe ones say so) and
"suppress on this line"; ``source.fixAll`` applies the safe fixes only. It never runs user code.

Notebook documents (``notebookDocument/*``) are analysed as one program of their code cells,
with diagnostics and quick fixes per cell.

Settings, from the editor (``initializationOptions`` or ``workspace/didChangeConfiguration``
under ``inplacefix``) on top of ``[tool.inplacefix]`` in the nearest pyproject.toml:
``select``, ``ignore``, ``unsafeFixes`` (offer unsafe fixes as quick fixes; default true, they are
labelled), ``candidates`` (``"hint"`` or ``"hidden"``: how to show in-place ops that are no
hazard), ``assumeSameDtype``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import pathlib
from typing import Optional

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from codemod import __version__
from codemod.config import ConfigError, Settings, load_settings
from codemod.rules.registry import table
from codemod.engine.pipeline import FileResult, add_edits, process_source
from codemod.findings import Finding, Status

SOURCE = "inplacefix"


@dataclasses.dataclass
class EditorSettings:
    select: Optional[tuple] = None
    ignore: Optional[tuple] = None
    unsafe_fixes: bool = True
    candidates: str = "hint"  # or "hidden"
    assume_same_dtype: Optional[bool] = None

    @classmethod
    def from_dict(cls, raw) -> "EditorSettings":
        raw = (raw or {}).get("inplacefix", raw or {}) if isinstance(raw, dict) else {}
        return cls(
            select=tuple(raw["select"]) if raw.get("select") else None,
            ignore=tuple(raw["ignore"]) if raw.get("ignore") else None,
            unsafe_fixes=bool(raw.get("unsafeFixes", True)),
            candidates=raw.get("candidates", "hint"),
            assume_same_dtype=raw.get("assumeSameDtype"),
        )


class InplacefixServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "inplacefix", __version__,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(notebook_selector=[
                lsp.NotebookDocumentFilterWithCells(
                    cells=[lsp.NotebookCellLanguage(language="python")], notebook="jupyter-notebook"
                ),
            ]),
        )
        self.editor = EditorSettings()
        self._cache: dict = {}  # uri -> (content hash, FileResult)

    def settings_for(self, path: str) -> Settings:
        try:
            base = load_settings(None, pathlib.Path(path), table().keys())
        except ConfigError:
            base = Settings()
        select = self.editor.select or base.select
        if self.editor.candidates != "hidden":
            select = ("ALL",)  # candidates are shown as hints; `select` still filters hazards
        return dataclasses.replace(
            base,
            select=select,
            ignore=self.editor.ignore or base.ignore,
            assume_same_dtype=self.editor.assume_same_dtype
            if self.editor.assume_same_dtype is not None else base.assume_same_dtype,
        )

    def notebook_of(self, cell_uri: str):
        """The notebook document a cell belongs to, if any."""
        return self.workspace.get_notebook_document(cell_uri=cell_uri)

    def analyse_notebook(self, notebook, edits: bool = False) -> dict:
        """Cell URI -> findings (cell coordinates), for a notebook's code cells as one program."""
        from codemod.engine.notebook import Cell, analyse_cells

        uris = [c.document for c in notebook.cells if c.kind == lsp.NotebookCellKind.Code]
        cells = [Cell(i, self.workspace.get_text_document(uri).source, False) for i, uri in enumerate(uris)]
        path = notebook.uri
        result = FileResult(path)
        analyse_cells(cells, path, self.settings_for(path), result, edits=edits)
        by_cell = {uri: [] for uri in uris}
        for finding in result.findings:
            by_cell[uris[finding.cell - 1]].append(finding)
        for error in result.skipped_parts:
            number = int(error.message.split()[1])
            by_cell[uris[number - 1]].append(error)
        return by_cell

    def analyse(self, uri: str) -> FileResult:
        """The findings (with edits) for the document's current text; cached by content."""
        document = self.workspace.get_text_document(uri)
        text = document.source
        digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
        cached = self._cache.get(uri)
        if cached and cached[0] == digest:
            return cached[1]
        path = document.path or uri
        # Edits are made later, only for the findings a code action asks about; functions and
        # classes the edit left alone keep their findings (codemod.incremental).
        result = process_source(text.encode("utf-8", "surrogatepass"), path, self.settings_for(path),
                                incremental=True, previous=cached[1] if cached else None)
        self._cache[uri] = (digest, result)
        return result

    def shown(self, finding: Finding) -> bool:
        if finding.status is Status.SKIPPED:
            return False
        if finding.code.startswith("IPF1"):
            select = self.editor.select
            return select is None or any(finding.code.startswith(p) or p == "ALL" for p in select)
        return self.editor.candidates != "hidden"


server = InplacefixServer()


def _range(line: int, column: int, end_line: int, end_column: int) -> lsp.Range:
    return lsp.Range(lsp.Position(line - 1, column), lsp.Position(end_line - 1, end_column))


def _diagnostic(f: Finding) -> lsp.Diagnostic:
    hazard = f.code.startswith("IPF1")
    s = f.span
    mark = {Status.SAFE: " [fix available]", Status.UNSAFE: " [unsafe fix available]"}.get(f.status, "")
    return lsp.Diagnostic(
        range=_range(s.line, s.column, s.end_line, s.end_column),
        message=f"{f.message}{mark}" + (f" ({f.reason})" if f.reason else ""),
        severity=lsp.DiagnosticSeverity.Warning if hazard else lsp.DiagnosticSeverity.Hint,
        code=f.code,
        source=SOURCE,
    )


def publish(ls: InplacefixServer, uri: str, version: Optional[int] = None) -> None:
    result = ls.analyse(uri)
    diagnostics = [_diagnostic(f) for f in result.findings if ls.shown(f)]
    if result.error is not None:
        diagnostics.append(lsp.Diagnostic(
            range=_range(max(result.error.line, 1), result.error.column, max(result.error.line, 1), result.error.column),
            message=result.error.message, severity=lsp.DiagnosticSeverity.Error, source=SOURCE,
        ))
    ls.text_document_publish_diagnostics(
        lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
    )


def publish_notebook(ls: InplacefixServer, notebook) -> None:
    for uri, items in ls.analyse_notebook(notebook).items():
        diagnostics = []
        for item in items:
            if isinstance(item, Finding):
                if ls.shown(item):
                    diagnostics.append(_diagnostic(item))
            else:
                diagnostics.append(lsp.Diagnostic(
                    range=_range(1, 0, 1, 0), message=item.message,
                    severity=lsp.DiagnosticSeverity.Error, source=SOURCE))
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
def notebook_did_open(ls: InplacefixServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
    publish_notebook(ls, ls.workspace.get_notebook_document(notebook_uri=params.notebook_document.uri))


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
def notebook_did_change(ls: InplacefixServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
    publish_notebook(ls, ls.workspace.get_notebook_document(notebook_uri=params.notebook_document.uri))


@server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
def notebook_did_save(ls: InplacefixServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
    publish_notebook(ls, ls.workspace.get_notebook_document(notebook_uri=params.notebook_document.uri))


@server.feature(lsp.INITIALIZE)
def on_initialize(ls: InplacefixServer, params: lsp.InitializeParams) -> None:
    ls.editor = EditorSettings.from_dict(params.initialization_options)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: InplacefixServer, params: lsp.DidOpenTextDocumentParams) -> None:
    publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: InplacefixServer, params: lsp.DidChangeTextDocumentParams) -> None:
    publish(ls, params.text_document.uri, params.text_document.version)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: InplacefixServer, params: lsp.DidSaveTextDocumentParams) -> None:
    publish(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: InplacefixServer, params: lsp.DidCloseTextDocumentParams) -> None:
    ls._cache.pop(params.text_document.uri, None)


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: InplacefixServer, params: lsp.DidChangeConfigurationParams) -> None:
    ls.editor = EditorSettings.from_dict(params.settings)
    ls._cache.clear()
    for uri in list(ls.workspace.text_documents):
        publish(ls, uri)


@server.feature(
    lsp.TEXT_DOCUMENT_CODE_ACTION,
    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.SourceFixAll]),
)
def code_actions(ls: InplacefixServer, params: lsp.CodeActionParams):
    uri = params.text_document.uri
    only = params.context.only
    notebook = ls.notebook_of(uri)
    if notebook is not None:
        findings = [f for f in ls.analyse_notebook(notebook, edits=True).get(uri, []) if isinstance(f, Finding)]
        result = FileResult(uri, findings=findings)
        only = [k for k in (only or [lsp.CodeActionKind.QuickFix]) if k.startswith(lsp.CodeActionKind.QuickFix)]
    else:
        result = ls.analyse(uri)
    actions = []
    if not only or any(k.startswith(lsp.CodeActionKind.QuickFix) for k in only):
        first, last = params.range.start.line + 1, params.range.end.line + 1
        for f in result.findings:
            if not ls.shown(f) or f.span.end_line < first or f.span.line > last:
                continue
            diagnostic = _diagnostic(f)
            if f.edit is None and f.plan is not None and f.cell is None:
                add_edits(result, ls.workspace.get_text_document(uri).source.encode("utf-8", "surrogatepass"), [f])
            if f.edit is not None and (f.status is Status.SAFE or (f.status is Status.UNSAFE and ls.editor.unsafe_fixes)):
                e = f.edit.span
                unsafe = " (unsafe: may change behaviour)" if f.status is Status.UNSAFE else ""
                actions.append(lsp.CodeAction(
                    title=f"{f.code}: {f.fix_title}{unsafe}",
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=f.status is Status.SAFE,
                    edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(
                        _range(e.line, e.column, e.end_line, e.end_column), f.edit.content
                    )]}),
                ))
            actions.append(_suppress_action(ls, uri, f, diagnostic))
    if notebook is None and (not only or lsp.CodeActionKind.SourceFixAll in only
                             or lsp.CodeActionKind.Source in only):
        fix_all = _fix_all_action(ls, uri)
        if fix_all is not None:
            actions.append(fix_all)
    return actions


def _suppress_action(ls: InplacefixServer, uri: str, f: Finding, diagnostic) -> lsp.CodeAction:
    lines = ls.workspace.get_text_document(uri).lines
    line = f.span.end_line - 1
    text = lines[line].rstrip("\r\n") if line < len(lines) else ""
    return lsp.CodeAction(
        title=f"Suppress {f.code} on this line",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(
            lsp.Range(lsp.Position(line, len(text)), lsp.Position(line, len(text))),
            f"  # inplacefix: ignore[{f.code}]",
        )]}),
    )


def _fix_all_action(ls: InplacefixServer, uri: str) -> Optional[lsp.CodeAction]:
    """Every safe fix of the shown findings, as one edit of the whole document."""
    document = ls.workspace.get_text_document(uri)
    path = document.path or uri
    settings = dataclasses.replace(ls.settings_for(path), unsafe_fixes=False)
    if ls.editor.candidates == "hidden":
        settings = dataclasses.replace(settings, select=ls.editor.select or ("IPF1",))
    result = process_source(document.source.encode("utf-8", "surrogatepass"), path, settings, fix=True)
    if not result.changed:
        return None
    lines = document.source.splitlines(keepends=True)
    end = lsp.Position(len(lines), 0)
    return lsp.CodeAction(
        title="inplacefix: fix all safe in-place fixes",
        kind=lsp.CodeActionKind.SourceFixAll,
        edit=lsp.WorkspaceEdit(changes={uri: [lsp.TextEdit(lsp.Range(lsp.Position(0, 0), end), result.fixed)]}),
    )


def main() -> None:
    from codemod.engine.pipeline import tune_gc

    tune_gc()
    server.start_io()
