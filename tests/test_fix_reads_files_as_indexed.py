"""A writing run (``fix``) rewrites files while it still analyses others, which ask the index
about them: what a caller's call passes (``module_arguments``), what autograd saved there
(``module_savings``), a callee's summary (``module_summaries``). Those are worked out on demand
from the file. Read from disk at that moment, the answer depended on whether the run had
already rewritten the other file: ``fix --unsafe-fixes -j 2`` over pyro rewrote
``pyro/ops/tensor_utils.py:210`` in some runs and not in others (125 or 126 rewrites, on
b47935c itself, lazy facts or not), and ``-j 1`` left it because ``pyro/ops/stats.py``,
which calls it, came first and was rewritten: its call no longer matched the index, so it told
nothing and the callers "may rely on the mutation". ``fix --diff`` (which writes nothing) and
``check`` said unsafe, fixable. A writing run now answers from the files as the index read them,
whatever the order of the files or of the processes."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from codemod.config import Settings
from codemod.engine.files import process_path
from codemod.engine.project import build_index

INIT = textwrap.dedent('''\
    import torch


    def scale(t, k):
        t.mul_(k)
        return t
    ''')
# Processed before init.py (files go in name order with -j 1): its own fix rewrites it first.
A_USE = textwrap.dedent('''\
    import torch
    from pkg.init import scale


    def twice(a):
        z = scale(a, 2.0)
        return z


    def bump(x):
        y = torch.sigmoid(x)
        y += 1
        return y
    ''')
LIB = textwrap.dedent('''\
    import torch


    def double(t):
        t.mul_(2)
        return t
    ''')


@pytest.fixture
def project(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "init.py").write_text(INIT)
    (pkg / "a_use.py").write_text(A_USE)
    return tmp_path


def _fix(cwd, *flags):
    run = subprocess.run([sys.executable, "-m", "codemod", "fix", "--select", "ALL", "--unsafe-fixes", "--no-cache",
                          *flags, "pkg"], capture_output=True, text=True, cwd=cwd)
    assert run.returncode in (0, 1), run.stderr
    return run


def _files(root):
    return {p.name: p.read_text() for p in sorted((root / "pkg").glob("*.py"))}


def test_fix_writes_what_fix_diff_shows(project, tmp_path):
    """The caller's file is rewritten first; the callee's param-mutation verdict is still the one
    ``check`` and ``fix --diff`` give (callers read nothing after: unsafe, fixable), so ``fix``
    applies it in the same run (before: only a second run did)."""
    shown = _fix(project, "--diff").stdout
    assert "+    t = t.mul(k)" in shown and "+    y = y + 1" in shown
    _fix(project, "-j", "1")
    written = _files(project)
    assert "t = t.mul(k)" in written["init.py"]
    assert "y = y + 1" in written["a_use.py"]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_fix_gives_the_same_files_whatever_the_jobs(project, tmp_path, jobs):
    """(Two more files: with four or more, ``-j 2`` shares them between two processes.)"""
    copy = tmp_path / "copy"
    shutil.copytree(project / "pkg", copy / "pkg")
    for name in ("b_more.py", "c_more.py"):
        (copy / "pkg" / name).write_text("import torch\n")
    _fix(copy, "-j", jobs)
    expected = {"__init__.py": "", "a_use.py": A_USE.replace("y += 1", "y = y + 1"),
                "b_more.py": "import torch\n", "c_more.py": "import torch\n",
                "init.py": INIT.replace("t.mul_(k)", "t = t.mul(k)")}
    assert _files(copy) == expected


def _verdicts(root, order, write):
    files = [str(p) for p in sorted((root / "pkg").glob("*.py"))]
    index = build_index(files, writing=write)
    settings = Settings(select=("ALL",), unsafe_fixes=True)
    found = {}
    for name in order:
        result = process_path(str(root / "pkg" / name), settings, True, write, False, None, index)
        found[name] = sorted((f.span.line, f.status.value, f.reason) for f in result.findings)
    return found


@pytest.mark.parametrize("order", [("a_use.py", "init.py"), ("init.py", "a_use.py")])
def test_a_writing_run_sees_every_file_as_the_index_read_it(project, tmp_path, order):
    """The file pass in either order, writing as it goes, finds what it finds writing nothing."""
    copy = tmp_path / "copy"
    shutil.copytree(project / "pkg", copy / "pkg")
    expected = _verdicts(project, ("init.py", "a_use.py"), write=False)
    assert (5, "unsafe", "param-mutation") in expected["init.py"]
    assert _verdicts(copy, order, write=True) == expected


def test_a_summary_asked_after_its_file_was_rewritten_is_the_indexed_one(project):
    """A callee's summary, asked by a caller's analysis after the run rewrote the callee's file,
    is the summary of the file the index read (the rewrite no longer mutates ``t``)."""
    (project / "pkg" / "lib.py").write_text(LIB)
    (project / "pkg" / "user.py").write_text("import torch\nfrom pkg.lib import double\n\n\n"
                                             "def f(x):\n    y = torch.sigmoid(x)\n    double(y)\n"
                                             "    return y.sum()\n")
    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    before = build_index(files).summary("pkg.lib.double")
    assert before is not None and before.mutates == (0,)
    index = build_index(files, writing=True)
    (project / "pkg" / "lib.py").write_text(LIB.replace("t.mul_(2)", "t = t.mul(2)"))
    assert build_index(files).summary("pkg.lib.double").mutates == ()  # (what the new file says)
    assert index.summary("pkg.lib.double") == before


def test_a_file_changed_by_someone_else_still_tells_nothing(project):
    """Outside a writing run (``check``, an editor), a caller changed since the index was made
    tells nothing of what it passes (``test_project_index``); a writing run tells what the
    index read, as the file pass of every file saw it."""
    files = [str(p) for p in sorted((project / "pkg").glob("*.py"))]
    index, writing = build_index(files), build_index(files, writing=True)
    (project / "pkg" / "a_use.py").write_text(A_USE + "\n")
    assert index.callers_rely("pkg.init.scale", "t")
    assert not writing.callers_rely("pkg.init.scale", "t")
