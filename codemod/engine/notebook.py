"""Jupyter notebooks: the code cells of an ``.ipynb`` are checked and fixed as one program.

Cells are joined in order, each behind a marker statement, so names defined in one cell are
known in the next (tensor-or-not and alias judgements work across cells). IPython syntax
(``%magic``, ``!shell``, ``?help``) is masked by a ``pass`` line of the same indentation and put
back byte for byte; a cell that starts with a cell magic (``%%bash``) is not Python and is left
alone, and so is a cell that does not parse (it is reported). Findings name the cell (counted
from 1 over all cells, as Jupyter shows them) and the line within it.

Writing changes only the ``source`` of the cells that were fixed. Notebooks are JSON; the
notebook is re-serialised with the exact layout it was read with (indentation, key order,
escaping), which is checked first by reproducing the original bytes; a notebook whose layout
cannot be reproduced is reported and left untouched rather than reformatted. (``nbformat``
normalises on write, so it cannot promise that.)
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import re
from typing import List, Optional

import libcst as cst

from codemod.config import Settings
from codemod.engine.pipeline import FileError, FileResult, process_source
from codemod.findings import Edit, Span

MARKER = "__inplacefix_cell__({})"
_MARKER_LINE = re.compile(r"^__inplacefix_cell__\((\d+)\)$")
PLACEHOLDER = "pass  # __inplacefix_ipython__"
_IPYTHON_LINE = re.compile(r"^\s*(%|!|\?)|\?\s*$|^\s*[A-Za-z_][\w.]*\s*=\s*(!|%)")


@dataclasses.dataclass
class Cell:
    index: int  # position among all cells (0-based)
    source: str
    as_list: bool  # the JSON held the source as a list of lines
    masked: List[str] = dataclasses.field(default_factory=list)  # the IPython lines, in order

    @property
    def number(self) -> int:
        return self.index + 1


def _source_text(cell: dict) -> tuple:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(source), True
    return source, False


def _mask(cell: Cell) -> List[str]:
    lines = []
    for line in cell.source.split("\n"):
        if _IPYTHON_LINE.search(line):
            cell.masked.append(line)
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(indent + PLACEHOLDER)
        else:
            lines.append(line)
    return lines


def _parses(lines: List[str]) -> bool:
    try:
        cst.parse_module("\n".join(lines) + "\n")
        return True
    except Exception:
        return False


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
        raw_cells = nb["cells"]
    except (UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        result.error = FileError(f"cannot read the notebook: {exc}")
        return result
    result.original = text
    cells = []
    for index, raw in enumerate(raw_cells):
        if raw.get("cell_type") == "code":
            source, as_list = _source_text(raw)
            cells.append(Cell(index, source, as_list))
    inner, analysed = analyse_cells(cells, path, settings, result, fix=fix, edits=edits)
    if inner is not None and fix and inner.changed:
        _write_back(result, nb, text, analysed, inner.fixed)
    return result


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
        lines = _mask(cell)
        if not _parses(lines):
            bad.append(cell)
            continue
        analysed.append(cell)
        program.append(MARKER.format(cell.index))
        starts[cell.index] = len(program)  # the program line just before the cell's line 1
        program.extend(lines)
    result.skipped_parts = [FileError(f"cell {cell.number} cannot be parsed; left alone") for cell in bad]
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

    for finding in inner.findings:
        cell_index, offset = _cell_of(by_line, finding.span.line)
        finding.cell = cell_index + 1
        finding.message = re.sub(r"\bline (\d+)", where, finding.message)
        finding.span = _shift(finding.span, offset)
        if finding.edit is not None:
            finding.edit = Edit(_shift(finding.edit.span, offset), finding.edit.content)
        result.findings.append(finding)
    result.applied = inner.applied
    return inner, analysed


def _cell_of(by_line, line: int) -> tuple:
    current = by_line[0]
    for index, start in by_line:
        if start < line:
            current = (index, start)
    return current


def _shift(span: Span, offset: int) -> Span:
    return Span(span.line - offset, span.column, span.end_line - offset, span.end_column)


def _split(fixed: str) -> dict:
    """Cell index -> its new lines, from the fixed program."""
    out, current = {}, None
    for line in fixed.split("\n"):
        match = _MARKER_LINE.match(line)
        if match:
            current = int(match.group(1))
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def _write_back(result: FileResult, nb: dict, text: str, cells: List[Cell], fixed: str) -> None:
    layout = _layout(text, nb)
    new_lines = _split(fixed)
    changed = []
    for cell in cells:
        lines = new_lines.get(cell.index, [])
        masked = iter(cell.masked)
        restored = [next(masked) if line.strip() == PLACEHOLDER else line for line in lines]
        source = "\n".join(restored)
        if not cell.source.endswith("\n"):
            source = source.rstrip("\n") if source.endswith("\n") else source
        # the program ends every cell with the newline that joins it to the next one
        if cell.source.endswith("\n") and not source.endswith("\n"):
            source += "\n"
        if source != cell.source:
            changed.append((cell, source))
    if not changed:
        return
    if layout is None:
        result.error = FileError("the notebook's JSON layout cannot be reproduced exactly; "
                                 "not rewritten (fix the cells by hand or re-save the notebook)")
        return
    for cell, source in changed:
        raw = nb["cells"][cell.index]
        raw["source"] = source.splitlines(keepends=True) if cell.as_list else source
    newline = layout.pop("newline")
    result.fixed = json.dumps(nb, **layout) + newline
    result.fixed_bytes = result.fixed.encode("utf-8")
    result.cell_diffs = [(cell.number, cell.source, source) for cell, source in changed]


def cell_diff(path: str, number: int, before: str, after: str) -> str:
    name = f"{path.lstrip('/')}:cell {number}"
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
