"""Rendering results: the text lines, the JSON document, unified diffs and summaries.

JSON schema (``--output-format json``), version 1::

    {"version": 1, "tool": "inplacefix",
     "findings": [{
        "filename": str, "cell": null | int (notebooks: the cell, counted from 1; location,
        end_location and edits are then relative to that cell's source),
        "code": "IPF001", "rule": "augmented-assignment", "message": str,
        "url": str (the rule's documentation page),
        "status": "safe" | "unsafe" | "manual" | "skipped",
        "reason": null | str, "reason_text": null | str,
        "location": {"row": int, "column": int},        # 1-based row and column (characters)
        "end_location": {"row": int, "column": int},
        "fix": null | {"applicability": "safe" | "unsafe", "message": str,
                       "edits": [{"content": str, "location": {...}, "end_location": {...}}]}
     }],
     "errors": [{"filename": str, "message": str, "location": {"row": int, "column": int}}]}

An edit replaces the text from ``location`` up to ``end_location`` (exclusive) of the file as it
was read; ``findings`` are sorted by file and position.
"""

from __future__ import annotations

import json
from typing import Iterable

from codemod.engine.diffs import unified_diff
from codemod.findings import REASONS, Finding, Status
from codemod.rules.registry import code_url, rule_name, table

MARKS = {Status.SAFE: "[*] ", Status.UNSAFE: "[unsafe] ", Status.MANUAL: "", Status.SKIPPED: "[skipped] "}


def text_line(path: str, f: Finding) -> str:
    reason = f" ({f.reason}: {REASONS[f.reason]})" if f.reason else ""
    where = f"{path}:cell {f.cell}" if f.cell is not None else path
    return f"{where}:{f.span.line}:{f.span.column + 1}: {f.code} {MARKS[f.status]}{f.message}{reason}"


def _loc(line: int, column: int) -> dict:
    return {"row": line, "column": column + 1}


def finding_json(path: str, f: Finding) -> dict:
    fix = None
    if f.fix_title is not None and f.status in (Status.SAFE, Status.UNSAFE):
        edits = []
        if f.edit is not None:
            s = f.edit.span
            edits.append({
                "content": f.edit.content,
                "location": _loc(s.line, s.column),
                "end_location": _loc(s.end_line, s.end_column),
            })
        fix = {"applicability": f.status.value, "message": f.fix_title, "edits": edits}
    return {
        "filename": path,
        "cell": f.cell,
        "code": f.code,
        "rule": rule_name(f.code),
        "url": code_url(f.code),
        "message": f.message,
        "status": f.status.value,
        "reason": f.reason,
        "reason_text": REASONS.get(f.reason) if f.reason else None,
        "location": _loc(f.span.line, f.span.column),
        "end_location": _loc(f.span.end_line, f.span.end_column),
        "fix": fix,
    }


def json_document(results: Iterable, show_skipped: bool) -> str:
    findings, errors = [], []
    for r in results:
        for f in r.findings:
            if show_skipped or f.status is not Status.SKIPPED:
                findings.append(finding_json(r.path, f))
        for error in ([r.error] if r.error is not None else []) + r.skipped_parts:
            errors.append({"filename": r.path, "message": error.message,
                           "location": _loc(error.line, error.column)})
    return json.dumps(
        {"version": 1, "tool": "inplacefix", "findings": findings, "errors": errors}, indent=2
    )


def result_diff(result) -> bytes:
    """The review diff of one file, in the file's own encoding (what ``git apply`` matches):
    per cell for notebooks."""
    if result.cell_diffs:
        from codemod.engine.notebook import cell_diff

        return "".join(cell_diff(result.path, n, a, b) for n, a, b in result.cell_diffs).encode("utf-8")
    from codemod.encoding import source_encoding

    diff = unified_diff(result.path, result.original, result.fixed)
    try:  # in the declared encoding (its cookie is ASCII); a BOM is not in the text any more
        encoding = source_encoding(result.original.encode("utf-8", "surrogateescape"))
        return diff.encode("utf-8" if encoding == "utf-8-sig" else encoding, "surrogateescape")
    except (UnicodeEncodeError, LookupError, SyntaxError):  # (a path the encoding has no letters for)
        return diff.encode("utf-8", "surrogateescape")


def _plural(n: int, word: str, plural: str = "") -> str:
    return f"{n} {word if n == 1 else plural or word + 's'}"


def check_summary(findings: list, unsafe_fixes: bool) -> str:
    counted = [f for f in findings if f.counts]
    if not counted:
        return "No in-place rewrites needed."
    safe = sum(f.status is Status.SAFE for f in counted)
    unsafe = sum(f.status is Status.UNSAFE for f in counted)
    manual = sum(f.status is Status.MANUAL for f in counted)
    parts = [f"{safe} fixable with `inplacefix fix`"]
    if unsafe:
        parts.append(f"{unsafe} more with `--unsafe-fixes`" if not unsafe_fixes else f"{unsafe} unsafe, fixable")
    if manual:
        parts.append(f"{manual} to fix by hand")
    return f"Found {_plural(len(counted), 'finding')}: " + ", ".join(parts) + "."


def fix_summary(applied: int, files: int, remaining: list, would: bool, unsafe_fixes: bool) -> str:
    verb = "Would fix" if would else "Fixed"
    text = f"{verb} {_plural(applied, 'finding')} in {_plural(files, 'file')}."
    unsafe = sum(f.status is Status.UNSAFE for f in remaining)
    manual = sum(f.status is Status.MANUAL for f in remaining)
    notes = []
    if unsafe:
        notes.append(f"{_plural(unsafe, 'unsafe fix', 'unsafe fixes')} not applied (rerun with `--unsafe-fixes`)")
    if manual:
        notes.append(f"{manual} to fix by hand (see `inplacefix check`)")
    return text + (" " + "; ".join(notes) + "." if notes else "")


def snapshot(name: str, findings: list) -> str:
    """The findings of one file as a fixture records them: every finding (skipped ones too),
    with the fix it offers."""
    lines = []
    for f in findings:
        lines.append(text_line(name, f))
        if f.fix_title is not None and f.status in (Status.SAFE, Status.UNSAFE):
            lines.append(f"    fix ({f.status.value}): {f.fix_title}")
    return "\n".join(lines) + ("\n" if lines else "")


def sarif_document(results: Iterable, show_skipped: bool = False) -> str:
    """SARIF 2.1.0, for code-scanning UIs: hazards are warnings, other candidates notes.

    A notebook finding's region is relative to its cell, named in ``properties.cell`` and in
    the message. Columns count characters (code points), as our spans do, and the run says so
    (``columnKind``): without it a viewer assumes utf-16 units and is off after an emoji.
    """
    from codemod import __version__

    rules = [
        {"id": code, "name": name, "shortDescription": {"text": name.replace("-", " ")},
         "helpUri": code_url(code),
         "defaultConfiguration": {"level": "warning" if code.startswith("IPF1") else "note"}}
        for code, name in ((code, info.name) for code, info in table().items())
    ]
    out, notes = [], []
    for r in results:
        for f in r.findings:
            if f.status is Status.SKIPPED and not show_skipped:
                continue
            text = f.message + (f" ({f.reason}: {REASONS[f.reason]})" if f.reason else "")
            if f.cell is not None:
                text = f"cell {f.cell}: {text}"
            item = {
                "ruleId": f.code,
                "level": "warning" if f.code.startswith("IPF1") else "note",
                "message": {"text": text},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": r.path.removeprefix("./")},
                    "region": {"startLine": f.span.line, "startColumn": f.span.column + 1,
                               "endLine": f.span.end_line, "endColumn": f.span.end_column + 1},
                }}],
                "properties": {"status": f.status.value, "reason": f.reason},
            }
            if f.cell is not None:
                item["properties"]["cell"] = f.cell
            out.append(item)
        for error in ([r.error] if r.error is not None else []) + r.skipped_parts:
            notes.append({"level": "error", "message": {"text": error.message},
                          "locations": [{"physicalLocation": {"artifactLocation": {"uri": r.path.removeprefix("./")},
                                         "region": {"startLine": max(error.line, 1),
                                                    "startColumn": error.column + 1}}}]})
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "inplacefix", "version": __version__, "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "invocations": [{"executionSuccessful": not notes, "toolExecutionNotifications": notes}],
            "results": out,
        }],
    }
    return json.dumps(doc, indent=2)
