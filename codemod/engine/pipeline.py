"""The per-file pipeline: screen, analyse on ``ast``, build and apply fixes, return data.

Front ends (CLI, JSON, editors) call :func:`process_source` (or ``engine.files.process_path``
for a file on disk) and only render the :class:`FileResult` they get back. Nothing here imports torch, and libcst is
imported only when a file gets a fix (``codemod.fixing``).
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Optional

from codemod.config import Settings

# The analysis modules (judgement, passes, source...) are imported on first use, in
# process_source: a rerun answered from the cache needs none of them.

# A file that never names torch holds no tensor we could know about: skip it unparsed.
SCREEN = b"torch"


def could_apply(source) -> bool:
    """Could any pass report anything in this file? A screen over the nodes the walk filed
    (in-place ``op=``, writes into subscripts, ``name_(...)`` calls, ``inplace``
    arguments); errs on the side of yes."""
    if source.candidates[ast.AugAssign]:
        return True
    if any(isinstance(t, ast.Subscript) for n in source.candidates[ast.Assign] for t in n.targets):
        return True
    for node in source.candidates[ast.Call]:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name.endswith("_") and not name.startswith("_"):
            return True  # in-place methods and functions, nn.init
        if any(k.arg == "inplace" for k in node.keywords):
            return True
        if any(isinstance(a, ast.Constant) and a.value is True for a in node.args):
            return True  # a positional inplace: nn.ReLU(True)
    return False


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
) -> FileResult:
    """Find (and with ``fix``, apply) in-place rewrites in one file's bytes.

    ``edits``: every fixable finding gets its one-fix text edit (for editors and JSON);
    ``build_fixes``: every fixable finding gets its ``Fix`` and title, and ``result.wrapper``
    libcst's tree. Without these only ``fix`` parses with libcst, and only a file whose
    findings have a fix to apply. ``incremental`` (editors): keep the findings of each function
    and class in ``result.statements``, and reuse those of ``previous`` (this file's result
    before an edit) for the ones left unchanged (``codemod.incremental``).
    """
    result = FileResult(path)
    if SCREEN not in data:
        return result
    from codemod.engine import incremental
    from codemod.analysis.judgement import Judge
    from codemod.rules import all_passes
    from codemod.rules.base import hazard_code
    from codemod.analysis.source import Source, may_have_candidates, parse
    from codemod.engine.suppression import is_suppressed, suppressions

    try:
        if not (build_fixes or may_have_candidates(data)):
            parse(data)  # nothing to find, but a file that does not parse is reported
            return result
        source = Source(data)
    except (SyntaxError, ValueError, UnicodeDecodeError, LookupError) as exc:
        from codemod.engine.syntax_errors import syntax_error

        result.error = FileError(*syntax_error(data, exc))
        return result
    except RecursionError:  # CPython's own limit: such a file cannot be compiled either
        result.error = FileError("cannot parse: nested too deeply for Python's parser")
        return result
    result.original = source.text
    if not could_apply(source) and not build_fixes:
        return result
    judge = Judge(source, assume_same_dtype=settings.assume_same_dtype)
    passes = [
        cls(judge) for cls in all_passes()
        if settings.selects(cls.CODE) or settings.selects(hazard_code(cls.CODE))
    ]
    keys, reused, skip = {}, [], set()
    if incremental and not (fix or build_fixes):  # fixes point into one libcst tree
        keys, reused, skip = incremental.reusable(source, settings, previous)
    _dispatch(source, passes, skip)
    judge.close()
    found = [f for visitor in passes for f in visitor.findings if settings.selects(f.code)]
    if keys and not judge.picked_fresh_names:  # a fresh name depends on the whole file
        result.statements = incremental.remember(keys, found, previous)
    found += reused
    table = suppressions(source.text) if found else {}
    result.findings.extend(f for f in found if not is_suppressed(table, f.code, f.span.line, f.span.end_line))
    result.findings.sort(key=lambda f: (f.span.line, f.span.column, f.code))
    result.source = source
    chosen = [f for f in result.findings if f.applies(settings.unsafe_fixes)] if fix else []
    if edits and not build_fixes:
        add_edits(result, data, result.findings)
    wanted = [f for f in result.findings if f.fixable] if build_fixes else chosen
    if not wanted and not build_fixes:
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
                finding.edit = fixing.single_edit(result.wrapper.module, finding.fix)
    chosen = [f for f in chosen if f.fix is not None]
    if chosen:
        apply_fixes(result, [f.fix for f in chosen])
        if result.changed:
            result.applied = chosen
    return result


def tune_gc() -> None:
    """Collect garbage less often. The analysis allocates many short-lived objects (ast
    nodes) and almost no cycles, so the default thresholds only spend time: in an editor
    they doubled the slowest diagnostics (p95 145 -> 54 ms on a 1,000-line module)."""
    import gc

    gc.freeze()  # what was imported so far is never garbage
    gc.set_threshold(50_000, 20, 20)


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


def _dispatch(source, passes, skip=frozenset()) -> None:
    """Hand every candidate node, in source order, to the passes' ``visit_<Type>`` methods,
    except those in the top-level statements of ``skip``."""
    from codemod.rules.base import InplacePass
    from codemod.analysis.source import source_order

    table: dict = {}
    for p in passes:
        for cls in type(p).__mro__:
            if cls is InplacePass:
                break
            for name in vars(cls):
                if name.startswith("visit_"):
                    table.setdefault(getattr(ast, name[len("visit_"):]), []).append(getattr(p, name))
    nodes = [n for t, found in source.candidates.items() if t in table for n in found]
    if skip:
        from codemod.engine.incremental import top_level

        nodes = [n for n in nodes if top_level(source, n) not in skip]
    nodes.sort(key=source_order)
    for node in nodes:
        for method in table[type(node)]:
            method(node)


def apply_fixes(result: FileResult, fixes: list) -> None:
    """Apply ``fixes`` (of ``result``'s findings, or made for its tree) in one traversal."""
    from codemod.fixes import apply as fixing

    try:
        fixed, fixed_bytes = fixing.apply_fixes(result.wrapper.module, fixes, result.path)
    except SyntaxError as exc:  # a bug of ours: never write it
        result.error = FileError(f"internal error: the fixed code does not parse ({exc.msg})")
        return
    if fixed != result.original:
        result.fixed, result.fixed_bytes = fixed, fixed_bytes
