"""The per-file pipeline: screen, analyse on ``ast``, build and apply fixes, return data.

Front ends (CLI, JSON, editors) call :func:`process_source` (or ``engine.files.process_path``
for a file on disk) and only render the :class:`FileResult` they get back. Nothing here imports torch, and libcst is
imported only when a file gets a fix (``codemod.fixes.apply``).
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from codemod.config import Settings

# The analysis and rule modules are imported on first use, in
# process_source: a rerun answered from the cache needs none of them.

# A file that never names torch holds no tensor we could know about: skip it unparsed.
SCREEN = b"torch"


@dataclasses.dataclass
class FileError:
    message: str
    line: int = 1
    column: int = 0


@dataclasses.dataclass
class FileResult:
    path: str
    findings: list = dataclasses.field(default_factory=list)
    original: Optional[str] = None  # source text, when parsed
    fixed: Optional[str] = None  # new source text, when fixes were applied and changed it
    fixed_bytes: Optional[bytes] = None
    applied: list = dataclasses.field(default_factory=list)  # findings whose fix is in `fixed`
    error: Optional[FileError] = None
    wrapper: Optional[object] = None  # libcst's tree (a MetadataWrapper), when fixes were built
    source: Optional[object] = None  # the analysed ast (a ``source.Source``)
    statements: Optional[dict] = None  # findings by top-level function/class, for the next edit
    reused_units: int = 0  # how many top-level functions/classes kept the findings of the edit before
    cell_diffs: list = dataclasses.field(default_factory=list)  # notebooks: (cell, before, after)
    skipped_parts: list = dataclasses.field(default_factory=list)  # FileErrors of cells left alone
    notices: list = dataclasses.field(default_factory=list)  # not errors: e.g. a notebook of another language

    @property
    def changed(self) -> bool:
        return self.fixed is not None and self.fixed != self.original


def process_source(
    data: bytes,
    path: str,
    settings: Settings,
    *,
    fix: bool = False,
    edits: bool = False,
    build_fixes: bool = False,
    incremental: bool = False,
    previous: Optional[FileResult] = None,
    project=None,
    module_name: str = "",
) -> FileResult:
    """Find (and with ``fix``, apply) in-place rewrites in one file's bytes.

    ``edits``: every fixable finding gets its one-fix text edit (for editors and JSON);
    ``build_fixes``: every fixable finding gets its ``Fix`` and title, and ``result.wrapper``
    libcst's tree. Without these only ``fix`` parses with libcst, and only a file whose
    findings have a fix to apply. ``incremental`` (editors): keep the findings of each function
    and class in ``result.statements``, and reuse those of ``previous`` (this file's result
    before an edit) for the ones left unchanged (``codemod.incremental``). ``project``: the
    run's index (``analysis.project``), with ``module_name`` this file's module in it.
    """
    result = FileResult(path)
    wants_unused = _wants_unused(data, settings)
    if SCREEN not in data and not wants_unused and not _handed_tensors(data, project, module_name):
        return result
    from codemod.analysis.model import SemanticModel
    from codemod.analysis.source import Source, parse
    from codemod.engine import incremental as reuse  # not `incremental`: that is the flag
    from codemod.engine import parsed
    from codemod.engine.suppression import is_suppressed, suppressions
    from codemod.rules import registry

    try:
        # (a source the index pass kept passed the text screen there: ``will_parse``)
        if not (build_fixes or wants_unused or parsed.peek(data, registry.node_types()) is not None
                or registry.may_have_candidates(data)):
            if not parsed.known_to_parse(data):  # (the run's index pass parsed it)
                parse(data)  # nothing to find, but a file that does not parse is reported
            return result
        source = shared = None
        if incremental and previous is not None and previous.source is not None and not (fix or build_fixes):
            from codemod.engine.reparse import reparse  # the edited lines only

            source, previous.source = reparse(previous.source, data, registry.node_types()), None
        if source is None:  # parsed by the run's index pass (with what its model read off it), or now
            kept = parsed.take(data, registry.node_types())
            source, shared = kept if kept is not None else (Source(data, registry.node_types()), None)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError) as exc:
        from codemod.engine.syntax_errors import syntax_error

        result.error = FileError(*syntax_error(data, exc))
        return result
    except RecursionError:  # CPython's own limit: such a file cannot be compiled either
        result.error = FileError("cannot parse: nested too deeply for Python's parser")
        return result
    result.original = source.text
    selected = [
        cls for cls in registry.rules()
        if any(settings.selects(code) for code in registry.codes_of(cls))
    ]
    if not build_fixes and not wants_unused and not registry.could_apply(selected, source.candidates):
        return result
    model = SemanticModel(source, assume_same_dtype=settings.assume_same_dtype,
                          project=project, module_name=module_name, mixed_dtypes=settings.mixed_dtypes,
                          shared=shared)
    running = [cls(model) for cls in selected]
    plan = None
    if incremental and not (fix or build_fixes):  # fixes point into one libcst tree
        plan = reuse.reusable(source, settings, previous, model,
                              index=project.digest_for(module_name) if project is not None else None,
                              other_lines=project is not None and project.names_other_lines(module_name))
        result.reused_units = len(plan.skip)
    _dispatch(source, running, plan.skipped_lines() if plan else frozenset())
    found = [f for rule in running for f in rule.findings if settings.selects(f.code)]
    if plan and plan.units and not model.picked_fresh_names:  # a fresh name depends on the whole file
        result.statements = reuse.remember(plan, found, previous)
    found += plan.reused if plan else []
    table = suppressions(source.text) if found else {}
    result.findings.extend(f for f in found if not is_suppressed(table, f.code, f.span.line, f.span.end_line))
    if wants_unused:
        result.findings.extend(_unused_suppressions(source.text, found, settings))
    result.findings.sort(key=lambda f: (f.span.line, f.span.column, f.code))
    result.source = source
    chosen = [f for f in result.findings if f.applies(settings.unsafe_fixes)] if fix else []
    if edits and not build_fixes:
        add_edits(result, data, result.findings)
    wanted = [f for f in result.findings if f.fixable] if build_fixes else chosen
    if not wanted and not build_fixes:
        return result
    if not build_fixes:  # the statements holding the fixes, parsed alone (else the whole module)
        from codemod.fixes.statements import statement_fixes

        try:
            done = statement_fixes(source, data, wanted, path)
        except SyntaxError as exc:  # a bug of ours: never write it
            result.error = FileError(f"internal error: the fixed code does not parse ({exc.msg})")
            return result
        if done is not None:
            chosen = [f for f in chosen if f.fix is not None]
            if chosen and done[0] != result.original:
                result.fixed, result.fixed_bytes = done
                result.applied = chosen
            return result
    from codemod.fixes import apply as fixing

    try:
        result.wrapper = fixing.parse(data)
    except Exception as exc:  # libcst's grammar is not CPython's: report, keep the findings
        result.error = FileError(f"cannot parse for fixing: {getattr(exc, 'message', exc)}")
        for f in result.findings:
            f.plan, f.fixable = None, False
        return result
    fixing.build_fixes(result.wrapper, wanted)
    if edits and build_fixes:
        for finding in result.findings:
            if finding.fix is not None:
                finding.edit = fixing.single_edit(result.wrapper.module, finding.fix,
                                                  junk=fixing.junk_of(result.wrapper))
    chosen = [f for f in chosen if f.fix is not None]
    if chosen:
        apply_fixes(result, [f.fix for f in chosen])
        if result.changed:
            result.applied = chosen
    return result


def _handed_tensors(data: bytes, project, module: str) -> bool:
    """A file that never names torch may still be handed tensors: a helper module whose
    functions other files of the run call with tensors (``merge_skip(h, skip)`` after ``h =
    F.relu(...)``), as their own analysis shows (``CallFact.args_tensor``). Asked only of such a
    file with something the rules look for, of its functions that write into a parameter (what
    the calls pass is worked out from the callers' files: only where it can matter)."""
    if project is None or not module or module not in project.modules:
        return False
    from codemod.rules import registry

    if not registry.may_have_candidates(data):
        return False
    writers = _parameter_writers(data)
    return any(call.args_tensor for f in project.modules[module].functions if f.qualname.rpartition(".")[2] in writers
               for call in project.calls_from_elsewhere(f.qualname, module))


def _parameter_writers(data: bytes) -> set:
    """The names of the functions of ``data`` that write into one of their parameters in place
    (``analysis.indexing.parameter_writers``). Empty where the file does not parse (it is then
    left alone, as a file that never names torch always was)."""
    from codemod.analysis.indexing import parameter_writers
    from codemod.analysis.source import parse

    try:
        return parameter_writers(parse(data))
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError, RecursionError):
        return set()


def will_parse(data: bytes) -> bool:
    """Whether :func:`process_source` parses ``data`` into a ``Source`` filed by the rules' node
    types (in a run without IPF900 and fixes built for all): a file its screens pass."""
    from codemod.rules import registry

    return SCREEN in data and registry.may_have_candidates(data)


def check_source(data: bytes, path: str, settings: Settings, *, edits: bool = False) -> FileResult:
    """``check``: the findings of one file (with ``edits``, each fixable one carries its one-fix
    text edit, for JSON and SARIF). Parses with libcst only for those edits."""
    return process_source(data, path, settings, edits=edits)


def fix_source(data: bytes, path: str, settings: Settings) -> FileResult:
    """``fix``: the findings, and the file's new text with every fix the settings allow
    (``result.fixed``; None when nothing changed)."""
    return process_source(data, path, settings, fix=True)


def editor_source(data: bytes, path: str, settings: Settings,
                  previous: Optional[FileResult] = None) -> FileResult:
    """An editor's document after an edit: the findings, reusing those of ``previous`` for
    every function and class the edit left alone (edits are built on demand: ``add_edits``)."""
    return process_source(data, path, settings, incremental=True, previous=previous)


def source_with_fixes(data: bytes, path: str, settings: Settings) -> FileResult:
    """Every fixable finding with its ``Fix`` built on libcst's tree (``result.wrapper``) and
    the allowed ones applied: for ``repair`` and the fixture spec, which choose among fixes."""
    return process_source(data, path, settings, fix=True, build_fixes=True)


def tune_gc(one_shot: bool) -> None:
    """Collect garbage less often. The analysis allocates many short-lived objects (ast
    nodes) and almost no cycles, so the default thresholds only spend time: in an editor
    they doubled the slowest diagnostics (p95 145 -> 54 ms on a 1,000-line module).

    ``one_shot``: a run that ends when its files are done (``check``, ``fix``) also takes what
    it imported, and the trees it parses once for two passes (``engine.parsed``), out of the
    collector's sight (``gc.freeze``). A process that lives on (the language server) never
    freezes: what it holds now is dropped later, and frozen cycles are never collected."""
    import gc

    from codemod.engine import parsed

    parsed.one_shot(one_shot)
    if one_shot:
        gc.freeze()  # what was imported so far is never garbage
    gc.set_threshold(50_000, 20, 20)


def _wants_unused(data: bytes, settings: Settings) -> bool:
    """Is IPF900 (unused suppressions) selected, and could the file hold one of ours?"""
    from codemod.rules.registry import UNUSED_SUPPRESSION

    return settings.selects(UNUSED_SUPPRESSION) and (b"IPF" in data.upper() or b"INPLACEFIX" in data.upper())


def _unused_suppressions(text: str, found: list, settings: Settings) -> list:
    """IPF900 findings: the suppression comments of ours that suppressed none of ``found``."""
    from codemod.engine.suppression import unused
    from codemod.findings import Finding, Span, Status
    from codemod.rules.registry import UNUSED_SUPPRESSION, table

    selects_all = all(settings.selects(code) for code in table() if code != UNUSED_SUPPRESSION)
    out = []
    for directive, codes in unused(text, found, settings.selects, selects_all):
        what = f"`{'`, `'.join(codes)}` reports nothing here" if codes else "it suppresses nothing"
        message = f"Unused suppression `{directive.text}`: {what}"
        out.append(Finding(UNUSED_SUPPRESSION, message,
                           Span(directive.line, directive.column, directive.line, directive.end_column),
                           Status.MANUAL))
    return out


def add_edits(result: FileResult, data: bytes, findings: list) -> None:
    """Give ``findings`` (of ``result``, which was made from ``data``) their fix titles and
    one-fix edits, each built from its own top-level statement: editors ask for them one
    code action at a time, JSON output for all."""
    wanted = [f for f in findings if f.plan is not None and f.edit is None]
    if not wanted:
        return
    from codemod.fixes import apply as fixing

    source = result.source
    if source is None:
        from codemod.analysis.source import Source

        source = result.source = Source(data)
    fixing.statement_edits(source, wanted)


def _dispatch(source, rules, skip=frozenset()) -> None:
    """Hand every candidate node, in source order, to the rules' ``visit_<Type>`` methods,
    except those starting on the lines in ``skip`` (of reused top-level statements)."""
    from codemod.analysis.source import source_order
    from codemod.rules.registry import dispatch_table

    table = dispatch_table(rules)
    nodes = [n for t, found in source.candidates.items() if t in table for n in found]
    if skip:
        nodes = [n for n in nodes if n.lineno not in skip]
    nodes.sort(key=source_order)
    for node in nodes:
        for method in table[type(node)]:
            method(node)


def apply_fixes(result: FileResult, fixes: list) -> None:
    """Apply ``fixes`` (of ``result``'s findings, or made for its tree) in one traversal."""
    from codemod.fixes import apply as fixing

    try:
        fixed, fixed_bytes = fixing.apply_fixes(result.wrapper.module, fixes, result.path,
                                                fixing.junk_of(result.wrapper))
    except SyntaxError as exc:  # a bug of ours: never write it
        result.error = FileError(f"internal error: the fixed code does not parse ({exc.msg})")
        return
    if result.original.endswith("\r") and not fixed.endswith("\r"):
        fixed, fixed_bytes = fixed + "\r", fixed_bytes + b"\r"  # libcst drops a CR-only file's last one
    if fixed != result.original:
        result.fixed, result.fixed_bytes = fixed, fixed_bytes
