"""Editor reuse with a project index: findings move with their functions when nothing the index
answers the file names a line of another file (the server's workspace case: a module its
neighbours import and call); where a summary it reads does, only what did not move is reused.
Each reused result is compared with a fresh full analysis of the same text and index."""

from __future__ import annotations

import textwrap

from codemod.config import Settings
from codemod.engine.pipeline import add_edits, process_source
from codemod.engine.project import build_index

HINTS = Settings(select=("ALL",))
MODULE = textwrap.dedent("""\
    import torch


    def squash(x):
        y = torch.sigmoid(x)
        y.mul_(2)
        return y


    def helper(t):
        h = torch.tanh(t)
        h += 1
        return h
    """)
CALLER = textwrap.dedent("""\
    import torch

    from mod import squash, helper


    def run(x):
        with torch.no_grad():
            return squash(x)


    def other(x):
        return helper(x)
    """)


def view(result) -> list:
    add_edits(result, result.original.encode() if result.original else b"", result.findings)
    return [(f.code, f.message, f.span, f.status, f.reason, f.fix_title, f.edit) for f in result.findings]


def analyse(text: str, index, previous=None):
    return process_source(text.encode(), "mod.py", HINTS, incremental=True, previous=previous,
                          project=index, module_name="mod")


def test_a_module_whose_answers_name_no_line_moves_its_findings(tmp_path):
    (tmp_path / "mod.py").write_text(MODULE)
    (tmp_path / "caller.py").write_text(CALLER)
    index = build_index([str(tmp_path / "mod.py"), str(tmp_path / "caller.py")])
    assert index is not None and not index.names_other_lines("mod")
    before = analyse(MODULE, index)
    assert any(f.reason == "no-grad-callers" for f in before.findings)  # the index is read
    after = "# a line near the top\n" + MODULE
    moved = analyse(after, index, before)
    full = process_source(after.encode(), "mod.py", HINTS, project=index, module_name="mod")
    assert moved.reused_units == 2 and view(moved) == view(full)
    assert any("at line 12" in f.message for f in moved.findings)  # a line of its own, moved


def test_a_summary_naming_a_line_of_its_file_keeps_moved_findings_unreused(tmp_path):
    (tmp_path / "mod.py").write_text(MODULE)
    (tmp_path / "caller.py").write_text(CALLER + "\n\ndef again(x):\n    y = squash(x)\n    y += 1\n    return y\n")
    index = build_index([str(tmp_path / "mod.py"), str(tmp_path / "caller.py")])
    assert index is not None and index.names_other_lines("caller")  # squash: "sigmoid (line 5)"
    assert not index.names_other_lines("mod")
