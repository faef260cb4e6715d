"""Speed work for the warm run (issue 27) that must change no result: the run's module names
are worked out walking up each folder once (``project.module_name`` with the folders kept), and
the cache's "is a folder below it a link" test is made on strings; the names, and which cache
entries are refused, are what they were."""

from __future__ import annotations

import os
import pathlib

import pytest

from codemod.analysis import project as analysis_project
from codemod.analysis.project import module_name
from codemod.engine import cache as cache_mod
from codemod.engine.project import build_index


def _tree(root: pathlib.Path) -> list:
    files = {
        "pkg/__init__.py": "",
        "pkg/a.py": "def f(x):\n    return x\n",
        "pkg/b.py": "from pkg.a import f\n\ndef g(x):\n    return f(x)\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/c.py": "x = 1\n",
        "pkg/sub/d.py": "y = 2\n",
        "pkg/plain/e.py": "z = 3\n",  # a folder without __init__.py inside a package
        "pkg/plain/deeper/__init__.py": "",
        "pkg/plain/deeper/h.py": "w = 4\n",
        "top.py": "import pkg\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    os.symlink(root / "pkg" / "sub", root / "linked")  # resolved to the package it points into
    return sorted(str(root / n) for n in files) + [str(root / "linked" / "c.py")]


def test_names_are_the_same_with_the_folders_kept(tmp_path):
    paths = _tree(tmp_path)
    kept: dict = {}
    for p in paths + paths:  # asked twice: the second time from what is kept
        assert module_name(pathlib.Path(p), kept) == module_name(pathlib.Path(p))
    assert module_name(pathlib.Path(str(tmp_path / "pkg" / "sub" / "c.py"))) == "pkg.sub.c"
    assert module_name(pathlib.Path(str(tmp_path / "linked" / "c.py"))) == "pkg.sub.c"
    assert module_name(pathlib.Path(str(tmp_path / "pkg" / "plain" / "e.py"))) == "e"
    assert module_name(pathlib.Path(str(tmp_path / "pkg" / "__init__.py"))) == "pkg"
    index = build_index(paths)
    assert index.module_names == {p: module_name(pathlib.Path(p)) for p in paths}


def test_a_folder_is_walked_up_once_per_run(tmp_path, monkeypatch):
    """Before, every file walked up its folders (``exists`` of each ``__init__.py`` per file)."""
    paths = _tree(tmp_path)
    asked = []
    real = pathlib.Path.exists

    def counting(self, *args, **kwargs):
        if self.name == "__init__.py":
            asked.append(str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "exists", counting)
    kept: dict = {}
    for p in paths:
        module_name(pathlib.Path(p), kept)
    assert len(asked) == len(set(asked))  # each folder's __init__.py looked at once


@pytest.mark.parametrize("relative", [False, True])
def test_links_below_the_cache_folder_are_found_as_before(tmp_path, monkeypatch, relative):
    folder = tmp_path / "proj" / cache_mod.CACHE_FOLDER
    (folder / "ab").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, folder / "cd")
    (tmp_path / "linked_proj").symlink_to(tmp_path / "proj")  # above the cache folder: not looked at
    if relative:
        monkeypatch.chdir(tmp_path)
        base = pathlib.Path("proj") / cache_mod.CACHE_FOLDER
    else:
        base = folder
    assert not cache_mod._linked_below_cache(base / "ab")
    assert not cache_mod._linked_below_cache(base / "ab" / "missing")
    assert cache_mod._linked_below_cache(base / "cd")
    assert cache_mod._linked_below_cache(base / "cd" / "x")
    assert not cache_mod._linked_below_cache(tmp_path / "linked_proj" / cache_mod.CACHE_FOLDER / "ab")
    (folder / "ab" / "e.json").write_text("{}")
    os.symlink(folder / "ab" / "e.json", folder / "ab" / "f.json")
    assert cache_mod._linked_below_cache(base / "ab" / "f.json")
    assert not cache_mod._linked_below_cache(base / "ab" / "e.json")
    assert not cache_mod._linked_below_cache(pathlib.Path("no") / "cache" / "here")  # ends at the root


def test_module_name_is_the_analysis_ones():
    assert analysis_project.module_name is module_name
