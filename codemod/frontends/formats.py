"""``--output-format``: the shapes findings are printed in, following Ruff's where it has one.

- ``concise``: one line per finding (``path:row:col: CODE [*] message``); ``text`` is its old name.
- ``full``: that line, the source lines it covers with carets under the range, and the fix.
- ``json``: the document of :func:`codemod.frontends.report.json_document`.
- ``json-lines``: one finding per line, the objects of ``json``'s ``findings`` (errors follow,
  with ``"code": null``).
- ``github``: GitHub Actions workflow commands (annotations on the pull request).
- ``gitlab``: GitLab Code Quality JSON (a fingerprint per finding).
- ``junit``: JUnit XML, one test suite per file, one failed test case per finding.
- ``sarif``: SARIF 2.1.0 (:func:`codemod.frontends.report.sarif_document`).

Skipped candidates (``--show-skipped``) appear in every format; elsewhere they are left out.
"""

from __future__ import annotations

import collections
import enum
import hashlib
import json
import os
import pathlib
import re
from typing import Iterable, List, Optional

from codemod.findings import REASONS, Status
from codemod.frontends.report import MARKS, finding_json, json_document, sarif_document, text_line
from codemod.rules.registry import code_url, rule_name


class OutputFormat(str, enum.Enum):
    concise = "concise"
    full = "full"
    json = "json"
    json_lines = "json-lines"
    github = "github"
    gitlab = "gitlab"
    junit = "junit"
    sarif = "sarif"
    text = "text"  # the old name of concise (``--format text``)


MACHINE = {OutputFormat.json, OutputFormat.json_lines, OutputFormat.gitlab, OutputFormat.junit,
           OutputFormat.sarif}


def _shown(results: Iterable, show_skipped: bool):
    for r in results:
        for f in r.findings:
            if show_skipped or f.status is not Status.SKIPPED:
                yield r, f


def _errors(r) -> list:
    return ([r.error] if r.error is not None else []) + list(r.skipped_parts)


def render(fmt: OutputFormat, results: list, *, show_skipped: bool = False, show_fixes: bool = False) -> str:
    """What ``check`` prints on standard output for ``results`` (empty: nothing)."""
    if fmt is OutputFormat.json:
        return json_document(results, show_skipped) + "\n"
    if fmt is OutputFormat.sarif:
        return sarif_document(results, show_skipped) + "\n"
    if fmt is OutputFormat.json_lines:
        lines = [json.dumps(finding_json(r.path, f)) for r, f in _shown(results, show_skipped)]
        lines += [json.dumps({"filename": r.path, "code": None, "message": e.message,
                              "location": {"row": e.line, "column": e.column + 1}})
                  for r in results for e in _errors(r)]
        return "".join(line + "\n" for line in lines)
    if fmt is OutputFormat.github:
        lines = [_github(r.path, f) for r, f in _shown(results, show_skipped)]
        lines += [_github_error(r.path, e) for r in results for e in _errors(r)]
        return "".join(line + "\n" for line in lines)
    if fmt is OutputFormat.gitlab:
        return _gitlab(results, show_skipped) + "\n"
    if fmt is OutputFormat.junit:
        return _junit(results, show_skipped)
    out = []
    for r, f in _shown(results, show_skipped):
        out.append(text_line(r.path, f))
        if fmt is OutputFormat.full:
            out.extend(_context(r, f))
        elif show_fixes and f.fix_title is not None and f.status in (Status.SAFE, Status.UNSAFE):
            out.append(f"    fix ({f.status.value}): {f.fix_title}")
    return "".join(line + "\n" for line in out)


# -- full -------------------------------------------------------------------------------------

def _source_lines(r) -> Optional[List[str]]:
    text = r.original
    if text is None:
        try:
            text = pathlib.Path(r.path).read_bytes().decode("utf-8", "replace")
        except OSError:
            return None
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _context(r, f) -> List[str]:
    """The source lines of ``f`` with carets under its range (Ruff's ``full``), then its fix."""
    out: List[str] = []
    lines = _source_lines(r) if f.cell is None else None
    span = f.span
    if lines is not None and 1 <= span.line <= len(lines):
        last = min(span.end_line, len(lines), span.line + 5)
        width = len(str(last))
        out.append(f"{'':>{width}} |")
        for number in range(span.line, last + 1):
            text = lines[number - 1]
            out.append(f"{number:>{width}} | {text}")
            start = span.column if number == span.line else len(text) - len(text.lstrip())
            end = span.end_column if number == span.end_line else len(text)
            carets = "^" * max(end - start, 1)
            out.append(f"{'':>{width}} | {' ' * start}{carets}" + (f" {f.code}" if number == last else ""))
        out.append(f"{'':>{width}} |")
    if f.reason:
        out.append(f"  = note: {f.reason}: {REASONS[f.reason]}")
    if f.fix_title is not None and f.status in (Status.SAFE, Status.UNSAFE):
        out.append(f"  = help ({f.status.value} fix): {f.fix_title}")
    url = code_url(f.code)
    if url:
        out.append(f"  = docs: {url}")
    out.append("")
    return out


# -- github -----------------------------------------------------------------------------------

def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github(path: str, f) -> str:
    """A workflow command, as Ruff writes it: ``::error title=inplacefix (IPF101),file=...,line=..,
    col=..,endLine=..,endColumn=..::path:row:col: CODE message``."""
    s = f.span
    level = "error" if f.counts else "notice"
    where = f"{path}:cell {f.cell}" if f.cell is not None else path
    props = ",".join([
        f"title={_escape_property(f'inplacefix ({f.code})')}",
        f"file={_escape_property(os.path.abspath(path))}",
        f"line={s.line}", f"col={s.column + 1}", f"endLine={s.end_line}", f"endColumn={s.end_column + 1}",
    ])
    reason = f" ({f.reason}: {REASONS[f.reason]})" if f.reason else ""
    message = f"{where}:{s.line}:{s.column + 1}: {f.code} {MARKS[f.status]}{f.message}{reason}"
    return f"::{level} {props}::{_escape_data(message)}"


def _github_error(path: str, error) -> str:
    """A file the tool could not check, as an annotation too (``check`` exits 2)."""
    props = ",".join([f"title={_escape_property('inplacefix error')}",
                      f"file={_escape_property(os.path.abspath(path))}",
                      f"line={max(error.line, 1)}", f"col={error.column + 1}"])
    return f"::error {props}::{_escape_data(f'{path}:{error.line}:{error.column + 1}: {error.message}')}"


# -- gitlab -----------------------------------------------------------------------------------

# "line 6", "lines 3 and 7", "(line 12)": the positions messages name, which move with the code.
_LINE_NUMBERS = re.compile(r"\b(lines?|cell|cells) \d+(?:(?:, | and | to |-)\d+)*")


def fingerprint_message(message: str) -> str:
    """``message`` without the line numbers it names (``at line 6`` -> ``at line #``): a finding
    keeps its fingerprint when lines are added or removed above it."""
    return _LINE_NUMBERS.sub(lambda m: m.group(1) + " #", message)


def _gitlab(results: list, show_skipped: bool) -> str:
    """GitLab Code Quality: paths relative to ``CI_PROJECT_DIR`` (else the current folder); the
    fingerprint hashes the path, code, the message without the line or cell numbers it names, and
    the occurrence number of that key (never a position or a cell number: moving code, or adding a
    notebook cell above, keeps fingerprints)."""
    base = os.environ.get("CI_PROJECT_DIR") or os.getcwd()
    seen: collections.Counter = collections.Counter()
    out = []
    for r, f in _shown(results, show_skipped):
        try:
            path = os.path.relpath(os.path.abspath(r.path), base)
        except ValueError:  # another drive
            path = r.path
        path = pathlib.Path(path).as_posix()
        key = (path, f.code, fingerprint_message(f.message))
        seen[key] += 1
        digest = hashlib.sha256(json.dumps([*key, seen[key]]).encode()).hexdigest()
        description = f"{f.code}: {f.message}" + (f" (cell {f.cell})" if f.cell is not None else "")
        out.append({
            "check_name": f.code,
            "description": description,
            "severity": "major" if f.code.startswith("IPF1") else ("info" if not f.counts else "minor"),
            "fingerprint": digest,
            "location": {"path": path, "positions": {
                "begin": {"line": f.span.line, "column": f.span.column + 1},
                "end": {"line": f.span.end_line, "column": f.span.end_column + 1},
            }},
        })
    return json.dumps(out, indent=2)


# -- junit ------------------------------------------------------------------------------------

def _junit(results: list, show_skipped: bool) -> str:
    """JUnit XML as Ruff writes it: a suite per file, a failed case per finding; a passing case
    when there is nothing to report (a report with no test reads as a broken run)."""
    import xml.etree.ElementTree as ET

    by_file: dict = {}
    for r, f in _shown(results, show_skipped):
        by_file.setdefault(r.path, []).append(f)
    errors = [(r.path, e) for r in results for e in _errors(r)]
    total = sum(len(v) for v in by_file.values())
    root = ET.Element("testsuites", name="inplacefix", tests=str(total + len(errors) or 1),
                      failures=str(total), errors=str(len(errors)))
    for path, findings in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(findings)), disabled="0",
                              errors="0", failures=str(len(findings)), package="org.inplacefix")
        classname = path[:-3] if path.endswith(".py") else path
        for f in findings:
            case = ET.SubElement(suite, "testcase", name=f"org.inplacefix.{f.code}", classname=classname,
                                 line=str(f.span.line), column=str(f.span.column + 1))
            where = f"cell {f.cell}, " if f.cell is not None else ""
            failure = ET.SubElement(case, "failure", message=f.message)
            failure.text = f"{where}line {f.span.line}, col {f.span.column + 1}, {f.code} " \
                           f"({rule_name(f.code)}): {f.message}"
    if errors:
        suite = ET.SubElement(root, "testsuite", name="inplacefix errors", tests=str(len(errors)), disabled="0",
                              errors=str(len(errors)), failures="0", package="org.inplacefix")
        for path, e in errors:
            case = ET.SubElement(suite, "testcase", name="org.inplacefix.error", classname=path,
                                 line=str(e.line), column=str(e.column + 1))
            ET.SubElement(case, "error", message=e.message).text = f"{path}:{e.line}:{e.column + 1}: {e.message}"
    if not total and not errors:
        suite = ET.SubElement(root, "testsuite", name="inplacefix", tests="1", disabled="0", errors="0",
                              failures="0", package="org.inplacefix")
        ET.SubElement(suite, "testcase", name="No errors found")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# -- statistics -------------------------------------------------------------------------------

def statistics(results: list, fmt: OutputFormat, show_skipped: bool = False) -> str:
    """``--statistics``: how many findings of each code, most first (Ruff's shape: count, code,
    ``[*]`` when some have a fix, name); a JSON list with ``--output-format json``."""
    counts: collections.Counter = collections.Counter()
    fixable: set = set()
    for _, f in _shown(results, show_skipped):
        counts[f.code] += 1
        if f.fixable and f.status in (Status.SAFE, Status.UNSAFE):
            fixable.add(f.code)
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if fmt in MACHINE:
        return json.dumps([{"code": c, "name": rule_name(c), "count": n, "fixable": c in fixable}
                           for c, n in rows], indent=2) + "\n"
    width = max((len(str(n)) for _, n in rows), default=1)
    return "".join(f"{n:>{width}}\t{c}\t{'[*] ' if c in fixable else ''}{rule_name(c)}\n" for c, n in rows)
