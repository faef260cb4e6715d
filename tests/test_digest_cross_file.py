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


# ------------------------------------------------------------------ a class imported by another file
# ``arguments._imported_elsewhere`` reads the other files' imports (``ModuleFacts.exports``): a
# class another module imports (a package's ``__init__`` re-exporting it, for one) may be called
# where this file cannot see what is passed, so its forward's in-place write gets no safe fix.
NORM = """\
import torch
import torch.nn as nn


class Norm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, d)

    def forward(self, x):
        x /= x.norm(dim=-1, keepdim=True)
        return self.fc(x)


def build():
    n = Norm(4)
    h = torch.randn(2, 4) * 2
    n(h)
"""
REEXPORT = "from .a import Norm\n"


def _statuses(result) -> list:
    return sorted((f.code, f.span.line, f.status.value if f.status else None) for f in result.findings)


def _package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    a, init = pkg / "a.py", pkg / "__init__.py"
    a.write_text(NORM)
    init.write_text("")
    return a, init


def test_a_re_export_added_in_another_file_is_a_cache_miss(tmp_path):
    from codemod.engine.files import process_path

    a, init = _package(tmp_path)
    files, cache = [str(a), str(init)], str(tmp_path / "cache")

    def check(cache_dir):
        result = process_path(str(a), SETTINGS, False, False, False, cache_dir, build_index(files, cache_dir))
        return _statuses(result)

    assert ("IPF101", 11, "safe") in check(cache) == check(None)  # the label: only this file builds it
    init.write_text(REEXPORT)
    fresh = check(None)
    assert ("IPF101", 11, "safe") not in fresh  # the label: callers outside the file may read x after
    assert check(cache) == fresh


def test_an_editor_sees_a_re_export_added_in_another_file(tmp_path):
    a, init = _package(tmp_path)
    files = [str(a), str(init)]
    first = process_source(NORM.encode(), str(a), SETTINGS, incremental=True, project=build_index(files),
                           module_name="pkg.a")
    assert ("IPF101", 11, "safe") in _statuses(first)
    init.write_text(REEXPORT)
    index = build_index(files)
    again = process_source(NORM.encode(), str(a), SETTINGS, incremental=True, previous=first, project=index,
                           module_name="pkg.a")
    fresh = process_source(NORM.encode(), str(a), SETTINGS, project=index, module_name="pkg.a")
    assert ("IPF101", 11, "safe") not in _statuses(fresh)
    assert _statuses(again) == _statuses(fresh)


# ------------------------------------------------------------------ a caller's caller turns grad off
# ``views`` skips the calls (from other files) whose caller runs with grad off: whether it does
# is decided by the caller's own callers, in a third file that can change alone. Here ``b.g``
# passes ``f`` what no file shows; once ``c.py`` calls ``g`` only under ``no_grad``, the other
# call (a leaf that requires grad) is all that is left: the hazard is proven.
SCALE = "import torch\n\n\ndef f(c):\n    h = torch.ones(3)\n    y = h * c\n    h += 1\n    return y\n"
CALLER = """\
import torch

from a import f


def g(t):
    return f(t)


def main():
    w = torch.randn(3, requires_grad=True)
    f(w).sum().backward()
"""
OUTER = "import torch\n\nfrom b import g\n\n\ndef run():\n    {}return g(torch.randn(3))\n"
GRAD_ON, GRAD_OFF = OUTER.format(""), OUTER.format("with torch.no_grad():\n        ")


def _three(tmp_path):
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text(SCALE)
    b.write_text(CALLER)
    c.write_text(GRAD_ON)
    return a, c, [str(a), str(b), str(c)]


def test_an_editor_sees_a_callers_caller_turn_grad_off(tmp_path):
    a, c, files = _three(tmp_path)
    first = process_source(SCALE.encode(), str(a), SETTINGS, incremental=True, project=build_index(files),
                           module_name="a")
    assert not [f for f in first.findings if f.code == "IPF101"]
    c.write_text(GRAD_OFF)
    index = build_index(files)
    again = process_source(SCALE.encode(), str(a), SETTINGS, incremental=True, previous=first, project=index,
                           module_name="a")
    fresh = process_source(SCALE.encode(), str(a), SETTINGS, project=index, module_name="a")
    assert [f for f in fresh.findings if f.code == "IPF101"]  # the label: only main's call is left
    assert _shown(again) == _shown(fresh)


def test_a_callers_caller_turning_grad_off_is_a_cache_miss(tmp_path):
    from codemod.engine.files import process_path

    a, c, files = _three(tmp_path)
    cache = str(tmp_path / "cache")

    def check(cache_dir):
        return _shown(process_path(str(a), SETTINGS, False, False, False, cache_dir, build_index(files, cache_dir)))

    assert check(cache) == check(None)
    c.write_text(GRAD_OFF)
    fresh = check(None)
    assert [f for f in fresh if f[0] == "IPF101"]
    assert check(cache) == fresh
