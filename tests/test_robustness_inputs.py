"""A tree of hostile inputs, replayed as a user would meet them: broken syntax of every kind,
encodings, bad notebooks, bad settings, bad caches. No traceback, the documented exit codes,
CPython's error locations, and no file changed that should not be."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import warnings

import pytest
from typer.testing import CliRunner

from codemod.frontends.cli import app

from .conftest import ROOT
from .test_cli import BROKEN as MODEL, FIXED as MODEL_FIXED
from .test_notebook_inputs import MALFORMED, NBFORMAT3, notebook
from .test_syntax_errors import BROKEN, HEAD, NEWER

runner = CliRunner()
LATIN1 = "# -*- coding: latin-1 -*-\nimport torch\nx = torch.ones(2)  # café\n".encode("latin-1")


def hostile_tree(root) -> dict:
    """Write the tree; return path -> bytes of every file that must come back unchanged."""
    files = {f"broken/{name}.py": HEAD + tail for name, tail in BROKEN.items()}
    files |= {f"broken/newer-{name}.py": HEAD + tail for name, (tail, version, _) in NEWER.items()
              if sys.version_info < version}
    files |= {
        "broken/null-byte.py": HEAD + b"a = 1\0\n",
        "broken/unknown-cookie.py": b"# coding: nope\nimport torch\n",
        "broken/cookie-lies.py": b"# coding: ascii\nimport torch\ns = 'caf\xc3\xa9'\n",
        # the screen sees no b"torch" in UTF-16: passed over like any file that never names torch
        "encodings/utf16.py": "import torch\nx = torch.ones(2)\n".encode("utf-16"),
        "encodings/latin1-cookie.py": LATIN1,
        "encodings/bom.py": b"\xef\xbb\xbfimport torch\nx = torch.ones(2)\n",
        "encodings/crlf.py": b"import torch\r\nx = torch.ones(2)\r\n",
        "notebooks/not-json.ipynb": b'{"cells": [',
        "notebooks/r-kernel.ipynb": notebook("x <- 1\nx[1] <- 0\n", metadata={"kernelspec": {"language": "R", "name": "ir"}}).encode(),
        "notebooks/bad-cell.ipynb": notebook("import torch\n", "def broken(:\n    pass\n").encode(),
    }
    files |= {f"notebooks/malformed-{name}.ipynb": bad if isinstance(bad, bytes) else bad.encode()
              for name, bad in MALFORMED.items()}
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    (root / "good.py").write_text(MODEL)
    (root / "notebooks" / "v3.ipynb").write_text(json.dumps(NBFORMAT3, indent=1) + "\n")
    return files


def cpython(data: bytes):
    """CPython's (line, column) for a file that does not parse; None where it gives none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(data, "<file>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as exc:
            return None if exc.lineno is None else (max(exc.lineno, 1), max((exc.offset or 1) - 1, 0))
        except ValueError:
            return None
    raise AssertionError("parses")


def test_hostile_tree(tmp_path):
    tree = tmp_path / "tree"
    unchanged = hostile_tree(tree)
    run = subprocess.run([sys.executable, "-m", "codemod", "fix", "--no-progress", "tree"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 2, run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    errors = {line.split(":")[0]: line for line in run.stderr.splitlines() if ": error: " in line}
    for name, data in unchanged.items():
        assert (tree / name).read_bytes() == data, f"{name} was changed"
        if name.startswith("broken/"):
            where = cpython(data)
            line, column = where if where else (data.count(b"\n", 0, data.index(b"\0")) + 1, 5)
            assert errors[f"tree/{name}"].startswith(f"tree/{name}:{line}:{column + 1}: error: cannot parse"), errors[f"tree/{name}"]
    expected_errors = [n for n in unchanged if n.startswith("broken/") or "malformed" in n or "json" in n or "bad-cell" in n]
    assert sorted(errors) == sorted(f"tree/{n}" for n in expected_errors)
    assert "tree/notebooks/r-kernel.ipynb: notice: not a Python notebook (language: R); skipped" in run.stderr
    assert (tree / "good.py").read_text() == MODEL_FIXED, "the other files are still fixed"
    v3 = json.loads((tree / "notebooks" / "v3.ipynb").read_text())
    assert v3["worksheets"][0]["cells"][2]["input"] == ["h = torch.sigmoid(w)\n", "h = h + 1"]


def test_hostile_tree_in_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hostile_tree(tmp_path / "tree")
    result = runner.invoke(app, ["check", "tree", "--format", "json", "--no-cache"])
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    doc = json.loads(result.stdout)
    located = {e["filename"]: (e["location"]["row"], e["location"]["column"] - 1) for e in doc["errors"]}
    checked = 0
    for name, where in located.items():
        data = (tmp_path / name).read_bytes()
        if name.endswith(".py") and cpython(data) is not None:
            assert where == cpython(data), name
            checked += 1
    assert checked == len([n for n in located if n.endswith(".py")]) - 1  # all but the null byte


BAD_SETTINGS = [
    '[tool.inplacefix]\nunsafe-fixes = "false"\n',
    '[tool.inplacefix]\nignore = "IPF104"\n',
    '[tool.inplacefix]\nselect = "IPF1"\n',
    '[tool.inplacefix]\nselect = ["FOO"]\n',
    '[tool.inplacefix]\nselct = ["IPF1"]\n',
    '[tool.inplacefix]\nexclude = [1]\n',
    "[tool]\ninplacefix = 5\n",
    "tool = 5\n",
    "[tool.inplacefix\n",
    b"[project]\nname = 'caf\xe9'\n",
    None,  # a symlink loop
]


@pytest.mark.parametrize("setting", BAD_SETTINGS, ids=range(len(BAD_SETTINGS)))
def test_bad_settings_exit_2_and_write_nothing(tmp_path, monkeypatch, setting):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MODEL)
    pyproject = tmp_path / "pyproject.toml"
    if setting is None:
        os.symlink("pyproject.toml", pyproject)
    else:
        pyproject.write_bytes(setting if isinstance(setting, bytes) else setting.encode())
    result = runner.invoke(app, ["fix", "model.py"])
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {pyproject}: ")
    assert (tmp_path / "model.py").read_text() == MODEL


@pytest.mark.parametrize("flags", [["--select", "FOO"], ["--ignore", "IPF8"], ["--select", "IPF1,I"]])  # (IPF9: IPF900)
def test_bad_selectors_on_the_command_line(tmp_path, monkeypatch, flags):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MODEL)
    result = runner.invoke(app, ["fix", *flags, "model.py"])
    assert result.exit_code == 2 and re.fullmatch(rf"error: {flags[0]}: unknown rule selector `\w+` .*\n", result.stderr)
    assert (tmp_path / "model.py").read_text() == MODEL


GARBAGE = [b"{", b"[]", b'{"findings": 5}', b'{"findings": [{"code": "IPF101"}]}', b"\xff\xfe\x00",
           json.dumps({"findings": [{"code": "IPF101", "message": "m", "span": [1, 2], "status": "safe",
                                     "reason": None, "fix_title": None, "cell": None, "fixable": False,
                                     "edit": None}]}).encode()]


def test_bad_cache_entries_are_misses(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "other.py").write_text(MODEL.replace("h += 1", "h -= 1"))
    (tmp_path / "nb.ipynb").write_text(notebook(HEAD.decode() + "h = torch.sigmoid(x)\nh += 1\n"))
    first = runner.invoke(app, ["check", "."])
    entries = sorted((tmp_path / ".inplacefix_cache").rglob("*.json"))
    assert len(entries) == 3
    for garbage in GARBAGE:
        for entry in entries:
            entry.write_bytes(garbage)
        again = runner.invoke(app, ["check", "."])
        assert again.exception is None or isinstance(again.exception, SystemExit)
        assert (again.exit_code, again.stdout) == (first.exit_code, first.stdout)


def test_a_cache_folder_that_is_a_file_costs_only_time(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / ".inplacefix_cache").write_text("not a folder")
    first = runner.invoke(app, ["check", "model.py"])
    assert first.exit_code == 1 and runner.invoke(app, ["check", "model.py"]).stdout == first.stdout
