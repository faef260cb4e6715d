"""What ``fix`` does to the files around the code: edits made during a run, workers whose
parent was killed, links, owners, read-only files, encodings and line endings, and how
internal errors and odd paths end (exit 2, one line)."""

from __future__ import annotations

import os
import pathlib
import signal
import stat
import subprocess
import sys
import time

import pytest

import codemod.engine.files as files_module
import codemod.frontends.cli as cli_module

from .test_cli import BROKEN, FIXED, _env, invoke

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX files")
root_only = pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="needs root (chown)")


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(BROKEN)
    return tmp_path


# -- item 2: an edit made while fix runs is kept ---------------------------------------------


def test_an_edit_made_while_fix_runs_is_kept_and_reported(project, monkeypatch):
    users_edit = BROKEN.replace("return y + z", "return y + z  # the user's edit")
    real = files_module.process_source

    def slow_analysis(data, path, *args, **kwargs):  # the user saves while the analysis runs
        result = real(data, path, *args, **kwargs)
        pathlib.Path(path).write_text(users_edit)
        return result

    monkeypatch.setattr(files_module, "process_source", slow_analysis)
    code, _, err = invoke("fix", "--no-cache", "-j", "1", "model.py")
    assert code == 2
    assert (project / "model.py").read_text() == users_edit
    assert "model.py" in err and "changed on disk since it was read" in err
    assert "Fixed 0 findings in 0 files." in err


def test_an_unchanged_file_is_still_written(project):
    assert invoke("fix", "--no-cache", "model.py")[0] == 1  # an unsafe fix remains
    assert (project / "model.py").read_text() == FIXED


# -- item 3: workers stop with their parent ------------------------------------------------


def _children(pid: int) -> list:
    """Every process below ``pid`` (workers, and a fork server's children where there is one)."""
    parents = {}
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        todo += kids
    return found


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_stop_writing_when_the_main_process_is_killed(tmp_path):
    # Enough work that the kill lands while both shares are being written.
    body = "".join(BROKEN.replace("def f(", f"def f{i}(").replace("import torch\n", "") for i in range(12))
    broken = "import torch\n" + body
    for i in range(240):
        (tmp_path / f"m{i:03}.py").write_text(broken)
    proc = subprocess.Popen([sys.executable, "-m", "codemod", "fix", "--no-cache", "--no-progress", "-j", "2", "."],
                            cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers = []
        while time.monotonic() < deadline:
            workers = sorted(set(workers) | set(_children(proc.pid)))
            if workers and any((tmp_path / f"m{i:03}.py").read_text() != broken for i in range(240)):
                break
            time.sleep(0.02)
        assert workers, "no worker started"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers), "a worker survived its parent"
    contents = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    time.sleep(1.0)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == contents, "written after the kill"
    fixed = [name for name, data in contents.items() if data != broken.encode()]
    assert 0 < len(fixed) < 200, "the kill should land mid-run"
    # The main process, killed in the middle of a write, can leave its temporary file (the next
    # fix removes it once stale); a worker never does: it removes its own on the way out.
    assert len([n for n in contents if n.endswith(".inplacefix")]) <= 1
    for name in fixed:
        compile(contents[name], name, "exec")  # each file is whole: original or fully fixed


def test_parallel_fix_still_writes_every_file(project):
    for i in range(6):
        (project / f"m{i}.py").write_text(BROKEN)
    assert invoke("fix", "--no-cache", "-j", "2", ".")[0] == 1
    assert all((project / f"m{i}.py").read_text() == FIXED for i in range(6))


# -- item 4: links ---------------------------------------------------------------------------


@posix_only
def test_a_link_to_a_file_in_the_tree_stays_a_link_and_the_file_is_fixed_once(project):
    os.symlink("model.py", project / "alias.py")
    code, out, _ = invoke("check", "--no-cache", ".")
    assert len(out.splitlines()) == 3, "the file is reported once, under its first name"
    code, _, err = invoke("fix", "--no-cache", ".")
    assert os.path.islink(project / "alias.py") and os.readlink(project / "alias.py") == "model.py"
    assert (project / "model.py").read_text() == FIXED
    assert "Fixed 2 findings in 1 file." in err


@posix_only
def test_a_link_to_a_file_outside_the_tree_fixes_the_target(tmp_path, monkeypatch):
    outside, tree = tmp_path / "outside", tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    (outside / "shared.py").write_text(BROKEN)
    os.symlink(outside / "shared.py", tree / "shared.py")
    monkeypatch.chdir(tree)
    invoke("fix", "--no-cache", ".")
    assert os.path.islink(tree / "shared.py")
    assert (outside / "shared.py").read_text() == FIXED
    assert [p.name for p in outside.iterdir()] == ["shared.py"], "no temporary file left"


@posix_only
def test_hard_links_are_fixed_once_and_stay_linked(project):
    os.link(project / "model.py", project / "other.py")
    inode = os.stat(project / "model.py").st_ino
    code, out, _ = invoke("check", "--no-cache", ".")
    assert len(out.splitlines()) == 3
    code, _, err = invoke("fix", "--no-cache", ".")
    assert "Fixed 2 findings in 1 file." in err
    for name in ("model.py", "other.py"):
        st = os.stat(project / name)
        assert (st.st_ino, st.st_nlink) == (inode, 2)
        assert (project / name).read_text() == FIXED


def test_a_file_named_twice_is_counted_once(project):
    code, out, err = invoke("check", "--no-cache", "model.py", "./model.py", ".")
    assert code == 1 and len(out.splitlines()) == 3
    assert "Found 3 findings" in err


# -- item 5: owner, group, read-only ---------------------------------------------------------


@root_only
def test_owner_and_group_are_kept(project):
    path = project / "model.py"
    os.chown(path, 65534, 65534)  # nobody:nogroup
    os.chmod(path, 0o640)
    invoke("fix", "--no-cache", "model.py")
    st = os.stat(path)
    assert path.read_text() == FIXED
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (65534, 65534, 0o640)


@posix_only
def test_a_read_only_file_is_not_rewritten_but_reported(project):
    (project / "other.py").write_text(BROKEN)
    os.chmod(project / "model.py", 0o444)
    code, _, err = invoke("fix", "--no-cache", ".")
    assert code == 2
    assert (project / "model.py").read_text() == BROKEN
    assert stat.S_IMODE(os.stat(project / "model.py").st_mode) == 0o444
    assert "model.py:1:1: error: read-only file: not rewritten" in err
    assert (project / "other.py").read_text() == FIXED, "the other files are still fixed"


# -- item 10: encodings and line endings -----------------------------------------------------


def test_a_coding_cookie_after_a_long_first_line_is_honoured(project):
    data = (b"# " + b"x" * 500 + b"\n# -*- coding: latin-1 -*-\nimport torch\n"
            b"x = torch.ones(2)  # caf\xe9\nx.add_(1)\n")
    (project / "long.py").write_bytes(data)
    code, _, err = invoke("fix", "--no-cache", "--select", "IPF", "long.py")
    assert code == 0, err
    assert (project / "long.py").read_bytes() == data.replace(b"x.add_(1)", b"x = x.add(1)")


def test_a_cr_only_file_keeps_its_last_cr(project):
    data = b"import torch\rx = torch.ones(2)\rx.add_(1)\r"
    (project / "mac.py").write_bytes(data)
    assert invoke("fix", "--no-cache", "--select", "IPF", "mac.py")[0] == 0
    assert (project / "mac.py").read_bytes() == data.replace(b"x.add_(1)", b"x = x.add(1)")


LATIN1_MIXED = (
    b"# -*- coding: latin-1 -*-\r\n"
    b"import torch\n"
    b"\r\n"
    b"\r\n"
    b"def f():  # caf\xe9\r\n"
    b"    x = torch.ones(3, requires_grad=True)\n"
    b"    h = torch.sigmoid(x)\r\n"
    b"    h += 1\n"
    b"    return h * 2\r\n"
)


@pytest.mark.parametrize("data", [
    LATIN1_MIXED,
    b"\xef\xbb\xbf" + LATIN1_MIXED.replace(b"latin-1", b"utf-8").replace(b"\xe9", "\u00e9".encode()),
    LATIN1_MIXED.replace(b"latin-1", b"utf-8").replace(b"\xe9", "\u00e9".encode())
    .replace(b"\r\n", b"\n").replace(b"\n", b"\r"),
], ids=["latin1-mixed", "bom-mixed", "utf8-cr-only"])
def test_repair_write_keeps_the_cookie_and_every_line_ending(project, data):
    (project / "old.py").write_bytes(data)
    code, out, err = invoke("repair", "--write", "--device", "cpu", "old.py::f")
    assert code == 0, out + err
    assert (project / "old.py").read_bytes() == data.replace(b"h += 1", b"h = h + 1")


def test_locate_runs_a_latin1_file(project):
    (project / "old.py").write_bytes(LATIN1_MIXED)
    code, out, err = invoke("locate", "old.py::f")
    assert code == 1 and "1 conflict(s)" in out, out + err  # found, and named
    assert "old.py" in out and "h += 1" in out


def test_locate_raise_ends_on_the_bad_line(project):
    (project / "old.py").write_bytes(LATIN1_MIXED)
    code, _, err = invoke("locate", "--raise", "old.py::f")
    assert code == 1, err  # a conflict, shown as a traceback: not an internal error
    assert "Traceback" in err and "h += 1" in err and "internal error" not in err


def test_repair_write_refuses_a_file_edited_during_the_run(project, monkeypatch):
    pytest.importorskip("torch")
    import codemod.runtime.repair as repair_module

    (project / "old.py").write_bytes(LATIN1_MIXED)
    real = repair_module.verify

    def verify_then_user_saves(*args, **kwargs):
        result = real(*args, **kwargs)
        (project / "old.py").write_bytes(LATIN1_MIXED + b"# saved\n")
        return result

    monkeypatch.setattr(repair_module, "verify", verify_then_user_saves)
    code, _, err = invoke("repair", "--write", "--device", "cpu", "old.py::f")
    assert code == 2 and "changed on disk since it was read" in err
    assert (project / "old.py").read_bytes() == LATIN1_MIXED + b"# saved\n"


# -- item 11: internal errors ----------------------------------------------------------------

BOOM = (
    "import sys, codemod.frontends.cli as cli\n"
    "def boom(*a, **k):\n"
    "    raise RuntimeError('boom\\nsecond line')\n"
    "cli.discover = boom\n"
    "sys.argv[0] = 'inplacefix'\n"
    "cli.app()\n"
)


def _boom(*args, env=None, cwd):
    return subprocess.run([sys.executable, "-c", BOOM, *args], cwd=cwd, capture_output=True, text=True,
                          env={**_env(), **(env or {})}, timeout=60)


def test_an_internal_error_is_exit_2_and_one_line(project):
    proc = _boom("check", ".", cwd=project)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "error: internal error: RuntimeError: boom (-v shows the traceback)"]


@pytest.mark.parametrize("how", ["flag", "env"])
def test_verbose_shows_the_traceback(project, how):
    args, env = (["-v", "check", "."], None) if how == "flag" else (["check", "."], {"INPLACEFIX_DEBUG": "1"})
    proc = _boom(*args, env=env, cwd=project)
    assert proc.returncode == 2
    assert "Traceback (most recent call last)" in proc.stderr and "in boom" in proc.stderr
    assert proc.stderr.splitlines()[-1] == "error: internal error: RuntimeError: boom"


def test_an_internal_error_in_one_file_costs_that_file(project, monkeypatch):
    (project / "other.py").write_text(BROKEN)
    real = files_module.process_source

    def broken_on_model(data, path, *args, **kwargs):
        if path.endswith("model.py"):
            raise ValueError("a bug of ours")
        return real(data, path, *args, **kwargs)

    monkeypatch.setattr(files_module, "process_source", broken_on_model)
    code, out, err = invoke("check", "--no-cache", "-j", "1", ".")
    assert code == 2
    assert "model.py:1:1: error: internal error: ValueError: a bug of ours" in err
    assert "Traceback" not in err and len(out.splitlines()) == 3  # other.py is still checked


def test_the_command_line_wrapper_in_process(project, monkeypatch):
    def boom(*args, **kwargs):
        raise KeyError("x")

    monkeypatch.setattr(cli_module, "discover", boom)
    code, _, err = invoke("fix", ".")
    assert code == 2 and err.strip() == "error: internal error: KeyError: 'x' (-v shows the traceback)"


# -- item 12: the file-system parts ----------------------------------------------------------


@posix_only
def test_a_symlink_loop_does_not_stop_the_run(project):
    os.symlink("b.py", project / "a.py")
    os.symlink("a.py", project / "b.py")
    os.symlink("nowhere.py", project / "dangling.py")
    os.symlink(".", project / "here")  # a folder loop: links to folders are not followed
    code, out, err = invoke("check", "--no-cache", ".")
    assert code == 1 and len(out.splitlines()) == 3
    assert "warning: a.py: skipped: Too many levels of symbolic links" in err
    assert "warning: dangling.py: skipped: No such file or directory" in err


@posix_only
def test_a_fifo_is_refused_not_read(project):
    os.mkfifo(project / "pipe.py")
    code, out, err = invoke("check", "--no-cache", "pipe.py", "model.py")  # would block if opened
    assert code == 2 and "pipe.py:1:1: error: cannot read: is not a regular file" in err
    assert len(out.splitlines()) == 3
    code, out, _ = invoke("check", "--no-cache", ".")  # under a folder: not a source file
    assert code == 1


def test_excludes_that_leave_nothing_say_so(project):
    code, out, err = invoke("check", "--no-cache", ".", "--config", _excluding(project, "*.py"))
    assert code == 0 and out == ""
    assert "warning: no Python files found" in err


def _excluding(project, pattern) -> pathlib.Path:
    config = project / "pyproject.toml"
    config.write_text(f'[tool.inplacefix]\nextend-exclude = ["{pattern}"]\n')
    return config


def test_fix_does_not_read_stdin(project):
    code, _, err = invoke("fix", "-")
    assert code == 2 and "fix does not read stdin" in err


def test_a_stale_temporary_file_is_removed_by_the_next_fix(project):
    stale = project / ".model.py.ab12cd_9.inplacefix"
    fresh = project / ".model.py.zz12cd_9.inplacefix"
    foreign = project / "notes.inplacefix"
    for p in (stale, fresh, foreign):
        p.write_text("x += 1\n")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    os.utime(foreign, (old, old))
    code, out, err = invoke("check", "--no-cache", ".")
    assert len(out.splitlines()) == 3 and stale.exists(), "check neither reads nor removes it"
    code, _, err = invoke("fix", "--no-cache", ".")
    assert not stale.exists() and "removed .model.py.ab12cd_9.inplacefix: a temporary file" in err
    assert fresh.exists() and foreign.exists(), "a recent one may be another run's; a foreign name is not ours"


@posix_only
@pytest.mark.parametrize("linked", [False, True], ids=["atomic", "in-place"])
def test_a_write_that_fails_leaves_the_file_whole(project, linked):
    """A file-size limit (RLIMIT_FSIZE) fails the write as a full disk would, for real."""
    import resource

    path = project / "model.py"
    if linked:  # a hard link: the write goes in place
        os.link(path, project / "twin.py")
    limit = len(BROKEN) + 4  # the fixed text is longer

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    proc = subprocess.run([sys.executable, "-m", "codemod", "fix", "--no-cache", "model.py"], cwd=project,
                          capture_output=True, text=True, timeout=120, preexec_fn=limited,
                          env={**_env(), "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 2, proc.stderr
    assert "model.py:1:1: error: cannot write: File too large" in proc.stderr
    assert path.read_text() == BROKEN
    assert os.stat(path).st_nlink == (2 if linked else 1)
    assert [p.name for p in project.iterdir() if p.name.endswith(".inplacefix")] == []
