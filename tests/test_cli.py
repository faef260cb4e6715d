"""The command line as a user meets it: exit codes, diffs, JSON, writes, settings, files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from typer.testing import CliRunner

from codemod.frontends.cli import app

from .conftest import ROOT

runner = CliRunner()

BROKEN = textwrap.dedent(
    """\
    import torch


    def f(x):
        w = torch.ones(3, requires_grad=True)
        h = torch.sigmoid(w * x)
        h += 1
        d = torch.exp(h)
        d[0] = 0.0
        y = torch.tanh(h)
        y += d
        z = h * 2
        z += 1
        return y + z


    def in_half(x):  # the file computes in half too: `y = y + d` may promote (dtype-promotion)
        return f(x.half())
    """
)
FIXED = BROKEN.replace("    h += 1\n", "    h = h + 1\n").replace(
    "    d[0] = 0.0\n", "    d = d.clone()\n    d[0] = 0.0\n"
)
UNSAFE_FIXED = FIXED.replace("    y += d\n", "    y = y + d\n")
EVERYTHING = UNSAFE_FIXED.replace("    z += 1\n", "    z = z + 1\n")


def invoke(*args):
    result = runner.invoke(app, [str(a) for a in args])
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(BROKEN)
    return tmp_path


def test_check_lists_findings_and_exits_1(project):
    code, out, err = invoke("check", "model.py")
    assert code == 1
    assert out.splitlines() == [
        "model.py:7:5: IPF101 [*] In-place `+=` on `h`: `h` is the output of `torch.sigmoid` at "
        "line 6, which autograd saves for backward",
        "model.py:9:5: IPF104 [*] Write into part of `d`: `d` is the output of `torch.exp` at "
        "line 8, which autograd saves for backward",
        "model.py:11:5: IPF101 [unsafe] In-place `+=` on `y`: `y` is the output of `torch.tanh` "
        "at line 10, which autograd saves for backward (dtype-promotion: the out-of-place "
        "form takes the promoted dtype of its operands, while the in-place form keeps the "
        "target's (e.g. half += float32 stays half))",
    ]
    assert "Found 3 findings: 2 fixable with `inplacefix fix`, 1 more with `--unsafe-fixes`." in err


def test_blanket_selection_adds_harmless_candidates(project):
    code, out, _ = invoke("check", "--select", "IPF", "model.py")
    assert out.splitlines()[-1] == "model.py:13:5: IPF001 [*] In-place `+=` on `z`"
    assert invoke("fix", "--select", "ALL", "--unsafe-fixes", "model.py")[0] == 0
    assert (project / "model.py").read_text() == EVERYTHING


def test_check_exits_0_when_nothing_to_do(project):
    (project / "model.py").write_text("import torch\nx = torch.ones(2) + 1\n")
    assert invoke("check", ".")[0] == 0


def test_diff_prints_and_writes_nothing(project):
    code, out, err = invoke("fix", "--diff", "model.py")
    assert code == 1
    assert out.startswith("--- a/model.py\n+++ b/model.py\n")
    assert "-    h += 1\n+    h = h + 1\n" in out and "+    d = d.clone()\n" in out
    assert (project / "model.py").read_text() == BROKEN
    assert "Would fix 2 findings in 1 file." in err


def test_fix_writes_then_a_second_run_changes_nothing(project):
    code, _, err = invoke("fix", "model.py")
    assert (project / "model.py").read_text() == FIXED
    assert code == 1, "an unsafe fix remains"
    assert "1 unsafe fix not applied" in err
    code, out, err = invoke("fix", "--diff", "model.py")
    assert out == "" and "Would fix 0 findings" in err


def test_unsafe_fixes_are_applied_on_request(project):
    assert invoke("fix", "--unsafe-fixes", "model.py")[0] == 0
    assert (project / "model.py").read_text() == UNSAFE_FIXED
    assert invoke("check", "model.py")[0] == 0


def test_select_and_ignore(project):
    code, out, _ = invoke("check", "--select", "IPF104", "model.py")
    assert [line.split()[1] for line in out.splitlines()] == ["IPF104"]
    code, out, _ = invoke("check", "--ignore", "IPF101,IPF104", "model.py")
    assert out == "" and code == 0


def test_json_edits_rebuild_the_fixed_file(project):
    code, out, _ = invoke("check", "--format", "json", "--select", "ALL", "model.py")
    doc = json.loads(out)
    assert code == 1 and doc["version"] == 1 and doc["errors"] == []
    first = doc["findings"][0]
    assert set(first) == {"filename", "cell", "code", "rule", "url", "message", "status", "reason",
                          "reason_text", "location", "end_location", "fix"}
    assert first["location"] == {"row": 7, "column": 5}
    assert first["fix"]["applicability"] == "safe"
    # Applying the safe edits, last first, as an editor would, gives what `fix` writes.
    lines = BROKEN.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    text = BROKEN
    edits = [e for f in doc["findings"] if f["status"] == "safe" for e in f["fix"]["edits"]]
    for e in sorted(edits, key=lambda e: (e["location"]["row"], e["location"]["column"]), reverse=True):
        start = offsets[e["location"]["row"] - 1] + e["location"]["column"] - 1
        end = offsets[e["end_location"]["row"] - 1] + e["end_location"]["column"] - 1
        text = text[:start] + e["content"] + text[end:]
    assert text == FIXED.replace("    z += 1\n", "    z = z + 1\n")


def test_unparsable_file_is_reported_and_untouched(project):
    bad = b"import torch\nx = torch.ones(2)\nx += 1\ndef broken(:\n"
    (project / "bad.py").write_bytes(bad)
    code, _, err = invoke("fix", ".")
    assert code == 2
    assert "bad.py:4:" in err and "cannot parse" in err
    assert (project / "bad.py").read_bytes() == bad
    assert (project / "model.py").read_text() == FIXED, "the other files are still processed"


def test_missing_file_exits_2(project):
    code, _, err = invoke("check", "nope.py")
    assert code == 2 and "cannot read" in err


@pytest.mark.parametrize(
    "data",
    [
        b"import torch\r\nx = torch.ones(2)\r\nx.add_(1)\r\n",  # CRLF
        b"\xef\xbb\xbfimport torch\nx = torch.ones(2)\nx.add_(1)\n",  # BOM
        b"# -*- coding: latin-1 -*-\nimport torch\nx = torch.ones(2)  # caf\xe9\nx.add_(1)\n",
    ],
    ids=["crlf", "bom", "latin1-cookie"],
)
def test_writes_keep_encoding_line_endings_and_mode(project, data):
    path = project / "enc.py"
    path.write_bytes(data)
    os.chmod(path, 0o750)
    assert invoke("fix", "--select", "IPF", "enc.py")[0] == 0
    assert path.read_bytes() == data.replace(b"x.add_(1)", b"x = x.add(1)")
    assert path.stat().st_mode & 0o777 == 0o750
    assert [p.name for p in project.iterdir() if "inplacefix" in p.name] == [], "no temp file left"


def test_suppression_comments(project):
    (project / "model.py").write_text(textwrap.dedent(
        """\
        import torch
        y = torch.exp(torch.ones(2, requires_grad=True))
        y += 1  # noqa: IPF101
        y *= 2  # noqa
        y -= 1  # inplacefix: ignore[IPF101]
        y /= 2  # inplacefix: ignore
        y **= 2  # noqa: E501
        y += 3  # inplacefix: ignore[IPF104]
        s = "# noqa"; y -= 4
        """
    ))
    code, out, _ = invoke("check", "model.py")
    assert [line.split(":")[1] for line in out.splitlines()] == ["7", "8", "9"]


def test_pyproject_settings(project):
    (project / "pyproject.toml").write_text(textwrap.dedent(
        """\
        [tool.inplacefix]
        ignore = ["IPF104"]
        unsafe-fixes = true
        extend-exclude = ["generated"]
        """
    ))
    (project / "generated").mkdir()
    (project / "generated" / "gen.py").write_text(BROKEN)
    assert invoke("fix", ".")[0] == 0
    assert (project / "model.py").read_text() == BROKEN.replace("    h += 1\n", "    h = h + 1\n").replace(
        "    y += d\n", "    y = y + d\n")
    assert (project / "generated" / "gen.py").read_text() == BROKEN


def test_assume_same_dtype_setting(project):
    (project / "pyproject.toml").write_text("[tool.inplacefix]\nassume-same-dtype = true\n")
    code, out, _ = invoke("check", "model.py")
    assert "[unsafe]" not in out and code == 1


def test_bad_setting_exits_2(project):
    (project / "pyproject.toml").write_text("[tool.inplacefix]\nselct = ['IPF001']\n")
    code, _, err = invoke("check", ".")
    assert code == 2 and "unknown setting `selct`" in err


def test_folders_skip_gitignored_venv_and_build(project):
    (project / ".gitignore").write_text("ignored_dir/\nskip_me.py\n")
    for rel in ["ignored_dir/a.py", "skip_me.py", ".venv/lib/b.py", "build/c.py", "pkg/sub/d.py"]:
        path = project / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(BROKEN)
    code, out, _ = invoke("check", ".", "--select", "IPF104")
    assert sorted({line.split(":")[0] for line in out.splitlines()}) == ["model.py", "pkg/sub/d.py"]
    code, out, _ = invoke("check", "skip_me.py", "--select", "IPF104")
    assert out.startswith("skip_me.py:"), "a file named on the command line is always taken"


def test_parallel_run_matches_serial(project):
    for i in range(8):
        (project / f"m{i}.py").write_text(BROKEN)
    serial = invoke("check", ".", "-j", "1", "--format", "json")[1]
    parallel = invoke("check", ".", "-j", "2", "--format", "json")[1]
    assert serial == parallel and len(json.loads(serial)["findings"]) == 27  # 9 files x 3


def _env() -> dict:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path}


def test_static_path_does_not_import_torch(project):
    script = (
        "import sys; from codemod.frontends.cli import app\n"
        "from codemod.engine.files import process_path; from codemod.config import Settings\n"
        "r = process_path('model.py', Settings(), fix=True, write=False, edits=True)\n"
        "assert r.findings and 'torch' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=project, env=_env())


def test_python_dash_m_entry_point(project):
    proc = subprocess.run([sys.executable, "-m", "codemod", "check", "model.py"], cwd=project,
                          capture_output=True, text=True, env=_env())
    assert proc.returncode == 1 and "IPF104" in proc.stdout


def test_sarif_output(project):
    code, out, _ = invoke("check", "--format", "sarif", "model.py")
    doc = json.loads(out)
    run = doc["runs"][0]
    assert code == 1 and doc["version"] == "2.1.0"
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} >= {"IPF101", "IPF001"}
    first = run["results"][0]
    assert first["ruleId"] == "IPF101" and first["level"] == "warning"
    assert first["locations"][0]["physicalLocation"]["region"]["startLine"] == 7
    assert run["invocations"][0]["executionSuccessful"] is True


def test_cache_makes_reruns_reuse_results(project):
    first = invoke("check", "--select", "ALL", "model.py")
    cached = list((project / ".inplacefix_cache").rglob("*.json"))
    assert len(cached) == 1
    assert (project / ".inplacefix_cache" / ".gitignore").read_text().endswith("*\n")
    assert invoke("check", "--select", "ALL", "model.py") == first
    assert invoke("check", "model.py")[1] != first[1], "other settings miss the cache"
    (project / "model.py").write_text(BROKEN.replace("h += 1", "h -= 1"))
    assert "In-place `-=` on `h`" in invoke("check", "model.py")[1], "changed bytes miss the cache"


def test_no_cache_writes_nothing(project):
    invoke("check", "--no-cache", "model.py")
    assert not (project / ".inplacefix_cache").exists()


def _reader_gone(*args: str) -> subprocess.CompletedProcess:
    """Run the CLI with its standard output's reader already gone (``| head -0``)."""
    child = subprocess.Popen([sys.executable, "-m", "codemod", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=_env(), cwd=ROOT)
    child.stdout.close()
    err = child.stderr.read().decode()
    return subprocess.CompletedProcess(args, child.wait(timeout=120), "", err)


def test_rules_into_a_closed_pipe_exits_0_without_a_traceback():
    done = _reader_gone("rules")
    assert done.returncode == 0, done.stderr
    assert "BrokenPipe" not in done.stderr and "internal error" not in done.stderr


def test_check_into_a_closed_pipe_does_not_pass(tmp_path):
    (tmp_path / "model.py").write_text(BROKEN)
    done = _reader_gone("check", "--no-cache", str(tmp_path / "model.py"))
    assert done.returncode == 141, done.stderr
    assert "BrokenPipe" not in done.stderr and "internal error" not in done.stderr


CLASSIC = textwrap.dedent(
    """\
    import torch

    x = torch.FloatTensor([[1., 2.]])
    w1 = torch.FloatTensor([[2.], [1.]]); w2 = torch.FloatTensor([3.])
    w1.requires_grad = True; w2.requires_grad = True
    d = torch.matmul(x, w1); f = torch.matmul(d, w2)
    d[:] = 1
    f.backward()
    """
)


def test_the_classic_example_is_flagged_and_fixed_by_default(tmp_path, monkeypatch):
    """The example every write-up of the error starts from: grad switched on by attribute."""
    import torch

    monkeypatch.chdir(tmp_path)
    (tmp_path / "classic.py").write_text(CLASSIC)
    code, out, _ = invoke("check", "--no-cache", "classic.py")
    assert code == 1 and "classic.py:7:1: IPF104" in out
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        exec(compile(CLASSIC, "classic.py", "exec"), {})
    assert invoke("fix", "--no-cache", "classic.py")[0] == 0
    scope: dict = {}
    exec(compile((tmp_path / "classic.py").read_text(), "classic.py", "exec"), scope)
    assert scope["w1"].grad.tolist() == [[3.0], [6.0]] and scope["w2"].grad.tolist() == [4.0]
