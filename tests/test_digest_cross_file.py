"""What a file's analysis reads of other files must key its reuse: the result cache
(``ProjectIndex.digest_for(module, passed=False)`` with ``engine.asked``) and the editor's
statement reuse (``digest_for(module)``). Each test changes only another file, in a way that
changes this file's findings, and checks that a reused result equals a fresh analysis."""

from __future__ import annotations

from codemod.config import Settings
from codemod.engine.pipeline import process_source
from codemod.engine.project import build_index

SETTINGS = Settings(select=("IPF1",))
BLOCK = """\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=inplace)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        return self.act(h)
"""
USER = "import torch\n\nfrom a import Block\n\n\ndef main():\n    x = torch.randn(2, 4)\n    return {}\n"


def _shown(result) -> list:
    return sorted((f.code, f.span.line, f.message) for f in result.findings)


def _editor(tmp_path, a_text: str, b_before: str, b_after: str):
    """a.py analysed as an editor does (statement reuse) before and after b.py changes:
    (reused result, fresh result) of a.py with the index after the change."""
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text(a_text)
    files = [str(a), str(b)]
    b.write_text(b_before)
    first = process_source(a_text.encode(), str(a), SETTINGS, incremental=True,
                           project=build_index(files), module_name="a")
    b.write_text(b_after)
    index = build_index(files)
    again = process_source(a_text.encode(), str(a), SETTINGS, incremental=True, previous=first,
                           project=index, module_name="a")
    fresh = process_source(a_text.encode(), str(a), SETTINGS, project=index, module_name="a")
    return again, fresh


def test_an_editor_sees_a_construction_added_in_another_file(tmp_path):
    again, fresh = _editor(tmp_path, BLOCK, USER.format("x"), USER.format("Block(inplace=True)(x).sum()"))
    assert _shown(fresh)  # the label: with the construction, the in-place ReLU is reported
    assert _shown(again) == _shown(fresh)
