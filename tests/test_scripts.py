"""``inplacefix run`` and ``repair`` on script-shaped programs (fixtures/scripts/).

Each fixture's header says how to run it (``# run: inplacefix run SCRIPT ARGS``, ``# module:``
for ``-m``) and what to expect; broken ones mark the save with ``# <- saved`` and the line the
fix belongs on with ``# <- modified`` (in whichever file of the project they are). Every run is a
real interpreter with real torch (about 1-3 s each here), so runs are shared: the repairs run
once per module, on a copy of the fixtures.
"""

from __future__ import annotations

import json
import os
import pathlib
import shlex
import shutil
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from codemod.runtime.script import Outcome, Script, interpreters, run_script  # noqa: E402
from codemod.runtime.script_repair import Verdict, compare_records, repair_script, write_repaired  # noqa: E402

from .conftest import FIXTURES  # noqa: E402

SCRIPTS = FIXTURES / "scripts"
ENV = {**os.environ, "PYTHONWARNINGS": "ignore"}


def header(path: pathlib.Path) -> dict:
    out = {}
    for line in path.read_text().splitlines():
        if not line.startswith("# "):
            break
        key, _, value = line[2:].partition(": ")
        out[key.split(" (")[0]] = value
    return out


def marked(path: pathlib.Path, word: str) -> set:
    return {i for i, line in enumerate(path.read_text().splitlines(), 1)
            if "# <-" in line and word in line.split("# <-")[1]}


def script_for(path: pathlib.Path, root: pathlib.Path) -> Script:
    """The Script a fixture's header describes, with ``root`` standing for fixtures/scripts."""
    meta = header(path)
    words = shlex.split(meta["run"].split("inplacefix run ", 1)[1])
    here = root / path.parent.relative_to(SCRIPTS)
    if "module" in meta:
        return Script(module=meta["module"], args=tuple(words[2:]), cwd=str(here.parent))
    return Script(path=words[0], args=tuple(words[1:]), cwd=str(here))


FIXTURE_FILES = sorted(p for p in SCRIPTS.rglob("*.py") if "expect" in header(p))
BROKEN = [p for p in FIXTURE_FILES if header(p)["expect"] == "broken"]
WORKING = [p for p in FIXTURE_FILES if header(p)["expect"] == "working"]


def ident(path: pathlib.Path) -> str:
    return str(path.relative_to(SCRIPTS).with_suffix(""))


def cli(*args, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "codemod", *args], cwd=cwd, env=ENV,
                          capture_output=True, text=True, timeout=600)


def python(script: Script) -> subprocess.CompletedProcess:
    head = ["-m", script.module] if script.module else [script.path]
    return subprocess.run([sys.executable, *head, *script.args], cwd=script.cwd, env=ENV,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> pathlib.Path:
    """A copy of fixtures/scripts: repairs write into it."""
    root = tmp_path_factory.mktemp("scripts") / "scripts"
    shutil.copytree(SCRIPTS, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


@pytest.fixture(scope="module")
def server():
    """One fork server for the module's API runs: torch is imported once, each run forks."""
    shared = interpreters(seed=True)  # None on CUDA builds: each run starts its own interpreter
    yield shared
    if shared is not None:
        shared.close()


@pytest.fixture(scope="module")
def repairs(project, server) -> dict:
    """One repair per broken fixture (each: the located rounds, then the reference)."""
    return {p: repair_script(script_for(p, project), max_backward=2, server=server) for p in BROKEN}


def test_there_are_enough_fixtures():
    assert len(BROKEN) >= 8 and len(WORKING) >= 3
    kinds = " ".join(header(p)["run"] for p in BROKEN)
    assert "-m " in kinds and "--" in kinds  # a -m package, scripts with arguments


@pytest.mark.parametrize("path", BROKEN, ids=ident)
def test_repair_names_both_lines_of_the_first_conflict(path, repairs, project):
    result = repairs[path]
    first = result.rounds[0]
    assert first.outcome is Outcome.conflict and first.conflicts, first.error
    conflict = first.conflicts[0]
    site = conflict["construct"] or conflict["mutation"]
    fix_file = pathlib.Path(site["file"])
    original = SCRIPTS / fix_file.relative_to(project)
    assert site["line"] in marked(original, "modified"), conflict["describe"]
    saved = marked(original, "saved")
    if saved:
        assert conflict["save"]["line"] in saved and conflict["save"]["file"] == site["file"], conflict["describe"]
    assert "modified" in conflict["describe"]


@pytest.mark.parametrize("path", BROKEN, ids=ident)
def test_repair_verifies_and_writes_only_the_culprit_lines(path, repairs):
    result = repairs[path]
    assert result.verdict is Verdict.verified, (result.reasons, result.actions)
    assert result.comparison.gradients >= 1 and result.comparison.passes >= 1
    for file, text in result.repaired.items():
        before, after = result.originals[file].splitlines(), text.splitlines()
        changed = {i for i, line in enumerate(before, 1) if i > len(after) or after[i - 1] != line}
        modified = marked(pathlib.Path(file), "modified") | marked(pathlib.Path(file), "saved")
        assert len(after) - len(before) <= 2 * len(modified)  # a `with torch.no_grad():` per leaf line
        assert min(changed) in modified
    if not result.written:
        assert write_repaired(result) == [f for f in result.repaired if result.repaired[f] != result.originals[f]]
    for file in result.written:
        assert pathlib.Path(file).read_text() == result.repaired[file]


@pytest.mark.parametrize("path", BROKEN, ids=ident)
def test_the_written_repair_runs_clean(path, repairs, project, server):
    """What was written to disk runs under the locator with no conflict: through the CLI for the
    -m package, through the same child (forked: cheaper) for the others."""
    result = repairs[path]
    assert result.verdict is Verdict.verified
    if not result.written:
        write_repaired(result)
    script = script_for(path, project)
    if script.module:
        done = cli("run", "-m", script.module, *script.args, cwd=script.cwd)
        assert done.returncode == 0, done.stderr
        assert "ran with no in-place conflict" in done.stderr and "step 1" in done.stdout
    else:
        again = run_script(script, capture=True, server=server, timeout=300)
        assert again.outcome is Outcome.clean and not again.conflicts, (again.error, again.stderr)
        assert again.backward_passes >= 1


def test_run_reports_both_lines_and_the_fix_and_exits_1(tmp_path):
    root = tmp_path / "scripts"
    shutil.copytree(SCRIPTS, root)
    done = cli("run", "argparse_sigmoid.py", "--steps", "3", "--scale", "2.0", cwd=root)
    assert done.returncode == 1, done.stderr
    path = SCRIPTS / "argparse_sigmoid.py"
    (saved,), (modified,) = marked(path, "saved"), marked(path, "modified")
    assert f"saved    argparse_sigmoid.py:{saved}: gate = torch.sigmoid(w * args.scale)" in done.stdout
    assert f"modified argparse_sigmoid.py:{modified}: gate += 0.5" in done.stdout
    assert "+        gate = gate + 0.5" in done.stdout  # the suggested fix, as a diff
    assert (root / "argparse_sigmoid.py").read_text() == path.read_text()  # run writes nothing


def test_run_json_keeps_the_script_output_out_of_the_document(tmp_path):
    done = cli("run", "--format", "json", "-m", "mpkg.train", "--steps", "2", cwd=SCRIPTS / "mpackage")
    assert done.returncode == 1, done.stderr
    document = json.loads(done.stdout)
    assert document["outcome"] == "conflict" and document["script"] == "-m mpkg.train"
    (conflict,) = document["conflicts"]
    assert conflict["construct"]["line"] in marked(SCRIPTS / "mpackage/mpkg/model.py", "modified")
    assert "inplace=False" in document["suggestions"][0]["diff"]


@pytest.mark.parametrize("path", WORKING, ids=ident)
def test_working_scripts_exit_0_with_their_output_unchanged(path):
    script = script_for(path, SCRIPTS)
    plain = python(script)
    head = ["-m", script.module] if script.module else [script.path]
    done = cli("run", *head, *script.args, cwd=script.cwd)
    assert (done.returncode, plain.returncode) == (0, 0), done.stderr
    assert done.stdout == plain.stdout  # argv, sys.path[0], __file__, cwd, __name__ included
    assert "ran with no in-place conflict" in done.stderr


def test_the_scripts_own_exit_code_and_error_are_reported_as_the_scripts():
    here = SCRIPTS / "working"
    exits = cli("run", "exits_3.py", cwd=here)
    assert exits.returncode == 1 and exits.stdout == "giving up\n", exits.stderr
    assert "exited with code 3 (its own exit" in exits.stderr
    raises = cli("run", "raises.py", cwd=here)
    assert raises.returncode == 1
    assert 'raise ValueError(f"bad data' in raises.stderr and "ValueError: bad data: [1.0, 1.0]" in raises.stderr
    assert "failed on its own (not an in-place conflict)" in raises.stderr
    assert "script_child" not in raises.stderr  # the traceback is the script's, not the tool's


# The script forks; the fork leaves through the script's own exit path (`sys.exit(3)`, no signal)
# and so unwinds through the run's reporting code too. Its parent lets it go only from an atexit
# hook, after the run's process wrote its result and before that process ends: without the check
# that only the script's own process reports, the fork's "exit 3" replaces the parent's clean
# result every time (the order is fixed by a pipe, not slept for).
FORKS = """\
import atexit
import os
import sys

import torch

w = torch.ones(2, requires_grad=True)
(w * 2).sum().backward()
ready, go = os.pipe()
child = os.fork()
if child == 0:
    os.close(go)
    os.read(ready, 1)  # until the parent's exit hook: its run has reported by then
    sys.exit(3)
os.close(ready)


def release_the_fork():
    os.write(go, b"x")
    os.waitpid(child, 0)


atexit.register(release_the_fork)
print("parent done")
"""


def test_only_the_scripts_own_process_reports_the_run(tmp_path, server):
    (tmp_path / "forks.py").write_text(FORKS)
    done = cli("run", "forks.py", cwd=tmp_path)
    assert "JSONDecodeError" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert (done.returncode, done.stdout) == (0, "parent done\n"), done.stderr
    assert "ran with no in-place conflict (1 backward pass)" in done.stderr, done.stderr
    if server is not None:  # the fork server's copies (repair's runs) report the same way
        run = run_script(Script(path="forks.py", cwd=str(tmp_path)), capture=True, server=server, timeout=120)
        assert (run.outcome, run.exit_code, run.backward_passes) == (Outcome.clean, 0, 1), run
        assert run.stdout == "parent done\n"


def test_max_backward_stops_a_long_run_after_the_step():
    here = SCRIPTS / "working"
    done = cli("run", "--max-backward", "2", "train_ok.py", "--steps", "500", cwd=here)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("step 0 ") and "step 10" not in done.stdout
    assert "stopped train_ok.py after 2 backward passes" in done.stderr


def test_tool_errors_exit_2(tmp_path):
    missing = cli("run", "nope.py", cwd=tmp_path)
    assert missing.returncode == 2 and "can't open file 'nope.py'" in missing.stderr
    nothing = cli("run", cwd=tmp_path)
    assert nothing.returncode == 2


def test_working_script_has_nothing_to_repair(server):
    result = repair_script(script_for(SCRIPTS / "working/harmless_inplace.py", SCRIPTS), server=server)
    assert result.verdict is None and not result.changed and result.exit_code == 0


def test_view_error_is_fixed_verified_against_writes_into_copies_and_written(project, server):
    path = project / "view_split.py"
    result = repair_script(script_for(SCRIPTS / "view_split.py", project), server=server)
    assert result.rounds[0].conflicts[0]["kind"] == "view"
    assert result.verdict is Verdict.verified and result.exit_code == 0, result.reasons
    assert "writes into copies" in result.reference
    assert write_repaired(result) and "first = first.mul(3)" in path.read_text()


BASE_READ = ("import torch\n\ntorch.manual_seed(0)\nx = torch.randn(4, 3, requires_grad=True)\nh = x * 2\n"
             "first, second = h.{split}\nfirst.mul_(3)\n(first.sum() + second.sum() + h.sum()).backward()\n"
             "print(x.grad.sum().item())\n")


def test_view_error_whose_tensor_is_read_after_a_copy_is_not_verified(tmp_path, server):
    """``h`` is read after the write: in place (and with grad off) it sees it. The only fix for
    ``split(2)`` writes into a copy, which hides it: NOT verified against views allowed."""
    (tmp_path / "base_read.py").write_text(BASE_READ.format(split="split(2)"))
    result = repair_script(Script(path="base_read.py", cwd=str(tmp_path)), server=server)
    assert result.verdict is Verdict.not_verified and result.exit_code == 1, result.reasons
    assert "views allowed" in result.reference
    assert write_repaired(result) == []


def test_view_error_whose_tensor_is_read_after_verifies_with_ordinary_views(tmp_path, server):
    (tmp_path / "base_read.py").write_text(BASE_READ.format(split="chunk(2)"))
    result = repair_script(Script(path="base_read.py", cwd=str(tmp_path)), server=server)
    assert result.verdict is Verdict.verified and result.exit_code == 0, result.reasons
    assert "views allowed" in result.reference
    assert write_repaired(result) and "h.tensor_split(2)" in (tmp_path / "base_read.py").read_text()


NO_GRAD_VIEWS = """import torch
import torch.nn as nn

torch.manual_seed(0)
fc = nn.Linear(2, 2)
opt = torch.optim.SGD(fc.parameters(), lr=0.1)
for step in range(3):
    h = fc(torch.randn(4, 2))
    with torch.no_grad():
        row = h[0]
        top = h[0:2]
    row.mul_(3)
    loss = (top * fc.weight).sum() + row.sum() + h.pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
"""


def test_views_made_under_no_grad_are_detached_and_verified(tmp_path, server):
    """Two views taken under no_grad, one scaled with grad on, the other read in the loss of a
    training loop: the fix detaches both, verified against views allowed over the optimizer's
    steps."""
    (tmp_path / "train.py").write_text(NO_GRAD_VIEWS)
    result = repair_script(Script(path="train.py", cwd=str(tmp_path)), server=server)
    assert result.verdict is Verdict.verified and result.exit_code == 0, result.reasons
    assert "views made under no_grad detached" in result.reference
    assert write_repaired(result)
    text = (tmp_path / "train.py").read_text()
    assert "row = h[0].detach()" in text and "top = h[0:2].detach()" in text


def _wrong(tmp_path, server, name, old, new, **reference):
    """Record the reference of a fixture and a deliberately wrong rewrite of it; compare."""
    shutil.copy(SCRIPTS / name, tmp_path / name)
    script = Script(path=name, cwd=str(tmp_path))
    source = (tmp_path / name).read_text()
    assert old in source
    common = dict(mode="record", max_backward=2, seed=True, capture=True, workdir=str(tmp_path), server=server)
    ref = run_script(script, **reference, **common)
    bad = run_script(script, sources={str(tmp_path / name): source.replace(old, new)}, **common)
    assert ref.finished and bad.finished, (ref.error, bad.error)
    return compare_records(ref.record, bad.record)


def test_a_rewrite_that_changes_the_values_is_not_verified(tmp_path, server):
    comparison = _wrong(tmp_path, server, "argparse_sigmoid.py", "gate += 0.5", "gate = gate + 0.25", snapshot=True)
    assert comparison.differences and any("/grad/" in d for d in comparison.differences)


def test_a_leaf_update_turned_into_a_dead_store_is_not_verified(tmp_path, server):
    """`p = p - lr * p.grad` runs, but updates nothing: the next pass and the end differ."""
    path = str(tmp_path / "manual_sgd.py")
    (line,) = marked(SCRIPTS / "manual_sgd.py", "modified")
    comparison = _wrong(tmp_path, server, "manual_sgd.py", "p -= lr * p.grad", "p = p - lr * p.grad",
                        no_grad_sites=[(path, line)])
    assert any(d.startswith("pass2/") for d in comparison.differences)
    assert any(d.startswith("final/") for d in comparison.differences)


def test_a_hanging_script_is_killed_at_the_timeout(tmp_path, server):
    (tmp_path / "hang.py").write_text("import time\nprint('start', flush=True)\ntime.sleep(600)\n")
    result = run_script(Script(path="hang.py", cwd=str(tmp_path)), capture=True, timeout=3 if server else 20,
                        server=server)
    assert result.outcome is Outcome.timeout and result.seconds < 30 and result.stdout == "start\n"
    if server is not None:
        after = run_script(Script(path="hang.py", cwd=str(tmp_path)), capture=True, timeout=0.5, server=server)
        assert after.outcome is Outcome.timeout  # the server is still usable after a kill


@pytest.mark.parametrize("words, args, write", [
    (["t.py", "--epochs", "3", "--write"], ("--epochs", "3"), True),  # the tool's options after the script's
    (["--write", "t.py", "--", "--write", "-x"], ("--write", "-x"), True),  # after `--`: all the script's
    (["t.py", "-lr", "0.1", "--lr=3"], ("-lr", "0.1", "--lr=3"), False),
])
def test_repair_splits_the_command_line_between_the_tool_and_the_script(monkeypatch, words, args, write):
    from typer.testing import CliRunner

    import codemod.frontends.cli as cli_module

    seen = []
    monkeypatch.setattr(cli_module, "_repair_script", lambda job, w, *rest: seen.append((job, w)))
    result = CliRunner().invoke(cli_module.app, ["repair", *words])
    assert result.exit_code == 2 or seen, result.output
    (job, wrote), = seen
    assert (job.path, job.args, wrote) == ("t.py", args, write)


def test_locate_on_a_script_points_to_run():
    """The issue's first try: `inplacefix locate train.py` (no ::Name) says what to use instead."""
    from typer.testing import CliRunner

    from codemod.frontends.cli import app

    result = CliRunner().invoke(app, ["locate", str(SCRIPTS / "train_loop.py")])
    assert result.exit_code == 2
    assert "inplacefix run" in result.output


def test_repair_with_dash_m_takes_every_later_word_for_the_module(monkeypatch):
    from typer.testing import CliRunner

    import codemod.frontends.cli as cli_module

    seen = []
    monkeypatch.setattr(cli_module, "_repair_script", lambda job, w, d, n, *rest: seen.append((job, n)))
    CliRunner().invoke(cli_module.app, ["repair", "-m", "pkg.train", "--steps", "2", "--max-backward", "3"])
    (job, max_backward), = seen
    assert (job.module, job.path, job.args, max_backward) == ("pkg.train", None, ("--steps", "2"), 3)


def test_repair_json_document(repairs):
    from codemod.runtime.script_repair import to_json

    document = json.loads(json.dumps(to_json(repairs[SCRIPTS / "manual_sgd.py"])))
    assert document["verdict"] == "verified" and document["script"] == "manual_sgd.py"
    assert document["reference"].startswith("leaf updates applied outside autograd")
    assert document["comparison"]["gradients"] >= 1 and "+        with torch.no_grad():" in document["diff"]
