"""Jupyter notebooks: the code cells of an ``.ipynb`` are checked and fixed as one program.

Cells are joined in order, each behind a marker statement, so names defined in one cell are
known in the next (tensor-or-not and alias judgements work across cells). IPython syntax
(``%magic``, ``!shell``, ``x = !ls``, ``obj?``) is masked by a ``pass`` line of the same
indentation and put back byte for byte. It is looked for only where CPython stops: a line is
IPython only if the cell does not parse there, so ``h += 1  # right?`` or a continuation line
starting with ``%`` stay Python. A cell that starts with a cell magic (``%%bash``) is not
Python and is left alone, and so is a cell that does not parse (it is reported). A notebook of
another language (its kernelspec or language_info says R, Julia...) is skipped with a notice.
nbformat 3 notebooks (cells in worksheets, code in ``input``) are read and written too.
Findings name the cell (counted from 1 over all cells, as Jupyter shows them) and the line
within it.

Writing changes only the ``source`` of the cells that were fixed. Notebooks are JSON; the
notebook is re-serialised with the exact layout it was read with (indentation, key order,
escaping), which is checked first by reproducing the original bytes; a notebook whose layout
cannot be reproduced is reported and left untouched rather than reformatted. (``nbformat``
normalises on write, so it cannot promise that.)
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
import re
import warnings
from typing import List, NamedTuple, Optional, Tuple

from codemod.config import Settings
from codemod.engine.diffs import patch_lines
from codemod.engine.pipeline import FileError, FileResult, process_source
from codemod.findings import Edit, Span

MARKER = "__inplacefix_cell__({})"
_MARKER_LINE = re.compile(r"^__inplacefix_cell__\((\d+)\)$")
PLACEHOLDER = "pass  # __inplacefix_ipython__"
# IPython's line syntax, matched only on a line where CPython stopped: escapes (%magic, !shell,
# ?help, and doubled), `x = !cmd` / `x = %magic`, and help after a name (`obj?`, `a.b??`).
_IPYTHON_LINE = re.compile(
    r"^\s*(?:[%!?]|[A-Za-z_][\w.]*\s*=\s*[!%]|%{0,2}[\w*]+(?:\.[\w*]+|\[\d+\])*\?\??\s*(?:#.*)?$)")


@dataclasses.dataclass
class Cell:
    index: int  # position among all cells (0-based)
    source: str
    as_list: bool  # the JSON held the source as a list of lines
    masked: List[str] = dataclasses.field(default_factory=list)  # the IPython lines, in order
    lines: List[str] = dataclasses.field(default_factory=list)  # its lines as analysed (IPython masked)
    raw: Optional[dict] = None  # the cell's JSON object, where the fixed source is written
    key: str = "source"  # its code's key ("input" in nbformat 3)

    @property
    def number(self) -> int:
        return self.index + 1


class Masked(NamedTuple):
    lines: List[str]  # the cell's lines, IPython ones replaced by placeholders
    masked: List[str]  # the lines replaced, in order
    parses: bool  # whether the masked cell is Python


class NotebookError(ValueError):
    """A notebook that cannot be read: its message is reported for the file."""


def _syntax_error(text: str) -> Optional[SyntaxError]:
    """CPython's error for ``text``, None if it parses."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(text, "<cell>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as exc:
            return exc
        except (ValueError, RecursionError, MemoryError) as exc:  # null bytes, too deep
            return SyntaxError(str(exc))
    return None


def mask_ipython(source: str) -> Masked:
    """Mask the IPython lines of a cell: a line is one only where CPython stops (so a `?` in a
    comment or a continuation line starting with `%` stays Python). Lines continued with a
    backslash are masked with the line they continue."""
    lines = source.split("\n")
    masked: dict = {}  # row -> original line
    for _ in range(len(lines) + 1):
        error = _syntax_error("\n".join(lines))
        if error is None:
            return Masked(lines, [masked[row] for row in sorted(masked)], True)
        row = (error.lineno or 0) - 1
        if not 0 <= row < len(lines) or row in masked or not _IPYTHON_LINE.match(lines[row]):
            break
        indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
        end = row
        while lines[end].endswith("\\") and end + 1 < len(lines):
            end += 1
        for r in range(row, end + 1):
            masked[r] = lines[r]
            lines[r] = indent + PLACEHOLDER
    return Masked(lines, [masked[row] for row in sorted(masked)], False)


def _layout(text: str, nb: dict) -> Optional[dict]:
    """The json.dumps arguments that reproduce ``text`` exactly, if any."""
    newline = "\n" if text.endswith("\n") else ""
    for indent in (1, 2, 4, None):
        for sort_keys in (True, False):
            for ensure_ascii in (False, True):
                kwargs = dict(indent=indent, sort_keys=sort_keys, ensure_ascii=ensure_ascii)
                if json.dumps(nb, **kwargs) + newline == text:
                    return {**kwargs, "newline": newline}
    return None


def process_notebook(data: bytes, path: str, settings: Settings, *, fix: bool = False,
                     edits: bool = False) -> FileResult:
    """Check (and with ``fix``, rewrite) an ``.ipynb`` file's bytes."""
    result = FileResult(path)
    try:
        text = data.decode("utf-8")
        nb = json.loads(text)
        language = _language(nb)
        cells = _code_cells(nb)
    except json.JSONDecodeError as exc:
        result.error = FileError(f"cannot read the notebook: not JSON: {exc.msg}", exc.lineno, exc.colno - 1)
        return result
    except (UnicodeDecodeError, NotebookError) as exc:
        result.error = FileError(f"cannot read the notebook: {exc}")
        return result
    result.original = text
    if language is not None and not _is_python(language):
        result.notices.append(f"not a Python notebook (language: {language}); skipped")
        return result
    inner, analysed = analyse_cells(cells, path, settings, result, fix=fix, edits=edits)
    if inner is not None and fix and inner.changed:
        _write_back(result, nb, text, analysed, inner.fixed)
    return result


def _language(nb) -> Optional[str]:
    """The notebook's language, from language_info or the kernelspec (None if not said)."""
    if not isinstance(nb, dict):
        raise NotebookError("the top level is not a JSON object")
    metadata = nb.get("metadata", {})
    if not isinstance(metadata, dict):
        raise NotebookError("`metadata` is not an object")
    for key, field in (("language_info", "name"), ("kernelspec", "language")):
        table = metadata.get(key, {})
        if not isinstance(table, dict):
            raise NotebookError(f"`metadata.{key}` is not an object")
        if isinstance(table.get(field), str) and table[field]:
            return table[field]
    return metadata.get("language") if isinstance(metadata.get("language"), str) else None  # nbformat 3


def _is_python(language: str) -> bool:
    return language.lower() in ("python", "python2", "python3", "ipython", "ipython3")


def _code_cells(nb: dict) -> List[Cell]:
    """The code cells, numbered over all cells; nbformat 3 keeps them in worksheets, under `input`."""
    if "worksheets" in nb and "cells" not in nb:
        worksheets = nb["worksheets"]
        if not isinstance(worksheets, list) or not all(isinstance(w, dict) for w in worksheets):
            raise NotebookError("`worksheets` is not a list of objects")
        raw_cells = [cell for w in worksheets for cell in _cell_list(w.get("cells", []))]
        key = "input"
    elif "cells" in nb:
        raw_cells, key = _cell_list(nb["cells"]), "source"
    else:
        raise NotebookError("no `cells` (nor nbformat 3 `worksheets`)")
    cells = []
    for index, raw in enumerate(raw_cells):
        if not isinstance(raw, dict):
            raise NotebookError(f"cell {index + 1} is not an object")
        if raw.get("cell_type") != "code":
            continue
        source = raw.get(key, "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            cells.append(Cell(index, "".join(source), True, raw=raw, key=key))
        elif isinstance(source, str):
            cells.append(Cell(index, source, False, raw=raw, key=key))
        else:
            raise NotebookError(f"cell {index + 1}: `{key}` is not a string or a list of strings")
    return cells


def _cell_list(cells) -> list:
    if not isinstance(cells, list):
        raise NotebookError("`cells` is not a list")
    return cells


def analyse_cells(cells: List[Cell], path: str, settings: Settings, result: FileResult, *,
                  fix: bool = False, edits: bool = False):
    """Analyse code cells as one program; findings go to ``result`` with cell coordinates.

    Returns the analysis of the joined program (None if no cell could be analysed) and the
    cells that were part of it.
    """
    analysed, program, starts, bad = [], [], {}, []
    for cell in cells:
        if cell.source.lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        lines, cell.masked, parses = mask_ipython(cell.source)
        if not parses:
            bad.append(cell)
            continue
        analysed.append(cell)
        cell.lines = lines
        program.append(MARKER.format(cell.index))
        starts[cell.index] = len(program)  # the program line just before the cell's line 1
        program.extend(lines)
    result.skipped_parts = [_cell_error(cell) for cell in bad]
    if not analysed:
        return None, analysed
    joined = "\n".join(program) + "\n"
    inner = process_source(joined.encode("utf-8"), path, settings, fix=fix, edits=edits)
    if inner.error is not None:
        result.error = inner.error
        return None, analysed
    by_line = sorted(starts.items(), key=lambda kv: kv[1])

    def where(match: re.Match) -> str:  # "line 15" of the joined program -> the cell's own
        index, offset = _cell_of(by_line, int(match.group(1)))
        return f"line {int(match.group(1)) - offset}" + ("" if index == cell_index else f" of cell {index + 1}")

    by_index = {cell.index: cell for cell in analysed}
    names = _Names(analysed)
    for finding in inner.findings:
        cell_index, offset = _cell_of(by_line, finding.span.line)
        finding.cell = cell_index + 1
        finding.message = re.sub(r"\bline (\d+)", where, finding.message)
        finding.span = _shift(finding.span, offset)
        if finding.edit is not None:
            finding.edit = _cell_edit(joined, finding.edit, by_index[cell_index], analysed, names)
        result.findings.append(finding)
    result.applied = inner.applied
    return inner, analysed


def _cell_error(cell: Cell) -> FileError:
    """A cell left alone: CPython's error, at its line and column within the cell."""
    from codemod.engine.syntax_errors import syntax_error

    text = "\n".join(mask_ipython(cell.source).lines)
    failure = syntax_error(text.encode("utf-8"), _syntax_error(text) or SyntaxError("invalid syntax"))
    why = failure.message.removeprefix("cannot parse: ")
    return FileError(f"cell {cell.number} cannot be parsed: {why}; left alone", failure.line, failure.column)


def _cell_of(by_line, line: int) -> tuple:
    current = by_line[0]
    for index, start in by_line:
        if start < line:
            current = (index, start)
    return current


def _shift(span: Span, offset: int) -> Span:
    return Span(span.line - offset, span.column, span.end_line - offset, span.end_column)


def _split(fixed: str) -> Tuple[str, dict]:
    """The text a fix put before the first cell (an import it needs: ``import torch``), and
    cell index -> its new lines, from the fixed program (whose last newline ends the program,
    not the last cell). No marker is in either."""
    out: dict = {}
    current, prelude = None, []
    for line in fixed.removesuffix("\n").split("\n"):
        match = _MARKER_LINE.match(line)
        if match:
            current = int(match.group(1))
            out[current] = []
        elif current is not None:
            out[current].append(line)
        else:
            prelude.append(line)
    return "\n".join(prelude), out


def _restored(cell: Cell, lines: List[str]) -> str:
    """The cell's source from its analysed lines: the IPython lines put back."""
    masked = iter(cell.masked)
    return "\n".join(next(masked) if line.strip() == PLACEHOLDER else line for line in lines)


def _with_imports(lines: List[str], prelude: str, cell: Cell, earlier: set,
                  imported: set) -> Optional[List[str]]:
    """The fixed cell's lines with the imports its fix needs, where a cell's imports go (after
    its docstring and its own imports), each once: those a fix put at the top of the program
    (``prelude``), and modules a fix now names that only a later cell imports (the cells run
    in order: ``import torch`` in cell 5 is not there yet for cell 3; ``earlier``: the names
    the cells before it bind). None if ``prelude`` holds anything but plain imports, or the
    fixed cell is no Python on its own (neither should happen)."""
    names = []
    try:
        prelude_tree, new_tree = ast.parse(prelude), ast.parse("\n".join(lines))
    except SyntaxError:
        return None
    for stmt in prelude_tree.body:
        if not (isinstance(stmt, ast.Import) and all(alias.asname is None for alias in stmt.names)):
            return None
        names.extend(alias.name for alias in stmt.names)
    introduced = _loaded(new_tree) - _loaded(ast.parse("\n".join(cell.lines)))
    bound = earlier | _bound(new_tree)
    names.extend(sorted(n for n in introduced if n in imported and n not in bound))
    if not names:
        return lines
    import libcst

    from codemod.fixes.edits import ensure_import

    module = libcst.parse_module("\n".join(lines))
    for name in names:
        module = ensure_import(module, name)
    return module.code.split("\n")


def _loaded(tree: ast.Module) -> set:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _bound(tree: ast.Module) -> set:
    """Names a cell binds at its top level (what the next cells see)."""
    names: set = set()
    todo: list = list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif not isinstance(node, ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return names


def _module_imports(cells: List[Cell]) -> set:
    """Modules some cell imports by their own name (``import torch``)."""
    out = set()
    for cell in cells:
        for node in ast.parse("\n".join(cell.lines)).body:
            if isinstance(node, ast.Import):
                out.update(a.name for a in node.names if a.asname is None and "." not in a.name)
    return out


class _Names:
    """What the cells bind, read once (when a fix's edit is made): the modules some cell
    imports, and the names bound by the cells before each cell."""

    def __init__(self, cells: List[Cell]) -> None:
        self.cells = cells
        self._before: Optional[dict] = None
        self._imported: Optional[set] = None

    @property
    def imported(self) -> set:
        if self._imported is None:
            self._imported = _module_imports(self.cells)
        return self._imported

    def before(self, cell: Cell) -> set:
        if self._before is None:
            self._before, bound = {}, set()
            for other in self.cells:
                self._before[other.index] = set(bound)
                bound |= _bound(ast.parse("\n".join(other.lines)))
        return self._before[cell.index]


def _cell_edit(program: str, edit: Edit, cell: Cell, cells: List[Cell], names: _Names) -> Optional[Edit]:
    """A fix's edit of the joined program as an edit of its own cell (in the cell's lines and
    columns, on its real text): an import it needs goes into that cell. None (no edit offered)
    if it would change another cell."""
    from codemod.fixes.apply import apply_edit, text_edit

    prelude, new = _split(apply_edit(program, edit))
    for other in cells:
        if other is not cell and new.get(other.index) != other.lines:
            return None
    lines = _with_imports(new.get(cell.index, []), prelude, cell, names.before(cell), names.imported)
    if lines is None:
        return None
    return text_edit(cell.source, _restored(cell, lines))


def _write_back(result: FileResult, nb: dict, text: str, cells: List[Cell], fixed: str) -> None:
    layout = _layout(text, nb)
    prelude, new_lines = _split(fixed)
    imported = _module_imports(cells)
    changed, earlier = [], set()
    for cell in cells:
        lines = new_lines.get(cell.index, [])
        if lines != cell.lines:  # fixed: with the imports its fixes need
            lines = _with_imports(lines, prelude, cell, earlier, imported)
            if lines is None:
                result.error = FileError(f"internal error: the imports the fix of cell {cell.number} "
                                         "needs cannot be placed in it; the notebook is not rewritten")
                return
        earlier |= _bound(ast.parse("\n".join(lines)))
        source = _restored(cell, lines)  # the cell's lines, as they were joined into the program
        if source != cell.source:
            changed.append((cell, source))
    if not changed:
        return
    if layout is None:
        result.error = FileError("the notebook's JSON layout cannot be reproduced exactly; "
                                 "not rewritten (fix the cells by hand or re-save the notebook)")
        return
    for cell, source in changed:  # Jupyter's lines end at "\n" only (not at U+2028, "\f"...)
        cell.raw[cell.key] = patch_lines(source) if cell.as_list else source
    newline = layout.pop("newline")
    result.fixed = json.dumps(nb, **layout) + newline
    result.fixed_bytes = result.fixed.encode("utf-8")
    result.cell_diffs = [(cell.number, cell.source, source) for cell, source in changed]


def cell_diff(path: str, number: int, before: str, after: str) -> str:
    name = f"{path.lstrip('/')}:cell {number}"
    lines = difflib.unified_diff(patch_lines(before), patch_lines(after),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
