"""A hostile tree, replayed through the real command: links (in, out, hard, looping, dangling),
permissions (an unreadable folder and file, a read-only file, someone else's file), a FIFO,
leftover temporary files, encodings and line endings, broken files.

Asserted: no traceback, the documented exit codes, every file that should change changed as
expected, and nothing else changed (bytes, modes, owners, inodes, links).

The tool runs as root without the capabilities that let root ignore permissions
(CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) and change owners (CAP_CHOWN): as an ordinary user
meets a tree it does not fully own.
"""

from __future__ import annotations

import ctypes
import json
import os
import pathlib
import stat
import subprocess
import sys
import time

import pytest

from .test_cli import _env

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.geteuid() != 0,
    reason="builds the tree as root (chown) and drops capabilities with prctl",
)

_PR_CAPBSET_DROP = 24
_CAP_CHOWN, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH = 0, 1, 2


def _as_ordinary_user() -> None:
    """In the child, before exec: root keeps its uid but not the power to ignore permissions."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_CHOWN, _CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codemod", *args], cwd=cwd, capture_output=True, text=True,
                          env=_env(), timeout=120, preexec_fn=_as_ordinary_user)


def ipf(data: bytes) -> bytes:
    """A module-level in-place call (IPF001 with --select IPF) and its fix."""
    return data.replace(b"x.add_(1)", b"x = x.add(1)")


SMALL = b"import torch\nx = torch.ones(2)\nx.add_(1)\n"


def build(base: pathlib.Path) -> dict:
    """The tree under ``base/tree`` (and a file outside it); returns the expected content of
    every file that ``fix`` must change, by path."""
    tree, outside = base / "tree", base / "outside"
    tree.mkdir()
    outside.mkdir()
    expected = {}

    def put(name, data: bytes, fixed=None, folder=tree):
        (folder / name).write_bytes(data)
        if fixed is not None:
            expected[folder / name] = fixed

    put("good.py", SMALL, ipf(SMALL))
    os.symlink("good.py", tree / "link_in.py")
    put("ext.py", SMALL, ipf(SMALL), folder=outside)
    os.symlink(outside / "ext.py", tree / "link_out.py")
    put("hard_a.py", SMALL, ipf(SMALL))
    os.link(tree / "hard_a.py", tree / "hard_b.py")
    expected[tree / "hard_b.py"] = ipf(SMALL)
    os.symlink("loop_b.py", tree / "loop_a.py")
    os.symlink("loop_a.py", tree / "loop_b.py")
    os.symlink("missing.py", tree / "dangling.py")
    os.symlink(".", tree / "again")  # a folder loop
    (tree / "locked").mkdir()
    put("inside.py", SMALL, folder=tree / "locked")
    os.chmod(tree / "locked", 0)
    put("readonly.py", SMALL)
    os.chmod(tree / "readonly.py", 0o444)
    put("theirs.py", SMALL, ipf(SMALL))
    os.chown(tree / "theirs.py", 65534, 65534)
    os.chmod(tree / "theirs.py", 0o666)  # anyone may write it; its owner must stay nobody
    put("secret.py", SMALL)
    os.chmod(tree / "secret.py", 0)
    os.mkfifo(tree / "pipe.py")
    put(".good.py.k3j9x_2a.inplacefix", b"half a file")
    old = time.time() - 7200
    os.utime(tree / ".good.py.k3j9x_2a.inplacefix", (old, old))
    long_latin = b"# " + b"=" * 600 + b"\n# -*- coding: latin-1 -*-\n# caf\xe9\n" + SMALL
    put("latin_long.py", long_latin, ipf(long_latin))
    mixed = b"import torch\r\nx = torch.ones(2)\nx.add_(1)\r\ny = 1\n"
    put("mixed.py", mixed, ipf(mixed))
    mac = SMALL.replace(b"\n", b"\r")
    put("mac.py", mac, ipf(mac))
    bom = b"\xef\xbb\xbf" + SMALL
    put("bom.py", bom, ipf(bom))
    put("syntax.py", b"import torch\nx = torch.ones(2)\nx.add_(1\n")
    put("not_utf8.py", b"import torch\nx = '\xff'\nx.add_(1)\n")
    put("cookie_bad.py", b"# -*- coding: no-such-codec -*-\nimport torch\n")
    return expected


def state(base: pathlib.Path) -> dict:
    """Everything a run could change: per path, the link target or (mode, owner, inode, links, bytes)."""
    found = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            path = pathlib.Path(folder) / name
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                found[path] = ("link", os.readlink(path))
            elif stat.S_ISREG(st.st_mode):
                found[path] = (st.st_mode, st.st_uid, st.st_gid, st.st_ino, st.st_nlink, path.read_bytes())
            else:
                found[path] = (st.st_mode, st.st_uid, st.st_gid)
    return found


@pytest.fixture
def hostile(tmp_path):
    expected = build(tmp_path)
    yield tmp_path, expected
    os.chmod(tmp_path / "tree" / "locked", 0o755)  # so that pytest can clean up


def assert_clean(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    for line in proc.stderr.splitlines():
        assert line.startswith(("warning: ", "removed ", "Found ", "Fixed ", "No in-place")) or ": error: " in line, line


ERRORS = {  # path -> what stderr says about it, for every run over the whole tree
    "locked": "locked:1:1: error: cannot read folder: Permission denied",
    "syntax.py": "syntax.py:",  # the line and column are another issue's (CPython's, not libcst's)
    "not_utf8.py": "not_utf8.py:2:8: error: cannot parse: (unicode error)",  # CPython's own location
    "cookie_bad.py": "cookie_bad.py:1:1: error: cannot parse",
}


def test_check_reports_and_changes_nothing(hostile):
    base, _ = hostile
    before = state(base)
    proc = run("check", "--no-cache", "--select", "IPF", ".", cwd=base / "tree")
    assert_clean(proc)
    assert proc.returncode == 2
    for message in ERRORS.values():
        assert message in proc.stderr, proc.stderr
    assert "warning: loop_a.py: skipped: Too many levels of symbolic links" in proc.stderr
    assert "warning: dangling.py: skipped: No such file or directory" in proc.stderr
    assert "secret.py:1:1: error: cannot read: Permission denied" in proc.stderr
    assert "pipe.py" not in proc.stderr, "a FIFO under a folder is not a source file"
    reported = {line.split(":")[0] for line in proc.stdout.splitlines()}
    assert reported == {"bom.py", "good.py", "hard_a.py", "latin_long.py", "link_out.py", "mac.py", "mixed.py",
                        "readonly.py", "theirs.py"}, "each file once, under its first name"
    assert state(base) == before, "check changed something"


def test_json_lists_the_failures(hostile):
    base, _ = hostile
    proc = run("check", "--no-cache", "--format", "json", ".", cwd=base / "tree")
    assert proc.returncode == 2
    errors = {e["filename"]: e["message"] for e in json.loads(proc.stdout)["errors"]}
    assert errors["locked"] == "cannot read folder: Permission denied"
    assert errors["secret.py"] == "cannot read: Permission denied"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_fix_changes_exactly_what_it_should(hostile, jobs):
    base, expected = hostile
    before = state(base)
    proc = run("fix", "--no-cache", "--select", "IPF", "-j", jobs, ".", cwd=base / "tree")
    assert_clean(proc)
    assert proc.returncode == 2
    assert "readonly.py:1:1: error: read-only file: not rewritten" in proc.stderr
    assert "removed .good.py.k3j9x_2a.inplacefix: a temporary file left by an interrupted write" in proc.stderr
    after = state(base)
    stale = base / "tree" / ".good.py.k3j9x_2a.inplacefix"
    assert stale in before and stale not in after
    for path, old in before.items():
        if path == stale:
            continue
        new = after[path]
        if path in expected:
            assert new[-1] == expected[path], path
            assert (new[0], new[1], new[2], new[4]) == (old[0], old[1], old[2], old[4]), f"{path}: mode/owner/links"
        else:
            assert new == old, f"{path} changed"
    # Hard links: one inode, both names fixed; the owner of someone else's file is kept.
    assert after[base / "tree" / "hard_a.py"][3] == after[base / "tree" / "hard_b.py"][3]
    assert after[base / "tree" / "theirs.py"][1:3] == (65534, 65534)
    # A second run has nothing left to fix and changes nothing.
    again = run("fix", "--no-cache", "--select", "IPF", "-j", jobs, ".", cwd=base / "tree")
    assert_clean(again)
    assert again.returncode == 2 and state(base) == after


def test_an_unreadable_file_named_first_does_not_stop_the_others(hostile):
    base, _ = hostile
    tree = base / "tree"
    proc = run("fix", "--no-cache", "--select", "IPF", "secret.py", "pipe.py", "good.py", cwd=tree)
    assert_clean(proc)
    assert proc.returncode == 2
    assert "secret.py:1:1: error: cannot read: Permission denied" in proc.stderr
    assert "pipe.py:1:1: error: cannot read: is not a regular file" in proc.stderr
    assert (tree / "good.py").read_bytes() == ipf(SMALL)
