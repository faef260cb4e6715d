"""The ast-based analysis and where libcst comes in: screens, columns, per-statement edits.

The passes' behaviour is specified by the fixtures; these tests pin the machinery that makes
it fast without changing it: the text screen never hides a candidate, edits built from one
top-level statement equal those built from the whole file, a check never imports libcst.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.analysis.source import Source
from codemod.rules.registry import may_have_candidates

from .conftest import FIXTURES, ROOT

EVERYTHING = Settings(select=("ALL",), unsafe_fixes=True)
INPUTS = sorted(FIXTURES.rglob("*.py"))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_text_screen_never_hides_a_finding(path):
    data = path.read_bytes()
    if process_source(data, path.name, EVERYTHING).findings:
        assert may_have_candidates(data)


def test_text_screen_passes_over_files_without_candidates():
    assert not may_have_candidates(b"import torch\n\ndef f(x):\n    return torch.exp(x) == 1\n")
    assert may_have_candidates(b"import torch\nx[0] = 1\n")
    assert may_have_candidates(b"import torch\nnn.ReLU(True)\n")
    assert may_have_candidates("import torch\nπ = 1\n".encode())  # not ASCII: always parsed


def test_statement_edits_equal_whole_file_edits():
    compared = 0
    for path in INPUTS:
        data = path.read_bytes()
        per_statement = process_source(data, path.name, EVERYTHING, edits=True)
        whole_file = process_source(data, path.name, EVERYTHING, edits=True, build_fixes=True)
        for a, b in zip(per_statement.findings, whole_file.findings, strict=True):
            assert (a.edit, a.fix_title) == (b.edit, b.fix_title), (path.name, a.span)
            compared += a.edit is not None
    assert compared > 50


def test_columns_are_characters_and_messages_one_line():
    source = Source("import torch\ns = 'é'; d = torch.ones(2)\nd.add_(\n    1)\n".encode())
    second = source.tree.body[2]  # `d = torch.ones(2)`, after a non-ASCII character
    assert (second.col_offset, source.char_span(second)) == (10, (2, 9, 2, 26))
    call = source.tree.body[3].value
    assert source.segment(call) == "d.add_(\n    1)"
    assert source.snippet(call) == "d.add_(1)"


def test_unparsable_file_without_candidates_is_still_reported():
    result = process_source(b"import torch\ndef f(:\n", "bad.py", Settings())
    assert result.error is not None and "cannot parse" in result.error.message


def _modules_after(script: str, cwd) -> set:
    code = script + "\nimport sys; print(' '.join(sorted(sys.modules)))\n"
    proc = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                          check=True, env={"PYTHONPATH": str(ROOT)})
    return set(proc.stdout.split())


def test_check_never_imports_libcst_and_fix_does(tmp_path):
    (tmp_path / "m.py").write_text(textwrap.dedent("""\
        import torch

        def f(x):
            h = torch.sigmoid(x)
            h += 1
            return h
        """))
    check = ("from codemod.engine.files import process_path; from codemod.config import Settings\n"
             "r = process_path('m.py', Settings(), fix=False, write=False, edits=False)\n"
             "assert r.findings and r.findings[0].fixable\n")
    assert "libcst" not in _modules_after(check, tmp_path)
    fix = check.replace("fix=False", "fix=True") + "assert r.changed\n"
    assert "libcst" in _modules_after(fix, tmp_path)


def test_warnings_about_the_users_code_are_not_printed():
    import warnings

    data = b"import torch\n\ndef f(x):\n    y = 1[0]\n    s = '\\d'\n    x += 1\n    return x\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = process_source(data, "w.py", EVERYTHING, fix=True)
    assert result.changed
    assert not [w for w in caught if issubclass(w.category, (SyntaxWarning, DeprecationWarning))]


def test_deep_nesting_is_analysed_or_reported_as_unparsable():
    def program(n):
        terms = " + ".join(f"a{i}" for i in range(n))
        return f"import torch\n\ndef f(x: torch.Tensor, *a):\n    y = {terms}\n    x += y\n    return x\n".encode()

    assert process_source(program(900), "deep.py", EVERYTHING).findings  # libcst gave up here
    too_deep = process_source(program(5000), "deeper.py", EVERYTHING)
    assert too_deep.error is not None and "nested too deeply" in too_deep.error.message


def _same(a, b) -> bool:
    view = lambda r: [(f.code, f.message, f.span, f.status, f.reason, f.fixable) for f in r.findings]  # noqa: E731
    return view(a) == view(b)


def test_reused_findings_equal_a_fresh_analysis_after_any_edit():
    import random

    from codemod.testing import FUZZ_CORPUS as CORPUS, mutate

    rng = random.Random(1)
    hints = Settings(select=("ALL",))
    reused_some = 0
    for path in CORPUS:
        before = path.read_text()
        previous = process_source(before.encode(), path.name, hints, incremental=True)
        for _ in range(3):
            after = mutate(before, rng).encode()
            again = process_source(after, path.name, hints, incremental=True, previous=previous)
            assert _same(again, process_source(after, path.name, hints)), path.name
            reused_some += again.reused_units
    assert reused_some > 20  # the reuse really happens


def test_a_changed_context_is_analysed_again():
    before = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU(inplace=True)
        """)
    after = before.replace("import torch.nn as nn", "import othernn as nn")  # not torch any more
    hints = Settings(select=("ALL",))
    previous = process_source(before.encode(), "m.py", hints, incremental=True)
    assert previous.findings and previous.statements
    again = process_source(after.encode(), "m.py", hints, incremental=True, previous=previous)
    assert not again.findings and _same(again, process_source(after.encode(), "m.py", hints))


def test_batch_runs_do_not_pay_for_editor_reuse(tmp_path):
    """Only editors ask for reuse across edits (``incremental=True``); a check keeps no keys."""
    from codemod.engine.files import process_path

    path = tmp_path / "m.py"
    path.write_text("import torch\n\ndef f(x):\n    y = torch.sigmoid(x)\n    y += 1\n    return y\n")
    assert process_path(str(path), Settings(), fix=False, write=False, edits=False).statements is None
    assert process_source(path.read_bytes(), "m.py", Settings(), incremental=True).statements


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
def test_json_edits_applied_as_an_editor_would_equal_fix_for_every_line_ending(newline):
    """Lines end at ``\\n``, ``\\r\\n`` or a lone ``\\r`` (as Python, LSP and editors count them):
    an edit placed by those lines gives exactly what ``fix`` writes."""
    import re

    lines = ["import torch", "", "def f(x):", "    h = torch.sigmoid(x)", "    h += 1  # note", "    return h", ""]
    source = newline.join(lines)
    edit = process_source(source.encode(), "m.py", EVERYTHING, edits=True).findings[0].edit
    fixed = process_source(source.encode(), "m.py", EVERYTHING, fix=True).fixed
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", source)]
    a = starts[edit.span.line - 1] + edit.span.column
    b = starts[edit.span.end_line - 1] + edit.span.end_column
    assert source[:a] + edit.content + source[b:] == fixed
