"""The per-file engine: read, screen, parse once, run the passes, apply fixes, return data.

Front ends (CLI, JSON, editors) call :func:`process_source` or :func:`process_path` and only
render the :class:`FileResult` they get back. Nothing here imports torch.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
from typing import Optional

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.metadata import MetadataWrapper

from .config import Settings
from .fileio import read_source, write_atomic
from .findings import Edit, Finding, Span
from .judgement import Judge
from .passes import all_passes
from .passes.base import FixApplier, InplacePass, hazard_code
from .suppression import is_suppressed, suppressions

# A file that never names torch holds no tensor we could know about: skip it unparsed.
SCREEN = b"torch"


def has_candidates(data: bytes) -> bool:
    """A quick screen with CPython's ``ast`` (about 10x faster than libcst): could any pass
    report anything here? Errs on the side of yes; a file that ``ast`` cannot read goes on to
    libcst, which reports it properly."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.AugAssign):
            return True
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) for t in node.targets):
            return True
        if isinstance(node, ast.Call):
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
    wrapper: Optional[MetadataWrapper] = None  # the parsed file the findings point into
    cell_diffs: list = dataclasses.field(default_factory=list)  # notebooks: (cell, before, after)
    skipped_parts: list = dataclasses.field(default_factory=list)  # FileErrors of cells left alone

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
) -> FileResult:
    """Find (and with ``fix``, apply) in-place rewrites in one file's bytes."""
    result = FileResult(path)
    if SCREEN not in data or not has_candidates(data):
        return result
    try:
        module = cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        result.error = FileError(f"cannot parse: {exc.message}", exc.raw_line, exc.raw_column)
        return result
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        result.error = FileError(f"cannot decode: {exc}")
        return result
    result.original = module.code
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)  # freshly parsed: no copy needed
    result.wrapper = wrapper
    judge = Judge(wrapper, assume_same_dtype=settings.assume_same_dtype)
    context = CodemodContext(filename=path, wrapper=wrapper)
    table = suppressions(module.code)
    passes = [
        cls(context, judge, apply_fixes=False) for cls in all_passes()
        if settings.selects(cls.CODE) or settings.selects(hazard_code(cls.CODE))
    ]
    wrapper.module.visit(_Fanout(passes))
    for visitor in passes:
        result.findings.extend(
            f for f in visitor.findings
            if settings.selects(f.code) and not is_suppressed(table, f.code, f.span.line, f.span.end_line)
        )
    result.findings.sort(key=lambda f: (f.span.line, f.span.column, f.code))
    if edits:
        for finding in result.findings:
            if finding.fix is not None:
                finding.edit = single_edit(wrapper.module, finding)
    if fix:
        chosen = [f for f in result.findings if f.applies(settings.unsafe_fixes)]
        if chosen:
            apply_fixes(result, [f.fix for f in chosen])
            if result.changed:
                result.applied = chosen
    return result


def apply_fixes(result: FileResult, fixes: list) -> None:
    """Apply ``fixes`` (of ``result``'s findings, or made for its tree) in one traversal."""
    fixed_module = result.wrapper.module.visit(FixApplier(fixes))
    fixed = fixed_module.code
    try:
        ast.parse(fixed, filename=result.path)
    except SyntaxError as exc:  # a bug of ours: never write it
        result.error = FileError(f"internal error: the fixed code does not parse ({exc.msg})")
        return
    if fixed != result.original:
        result.fixed, result.fixed_bytes = fixed, fixed_module.bytes


class _Fanout(cst.CSTVisitor):
    """One read-only walk that calls the ``visit_*`` methods of every pass.

    In the engine the passes only report (their fixes are applied later, together), so there
    is no need for one rebuilding transformer walk per pass.
    """

    def __init__(self, passes) -> None:
        super().__init__()
        self._table: dict = {}
        for p in passes:
            for cls in type(p).__mro__:
                if cls is InplacePass:
                    break
                for name in vars(cls):
                    if name.startswith("visit_"):
                        self._table.setdefault(name[len("visit_"):], []).append(getattr(p, name))

    def on_visit(self, node: cst.CSTNode) -> bool:
        for method in self._table.get(type(node).__name__, ()):
            method(node)
        return True


def single_edit(module: cst.Module, finding: Finding) -> Edit:
    """The smallest text replacement that applies this one fix to the original text."""
    before = module.code
    after = module.visit(FixApplier([finding.fix])).code
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    end_b, end_a = len(before), len(after)
    while end_b > start and end_a > start and before[end_b - 1] == after[end_a - 1]:
        end_b -= 1
        end_a -= 1
    # Whole lines read better in an editor's preview than a few changed characters.
    start = before.rfind("\n", 0, start) + 1
    line_end = before.find("\n", end_b)
    grow = (len(before) if line_end < 0 else line_end) - end_b
    return Edit(_span(before, start, end_b + grow), after[start:end_a + grow])


def _span(text: str, start: int, end: int) -> Span:
    def line_col(offset: int):
        line = text.count("\n", 0, offset) + 1
        return line, offset - (text.rfind("\n", 0, offset) + 1)

    (l1, c1), (l2, c2) = line_col(start), line_col(end)
    return Span(l1, c1, l2, c2)


def process_path(path: str, settings: Settings, fix: bool, write: bool, edits: bool,
                 cache_dir: Optional[str] = None) -> FileResult:
    """Read, process and (with ``write``) atomically rewrite one file."""
    p = pathlib.Path(path)
    try:
        data = read_source(p)
    except OSError as exc:
        return FileResult(path, error=FileError(f"cannot read: {exc.strerror or exc}"))
    cache = key = None
    if cache_dir is not None:
        from .cache import Cache, cache_key

        cache, key = Cache(pathlib.Path(cache_dir)), cache_key(data, path, settings, fix, edits)
        hit = cache.get(key)
        if hit is not None:
            return FileResult(path, findings=hit["findings"])
    try:
        if path.endswith(".ipynb"):
            from .notebook import process_notebook

            result = process_notebook(data, path, settings, fix=fix, edits=edits)
        else:
            result = process_source(data, path, settings, fix=fix, edits=edits)
    except Exception as exc:  # a bug of ours must cost one file, not the run
        return FileResult(path, error=FileError(f"internal error: {type(exc).__name__}: {exc}"))
    if write and result.changed and result.error is None:
        try:
            write_atomic(p, result.fixed_bytes)
        except OSError as exc:
            result.error = FileError(f"cannot write: {exc.strerror or exc}")
    if cache is not None and not result.changed and not result.skipped_parts and result.error is None:
        cache.put(key, result.findings)
    # Results may cross a process boundary: keep plain data only.
    result.fixed_bytes = result.wrapper = None
    for finding in result.findings:
        finding.fix = None
    return result
