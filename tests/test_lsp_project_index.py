"""The server's workspace index (``lsp_project.WorkspaceIndex``) on real files: what a refresh
re-reads, when it says nothing changed, the module names it hands the analysis."""

from __future__ import annotations

import os
import threading

from codemod.frontends.lsp_project import WorkspaceIndex


def write(tmp_path, name, text):
    (tmp_path / name).write_text(text)
    return tmp_path / name


def test_a_refresh_rereads_only_changed_files(tmp_path):
    a = write(tmp_path, "a.py", "import torch\n\n\ndef f(x):\n    y = torch.sigmoid(x)\n    y.mul_(2)\n    return y\n")
    b = write(tmp_path, "b.py", "import torch\nfrom a import f\n\n\ndef g(x):\n    with torch.no_grad():\n        return f(x)\n")
    write(tmp_path, "c.py", "import a\n")
    index = WorkspaceIndex(threading.RLock())
    assert index.build([tmp_path]).changed
    first = dict(index._known)
    assert index.state.index is not None and index.state.index.grad_off("a.f")
    assert index.lookup(str(a)) == (index.state.index, "a")
    assert index.lookup(str(tmp_path / "elsewhere.py")) == (None, "")

    again = index.build([tmp_path])  # nothing changed on disk
    assert not again.changed and "unchanged" in again.message
    b.write_text(b.read_text().replace("    with torch.no_grad():\n        return f(x)", "    return f(x)"))
    st = os.stat(b)
    os.utime(b, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    generation = index.state.generation
    assert index.build([tmp_path]).changed and index.state.generation == generation + 1
    assert index._known[str(a)][1] is first[str(a)][1]  # not read again
    assert index._known[str(b)][1] is not first[str(b)][1]
    assert not index.state.index.grad_off("a.f")


def test_a_new_file_rebuilds_every_fact_and_off_clears(tmp_path):
    write(tmp_path, "a.py", "def f(x):\n    return x\n")
    write(tmp_path, "b.py", "from a import f\n")
    index = WorkspaceIndex(threading.RLock())
    index.build([tmp_path])
    first = dict(index._known)
    write(tmp_path, "c.py", "from a import f\n\nf(1)\n")  # the module list changes every file's facts
    assert index.build([tmp_path]).changed
    assert all(index._known[p][1] is not first[p][1] for p in first)
    assert index.clear().changed and index.lookup(str(tmp_path / "a.py")) == (None, "")
