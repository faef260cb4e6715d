"""A hostile repository: the static side never runs its code, and never writes through its links.

Every planted module records its import in a marker folder outside the project; a test passes only
if no marker appears. The planted names are ones the tool's processes import after they start
(``pickle`` for the fix-all child's channel, ``json`` for the cache, ``typing`` everywhere) and
the ones Python runs by itself (``sitecustomize``, a ``.pth`` file).
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest

from codemod.config import Settings
from codemod.frontends.lsp_fixall import FixProcess

from .test_cli import BROKEN, FIXED, invoke

PLANTED = ("pickle", "json", "typing", "sitecustomize", "libcst", "pathspec", "encodings_extra")
BIN = pathlib.Path(sys.executable).parent


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A project whose folder holds modules that would mark their import, and the marker folder."""
    project, markers = tmp_path / "project", tmp_path / "markers"
    project.mkdir()
    markers.mkdir()
    for name in PLANTED:
        (project / f"{name}.py").write_text(
            f"open({str(markers / name)!r}, 'w').close()\nraise SystemExit('planted {name} ran')\n")
    (project / "planted.pth").write_text(f"import os; open({str(markers / 'pth')!r}, 'w').close()\n")
    for i in range(6):  # enough files for -j workers
        (project / f"model{i}.py").write_text(BROKEN)
    monkeypatch.chdir(project)
    return project, markers


def _ran(markers: pathlib.Path) -> list:
    return sorted(p.name for p in markers.iterdir())


def _cli(project: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    """The console script, as a user (or pre-commit) runs it from the project folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    return subprocess.run([str(BIN / "inplacefix"), *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args", [
    ("check", "--no-cache", "."),
    ("check", "."),  # with the cache: json is read and written
    ("fix", "--no-cache", "-j", "2", "."),
    ("fix", "--diff", "--no-cache", "-j", "2", "."),
], ids=["check", "check-cache", "fix-j2", "diff-j2"])
def test_cli_runs_nothing_of_the_project(hostile, args):
    project, markers = hostile
    done = _cli(project, *args)
    assert done.returncode in (0, 1), done.stderr
    assert _ran(markers) == []


def test_python_m_codemod_runs_nothing_of_the_project(hostile):
    """``python -m codemod`` puts the project folder first on sys.path; the tool drops it before
    importing anything of its own."""
    project, markers = hostile
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-m", "codemod", "fix", "--no-cache", "-j", "2", "."],
                          cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert _ran(markers) == []
    assert (project / "model0.py").read_text() == FIXED


def test_notebook_check_runs_nothing_of_the_project(hostile):
    project, markers = hostile
    cell = {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
            "source": BROKEN.splitlines(keepends=True)}
    (project / "nb.ipynb").write_text(json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4,
                                                  "nbformat_minor": 5}))
    done = _cli(project, "check", "--no-cache", "nb.ipynb")
    assert done.returncode == 1, done.stderr
    assert _ran(markers) == []


def test_language_server_fix_all_child_runs_nothing_of_the_project(hostile):
    """The editor starts the server in the project folder; its fix-all child must not import
    the project's ``pickle.py`` (or anything else there)."""
    project, markers = hostile
    fixer = FixProcess()
    try:
        fixed = fixer.fix_all("job", BROKEN, str(project / "model0.py"), Settings())
    finally:
        fixer.close()
    assert fixed == FIXED
    assert _ran(markers) == []


# -- a cache folder that the repository ships as a link ---------------------------------------


@pytest.fixture
def linked(tmp_path, monkeypatch):
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "model.py").write_text(BROKEN)
    (project / "clean.py").write_text("import torch\n\n\ndef f(x):\n    return torch.relu(x) + 1\n")
    monkeypatch.chdir(project)
    return project, elsewhere


def _files(folder: pathlib.Path) -> list:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_linked_cache_folder_is_refused_with_a_notice(linked):
    project, elsewhere = linked
    (project / ".inplacefix_cache").symlink_to(elsewhere, target_is_directory=True)
    code, out, err = invoke("check", "model.py")
    assert code == 1 and "model.py" in out
    assert _files(elsewhere) == []
    assert ".inplacefix_cache" in err and "link" in err


def test_a_linked_gitignore_in_the_cache_is_not_written_through(linked):
    project, elsewhere = linked
    victim = elsewhere / "victim.txt"  # a link to a file that does not exist yet
    (project / ".inplacefix_cache").mkdir()
    (project / ".inplacefix_cache" / ".gitignore").symlink_to(victim)
    code, _, _ = invoke("check", "model.py", "clean.py")
    assert code == 1
    assert not victim.exists()


def test_a_linked_entry_folder_is_not_written_through(linked):
    """An entry's two-letter folder shipped as a link: nothing lands where it points."""
    project, elsewhere = linked
    cache = project / ".inplacefix_cache"
    cache.mkdir()
    for a in "0123456789abcdef":
        for b in "0123456789abcdef":
            (cache / (a + b)).symlink_to(elsewhere, target_is_directory=True)
    (cache / "project").symlink_to(elsewhere, target_is_directory=True)
    code, _, _ = invoke("check", "model.py", "clean.py")
    assert code == 1
    assert _files(elsewhere) == []


def test_a_linked_entry_file_is_not_read(linked):
    """An entry shipped as a link to a FIFO would hang the read; to a file, it is not ours."""
    project, elsewhere = linked
    assert invoke("check", "model.py", "clean.py")[0] == 1  # write the real entries
    entries = [p for p in (project / ".inplacefix_cache").rglob("*.json")]
    assert entries
    fifo = elsewhere / "fifo"
    os.mkfifo(fifo)
    for entry in entries:
        entry.unlink()
        entry.symlink_to(fifo)
    def hung(signum, frame):
        raise TimeoutError("the cache read blocked on a FIFO")

    before = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        code, out, _ = invoke("check", "model.py", "clean.py")  # would block forever on the FIFO
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, before)
    assert code == 1 and "model.py" in out


def test_the_language_server_started_in_the_project_runs_nothing_of_it(hostile):
    """The editor's way: the server started in the project folder (``python -m codemod lsp``),
    diagnostics, a quick fix and a fix-all (its child), with the project index on."""
    from .lsp_wire import Wire
    from .test_lsp_wire import code_action_params

    project, markers = hostile
    wire = Wire(cwd=str(project))
    try:
        wire.initialize(root_uri=project.as_uri())
        uri = (project / "model0.py").as_uri()
        wire.open(uri, BROKEN)
        assert wire.diagnostics(uri, 1, timeout=120)
        quick = wire.answer(wire.request("textDocument/codeAction", code_action_params(uri, 6)), timeout=60)
        assert any("Rewrite as `h = h + 1`" in a["title"] for a in quick["result"])
        fix_all = wire.request("textDocument/codeAction", code_action_params(uri, 0, only=("source.fixAll",)))
        assert wire.answer(fix_all, timeout=120)["result"], "the fix-all child computed no edit"
    finally:
        wire.close()
    assert _ran(markers) == []
