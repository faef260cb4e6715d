"""The conventions users bring from Ruff, each through the CLI on real files: output formats,
statistics, exit-code flags, the output file, quiet, settings (extend-select, per-file-ignores,
--config KEY=VALUE, the nearest configuration file, force-exclude), --add-noqa, rules as JSON."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
import yaml
from typer.testing import CliRunner

from codemod.frontends.cli import app

from .conftest import ROOT
from .test_cli import BROKEN

runner = CliRunner()
DOCS = "https://inplacefix.readthedocs.io/en/latest/rules/"


def run(*args, input=None):
    result = runner.invoke(app, [str(a) for a in args], input=input)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(BROKEN)
    return tmp_path


def test_github_annotations_follow_ruffs_shape(project):
    code, out, _ = run("check", "--no-cache", "--output-format", "github", "model.py")
    assert code == 1
    first = out.splitlines()[0]
    assert first == (
        f"::error title=inplacefix (IPF101),file={project / 'model.py'},line=7,col=5,endLine=7,endColumn=11::"
        "model.py:7:5: IPF101 [*] In-place `+=` on `h`: `h` is the output of `torch.sigmoid` at line 6, "
        "which autograd saves for backward")
    assert len(out.splitlines()) == 3


def test_github_annotates_a_file_that_could_not_be_checked(project):
    (project / "bad.py").write_text("import torch\nx = torch.ones(2)\nx +=\n")
    code, out, _ = run("check", "--no-cache", "--output-format", "github", "bad.py")
    assert code == 2
    assert out.startswith(f"::error title=inplacefix error,file={project / 'bad.py'},line=3,col=")
    assert "::bad.py:3:" in out


def test_github_escapes_what_would_end_a_property(project, tmp_path):
    odd = tmp_path / "a,b:c.py"
    odd.write_text(BROKEN)
    out = run("check", "--no-cache", "--output-format", "github", odd.name)[1]
    assert "file=" + str(tmp_path).replace(":", "%3A").replace(",", "%2C") + "/a%2Cb%3Ac.py," in out


def test_json_lines_one_finding_per_line_with_url(project):
    code, out, _ = run("check", "--no-cache", "--output-format", "json-lines", "model.py")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and [r["code"] for r in rows] == ["IPF101", "IPF104", "IPF101"]
    assert rows[0]["url"] == DOCS + "augmented-assignment/"
    assert rows[0]["fix"]["edits"][0]["content"] == "    h = h + 1"
    document = json.loads(run("check", "--no-cache", "--output-format", "json", "model.py")[1])
    assert document["findings"] == rows


def test_gitlab_code_quality_with_distinct_fingerprints(project):
    report = json.loads(run("check", "--no-cache", "--output-format", "gitlab", "model.py")[1])
    assert [r["check_name"] for r in report] == ["IPF101", "IPF104", "IPF101"]
    assert report[0]["location"] == {"path": "model.py", "positions": {
        "begin": {"line": 7, "column": 5}, "end": {"line": 7, "column": 11}}}
    assert len({r["fingerprint"] for r in report}) == 3
    again = json.loads(run("check", "--no-cache", "--output-format", "gitlab", "model.py")[1])
    assert [r["fingerprint"] for r in again] == [r["fingerprint"] for r in report]


def test_junit_xml_a_failure_per_finding_and_a_pass_when_clean(project):
    root = ET.fromstring(run("check", "--no-cache", "--output-format", "junit", "model.py")[1])
    assert root.tag == "testsuites" and root.get("failures") == "3"
    cases = root.findall("./testsuite[@name='model.py']/testcase")
    assert [c.get("name") for c in cases] == ["org.inplacefix.IPF101", "org.inplacefix.IPF104", "org.inplacefix.IPF101"]
    assert cases[0].get("line") == "7" and cases[0].find("failure") is not None
    (project / "clean.py").write_text("import torch\nx = torch.ones(2)\n")
    clean = ET.fromstring(run("check", "--no-cache", "--output-format", "junit", "clean.py")[1])
    assert clean.get("failures") == "0" and [c.get("name") for c in clean.iter("testcase")] == ["No errors found"]


def test_full_shows_source_carets_fix_and_link(project):
    out = run("check", "--no-cache", "--output-format", "full", "model.py")[1]
    assert "7 |     h += 1\n  |     ^^^^^^ IPF101\n" in out
    assert "= help (safe fix): Rewrite as `h = h + 1`" in out
    assert "= docs: " + DOCS + "augmented-assignment/" in out


def test_sarif_rules_have_help_uri(project):
    doc = json.loads(run("check", "--no-cache", "--output-format", "sarif", "model.py")[1])
    rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["IPF104"]["helpUri"] == DOCS + "subscript-assignment/"


def test_format_is_a_deprecated_alias(project):
    code, out, err = run("check", "--no-cache", "--format", "json", "model.py")
    assert code == 1 and "deprecated" in err and len(json.loads(out)["findings"]) == 3
    assert run("check", "--format", "json", "--output-format", "sarif", "model.py")[0] == 2
    assert run("check", "--output-format", "nope", "model.py")[0] == 2


def test_statistics_count_per_code(project):
    code, out, _ = run("check", "--no-cache", "--statistics", "model.py")
    assert code == 1
    assert out.splitlines() == ["2\tIPF101\t[*] augmented-assignment-hazard", "1\tIPF104\t[*] subscript-assignment-hazard"]
    rows = json.loads(run("check", "--no-cache", "--statistics", "--output-format", "json", "model.py")[1])
    assert rows[0] == {"code": "IPF101", "name": "augmented-assignment-hazard", "count": 2, "fixable": True}


def test_show_fixes_on_check_and_fix(project):
    out = run("check", "--no-cache", "--show-fixes", "model.py")[1]
    assert "    fix (safe): Rewrite as `h = h + 1`" in out.splitlines()
    code, out, _ = run("fix", "--no-cache", "--show-fixes", "model.py")
    assert out.splitlines() == ["Fixed 2 findings:", "- model.py:", "    1 × IPF101 (augmented-assignment-hazard)",
                                "    1 × IPF104 (subscript-assignment-hazard)"]


def test_exit_zero_and_exit_non_zero_on_fix(project):
    assert run("check", "--no-cache", "--exit-zero", "model.py")[0] == 0
    assert run("check", "--no-cache", "--exit-zero", "missing.py")[0] == 2  # a failure stays 2
    assert run("fix", "--no-cache", "--select", "IPF104", "model.py")[0] == 0  # fixed, nothing left
    (project / "model.py").write_text(BROKEN)
    assert run("fix", "--no-cache", "--select", "IPF104", "--exit-non-zero-on-fix", "model.py")[0] == 1
    assert run("fix", "--no-cache", "--select", "IPF104", "--exit-non-zero-on-fix", "model.py")[0] == 0


def test_output_file_and_quiet(project):
    code, out, err = run("check", "--no-cache", "--quiet", "--output-format", "json", "-o", "out/report.json", "model.py")
    assert code == 1 and out == "" and err == ""
    assert len(json.loads((project / "out" / "report.json").read_text())["findings"]) == 3
    code, out, err = run("check", "--no-cache", "-q", "model.py")
    assert len(out.splitlines()) == 3 and err == ""
    (project / "ro").mkdir()
    (project / "ro" / "report.json").mkdir()  # a folder where the file should go
    assert run("check", "--no-cache", "-o", "ro/report.json", "model.py")[0] == 2


def test_fix_output_file_holds_the_diff_or_the_report(project):
    """`fix -o`: the diff (its bytes, as `git apply` needs them) or what remains goes to the file."""
    original = (project / "model.py").read_bytes()
    code, out, _ = run("fix", "--no-cache", "--diff", "-o", "out/fix.diff", "model.py")
    assert code == 1 and out == ""
    diff = (project / "out" / "fix.diff").read_bytes()
    assert diff.startswith(b"--- ") and b"+++ " in diff
    assert (project / "model.py").read_bytes() == original  # --diff writes nothing else
    code, out, _ = run("fix", "--no-cache", "--output-format", "json", "-o", "remaining.json", "model.py")
    assert out == ""
    remaining = json.loads((project / "remaining.json").read_text())["findings"]
    assert code == (1 if remaining else 0)
    assert (project / "model.py").read_bytes() != original  # the fix itself was written
    (project / "ro").mkdir()
    (project / "ro" / "fix.diff").mkdir()
    (project / "model.py").write_bytes(original)
    assert run("fix", "--no-cache", "--diff", "-o", "ro/fix.diff", "model.py")[0] == 2


def test_extend_select_keeps_the_default_selection(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nextend-select = ["IPF0"]\n')
    out = run("check", "--no-cache", "model.py")[1]
    assert [line.split()[1] for line in out.splitlines()] == ["IPF101", "IPF104", "IPF101", "IPF001"]
    (project / "pyproject.toml").unlink()
    out = run("check", "--no-cache", "--extend-select", "IPF001", "model.py")[1]
    assert [line.split()[1] for line in out.splitlines()] == ["IPF101", "IPF104", "IPF101", "IPF001"]


def test_per_file_ignores_by_glob(project):
    (project / "tests").mkdir()
    (project / "tests" / "test_model.py").write_text(BROKEN)
    (project / "pyproject.toml").write_text(
        '[tool.inplacefix.per-file-ignores]\n"tests/**" = ["IPF1"]\n"model.py" = ["IPF104"]\n')
    out = run("check", "--no-cache", ".")[1]
    assert [line.split()[:2] for line in out.splitlines()] == [["model.py:7:5:", "IPF101"], ["model.py:11:5:", "IPF101"]]
    (project / "pyproject.toml").write_text('[tool.inplacefix.per-file-ignores]\n"!tests/**" = ["IPF101"]\n')
    out = run("check", "--no-cache", ".")[1]  # negated: every file but those under tests/
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["model.py:9:5:", "IPF104"], ["tests/test_model.py:7:5:", "IPF101"], ["tests/test_model.py:9:5:", "IPF104"],
        ["tests/test_model.py:11:5:", "IPF101"]]


@pytest.mark.parametrize("table, problem", [
    ('[tool.inplacefix.per-file-ignores]\n"" = ["IPF1"]\n', "bad glob pattern"),
    ('[tool.inplacefix.per-file-ignores]\n"!" = ["IPF1"]\n', "bad glob pattern"),
    ('[tool.inplacefix.per-file-ignores]\n"a\\\\" = ["IPF1"]\n', "bad glob pattern"),
    ('[tool.inplacefix.per-file-ignores]\n"x.py" = ["NOPE"]\n', "unknown rule selector"),
    ('[tool.inplacefix]\nper-file-ignores = ["x.py"]\n', "a table of glob pattern"),
])
def test_bad_per_file_ignores_exit_2(project, table, problem):
    (project / "pyproject.toml").write_text(table)
    code, out, err = run("check", "model.py")
    assert code == 2 and out == "" and problem in err and "per-file-ignores" in err


def test_config_key_value_and_file(project):
    out = run("check", "--no-cache", "--config", 'select = ["IPF104"]', "model.py")[1]
    assert [line.split()[1] for line in out.splitlines()] == ["IPF104"]
    code, _, err = run("check", "--config", "nonsense = 1", "model.py")
    assert code == 2 and "unknown setting `nonsense`" in err
    code, _, err = run("check", "--config", "unsafe-fixes = 'yes'", "model.py")
    assert code == 2 and "true or false" in err
    assert run("check", "--config", "missing.toml", "model.py")[0] == 2
    (project / "other.toml").write_text('select = ["IPF104"]\n')
    out = run("check", "--no-cache", "--config", "other.toml", "model.py")[1]
    assert [line.split()[1] for line in out.splitlines()] == ["IPF104"]


def test_nearest_configuration_file_per_file(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nselect = ["IPF104"]\n')
    (project / "sub").mkdir()
    (project / "sub" / "model.py").write_text(BROKEN)
    (project / "sub" / "inplacefix.toml").write_text('select = ["IPF101"]\n')
    out = run("check", "--no-cache", ".")[1]
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["model.py:9:5:", "IPF104"], ["sub/model.py:7:5:", "IPF101"], ["sub/model.py:11:5:", "IPF101"]]
    # the command line's settings stay on top of each file's
    out = run("check", "--no-cache", "--ignore", "IPF101", ".")[1]
    assert [line.split()[:2] for line in out.splitlines()] == [["model.py:9:5:", "IPF104"]]
    (project / "sub" / "inplacefix.toml").write_text('select = [1]\n')
    code, _, err = run("check", "--no-cache", ".")
    assert code == 2 and "inplacefix.toml" in err


def test_a_run_looks_up_each_folders_configuration_once(project, monkeypatch):
    """A one-shot run remembers each folder's nearest configuration file (every file looked up
    seven folders and three names); a process that lives on looks again each time."""
    from codemod import config

    (project / "sub").mkdir()
    (project / "sub" / "inplacefix.toml").write_text('select = ["IPF101"]\n')
    looked = []
    monkeypatch.setattr(config, "config_in", lambda folder, real=config.config_in: looked.append(folder) or real(folder))
    config.remember(True)
    try:
        assert config.nearest_config(project / "sub") == config.nearest_config(project / "sub") \
            == project.resolve() / "sub" / "inplacefix.toml"
        assert looked == [str(project.resolve() / "sub")]
        assert config.nearest_config(project) == config.nearest_config(project)
        assert len(looked) == 1 + len(project.resolve().parents) + 1  # (the folders above it, once)
    finally:
        config.remember(False)
    assert config.nearest_config(project / "sub") is not None and len(looked) == 2 + len(project.resolve().parents) + 1


def test_force_exclude_holds_for_named_files(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nextend-exclude = ["generated/"]\n')
    (project / "generated").mkdir()
    (project / "generated" / "model.py").write_text(BROKEN)
    assert run("check", "--no-cache", "generated/model.py")[0] == 1  # named: checked
    code, out, _ = run("check", "--no-cache", "--force-exclude", "generated/model.py")
    assert code == 0 and out == ""
    code, out, _ = run("check", "--no-cache", "--force-exclude", "-", "--stdin-filename", "generated/model.py",
                       input=BROKEN)
    assert code == 0 and out == ""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert all("--force-exclude" in hook["entry"] for hook in hooks)


def test_add_noqa_keeps_comments_and_is_idempotent(project):
    text = BROKEN.replace("    h += 1\n", "    h += 1  # keep me\n").replace("    y += d\n", "    y += d  # noqa: E501\n")
    (project / "model.py").write_bytes(text.replace("\n", "\r\n").encode())
    code, _, err = run("check", "--no-cache", "--add-noqa", "model.py")
    assert code == 0 and "Added 3 noqa directives." in err
    data = (project / "model.py").read_bytes()
    assert b"    h += 1  # keep me  # noqa: IPF101\r\n" in data
    assert b"    d[0] = 0.0  # noqa: IPF104\r\n" in data
    assert b"    y += d  # noqa: E501, IPF101\r\n" in data
    assert run("check", "--no-cache", "model.py")[0] == 0
    assert "Added 0 noqa directives." in run("check", "--no-cache", "--add-noqa", "model.py")[2]
    assert (project / "model.py").read_bytes() == data


def test_add_noqa_after_a_noqa_with_a_reason(project):
    (project / "model.py").write_text(BROKEN.replace("    h += 1\n", "    h += 1  # noqa: E501 long line\n"))
    assert run("check", "--no-cache", "--add-noqa", "--select", "IPF101", "model.py")[0] == 0
    text = (project / "model.py").read_text()
    assert "    h += 1  # noqa: E501 long line  # noqa: IPF101\n" in text
    assert run("check", "--no-cache", "--select", "IPF101", "model.py")[0] == 0
    assert "Added 0" in run("check", "--no-cache", "--add-noqa", "--select", "IPF101", "model.py")[2]


def test_rules_as_json_and_rule_all():
    doc = json.loads(run("rules", "--output-format", "json")[1])
    codes = [r["code"] for r in doc["rules"]]
    assert "IPF001" in codes and "IPF101" in codes and doc["reasons"]
    first = next(r for r in doc["rules"] if r["code"] == "IPF001")
    assert first["url"] == DOCS + "augmented-assignment/" and first["name"] == "augmented-assignment"
    code, out, _ = run("rule", "--all")
    assert code == 0 and all(f"{c} " in out for c in codes)
    pages = json.loads(run("rule", "--all", "--output-format", "json")[1])
    assert [p["code"] for p in pages] == codes and all(p["explanation"] for p in pages)
    assert json.loads(run("rule", "IPF104", "--output-format", "json")[1])["url"] == DOCS + "subscript-assignment/"
    assert run("rule")[0] == 2 and run("rule", "IPF001", "--all")[0] == 2
    assert run("rules", "--output-format", "xml")[0] == 2


def test_clean_removes_cache_folders_and_never_follows_links(project, tmp_path_factory):
    assert run("check", "model.py")[0] == 1
    assert (project / ".inplacefix_cache").is_dir()
    (project / "sub").mkdir()
    (project / "sub" / ".inplacefix_cache").mkdir()
    (project / "sub" / ".inplacefix_cache" / "entry.json").write_text("{}")
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "precious.txt").write_text("keep")
    (project / "linked").mkdir()
    (project / "linked" / ".inplacefix_cache").symlink_to(elsewhere, target_is_directory=True)
    (project / "through").symlink_to(elsewhere / "..", target_is_directory=True)
    code, _, err = run("clean")
    assert code == 0
    assert not (project / ".inplacefix_cache").exists() and not (project / "sub" / ".inplacefix_cache").exists()
    assert not os.path.lexists(project / "linked" / ".inplacefix_cache")
    assert (elsewhere / "precious.txt").read_text() == "keep"
    assert (project / "model.py").exists() and "removed" in err
    (elsewhere / ".inplacefix_cache").mkdir()
    assert run("clean", "through")[0] == 0 and (elsewhere / ".inplacefix_cache").is_dir()  # a named link: not walked


SUPPRESSED = BROKEN.replace("import torch\n", "import torch\n# inplacefix: noqa: IPF104\n", 1).replace(
    "    y += d\n", "    y += d  # noqa: IPF101, E501\n").replace("    z += 1\n", "    z += 1  # noqa: IPF101\n")


def test_file_level_suppression(project):
    (project / "model.py").write_text(SUPPRESSED)
    out = run("check", "--no-cache", "model.py")[1]
    assert [line.split()[1] for line in out.splitlines()] == ["IPF101"]  # h += 1 alone
    (project / "model.py").write_text(SUPPRESSED.replace("# inplacefix: noqa: IPF104\n", "# inplacefix: noqa\n"))
    assert run("check", "--no-cache", "model.py")[:2] == (0, "")
    # another tool's file comment, or one after code, is not ours
    for text in ("# ruff: noqa\n", "# flake8: noqa\n", "x = 1  # inplacefix: noqa\n"):
        (project / "model.py").write_text(SUPPRESSED.replace("# inplacefix: noqa: IPF104\n", text))
        assert "IPF104" in run("check", "--no-cache", "model.py")[1], text


def test_unused_suppressions_are_their_own_code(project):
    text = SUPPRESSED.replace("    h += 1\n", "    h = h + 1  # noqa: IPF101\n")
    (project / "model.py").write_text(text)
    assert run("check", "--no-cache", "model.py")[0] == 0  # off by default
    code, out, _ = run("check", "--no-cache", "--extend-select", "IPF900", "model.py")
    # h's finding is gone; z += 1 is a candidate (IPF001), never IPF101; y's and the file's are used
    assert code == 1 and out.splitlines() == [
        "model.py:8:16: IPF900 Unused suppression `# noqa: IPF101`: `IPF101` reports nothing here",
        "model.py:14:13: IPF900 Unused suppression `# noqa: IPF101`: `IPF101` reports nothing here"]
    doc = json.loads(run("rule", "IPF900", "--output-format", "json")[1])
    assert doc["name"] == "unused-noqa" and doc["url"] == DOCS + "unused-noqa/"
    out = run("check", "--no-cache", "--select", "IPF900,IPF104", "model.py")[1]  # IPF101 not selected: not judged
    assert out == ""
    (project / "plain.py").write_text("x = 1  # noqa: IPF104, F401\ny = 2  # noqa\n")
    out = run("check", "--no-cache", "--extend-select", "IPF900", "plain.py")[1]
    assert out.splitlines() == ["plain.py:1:8: IPF900 Unused suppression `# noqa: IPF104, F401`: `IPF104` reports nothing here"]


def test_stdin_takes_the_per_file_ignores_of_its_name(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix.per-file-ignores]\n"gen_*.py" = ["IPF104"]\n')
    out = run("check", "--no-cache", "-", "--stdin-filename", "gen_model.py", input=BROKEN)[1]
    assert [line.split()[1] for line in out.splitlines()] == ["IPF101", "IPF101"]


def test_runtime_commands_take_output_format_too(project):
    code, _, err = run("run", "--output-format", "sarif", "model.py")
    assert code == 2 and "--output-format sarif is for check" in err


def test_per_file_ignores_survive_the_cache(project):
    """Two files with the same bytes, one under a per-file ignore: each keeps its own findings
    when the second run answers from the cache."""
    (project / "gen_model.py").write_text(BROKEN)
    (project / "pyproject.toml").write_text('[tool.inplacefix.per-file-ignores]\n"gen_*.py" = ["IPF1"]\n')
    first = run("check", ".")[1]
    assert run("check", ".")[1] == first
    assert {line.split(":")[0] for line in first.splitlines()} == {"model.py"}


def test_gitlab_fingerprints_survive_moved_lines(project):
    # Messages name line numbers ("at line 6"): a fingerprint that hashed them would change when
    # a line is added above, and GitLab would report every finding as fixed and new again.
    before = json.loads(run("check", "--no-cache", "--output-format", "gitlab", "model.py")[1])
    (project / "model.py").write_text("# a comment\n\n" + BROKEN)
    after = json.loads(run("check", "--no-cache", "--output-format", "gitlab", "model.py")[1])
    assert [r["location"]["positions"]["begin"]["line"] for r in after] == \
        [r["location"]["positions"]["begin"]["line"] + 2 for r in before]
    assert "line 8" in after[0]["description"]  # the description keeps the line it names
    assert [r["fingerprint"] for r in after] == [r["fingerprint"] for r in before]
    assert len({r["fingerprint"] for r in after}) == 3


def test_fix_prints_the_findings_that_remain_in_the_output_format(project):
    # `d = d.clone()` is inserted above `y += d`: what remains is reported where it is now
    code, out, err = run("fix", "--no-cache", "--output-format", "json", "model.py")
    assert code == 1 and "Fixed 2 findings" in err
    remaining = json.loads(out)["findings"]
    assert [(r["code"], r["location"]["row"]) for r in remaining] == [("IPF101", 12)]
    assert "at line 11" in remaining[0]["message"]
    assert json.loads(run("check", "--no-cache", "--output-format", "json", "model.py")[1])["findings"] == remaining
    code, out, _ = run("fix", "--no-cache", "--output-format", "concise", "model.py")  # nothing more to fix
    assert code == 1 and out.startswith("model.py:12:5: IPF101 [unsafe] ")
    code, out, _ = run("fix", "--no-cache", "--unsafe-fixes", "--output-format", "github", "model.py")
    assert code == 0 and out == ""
    code, out, _ = run("fix", "--no-cache", "model.py")  # no format asked for: stdout stays empty
    assert code == 0 and out == ""


def test_output_format_setting(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix]\noutput-format = "github"\n')
    code, out, _ = run("check", "--no-cache", "model.py")
    assert code == 1 and out.startswith("::error title=inplacefix (IPF101)")
    assert run("check", "--no-cache", "--output-format", "concise", "model.py")[1].startswith("model.py:7:5:")
    code, out, _ = run("fix", "--no-cache", "--diff", "model.py")  # --diff keeps printing the diff
    assert code == 1 and out.startswith("--- a/model.py") and "::" not in out
    code, out, _ = run("fix", "--no-cache", "model.py")
    assert code == 1 and out.startswith("::error title=inplacefix (IPF101),") and ",line=12," in out
    code, out, _ = run("check", "--no-cache", "--config", "output-format = 'json-lines'", "model.py")
    assert json.loads(out.splitlines()[0])["code"] == "IPF101"
    (project / "pyproject.toml").write_text('[tool.inplacefix]\noutput-format = "xml"\n')
    code, _, err = run("check", "--no-cache", "model.py")
    assert code == 2 and "pyproject.toml" in err and "output-format" in err and "github" in err


def test_the_setting_knows_every_output_format():
    from codemod.config import OUTPUT_FORMATS
    from codemod.frontends.formats import OutputFormat

    assert set(OUTPUT_FORMATS) == {f.value for f in OutputFormat}


def test_nested_configuration_files_exclude_what_is_under_them(project):
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nextend-exclude = ["legacy/"]\n')
    sub = project / "sub"
    for folder in (sub / "generated", sub / "legacy", sub / "kept"):
        folder.mkdir(parents=True)
        (folder / "model.py").write_text(BROKEN)
    (sub / "inplacefix.toml").write_text('extend-exclude = ["generated/", "/kept/model.py"]\n')
    (project / "kept").mkdir()
    (project / "kept" / "model.py").write_text(BROKEN)  # `/kept/model.py` is relative to sub/

    def files(*args):
        out = run("check", "--no-cache", "--output-format", "json-lines", *args)[1]
        return sorted({json.loads(line)["filename"] for line in out.splitlines()})

    assert files(".") == ["kept/model.py", "model.py"]
    assert files("sub") == []
    assert files("--force-exclude", "sub/generated/model.py", "sub/kept/model.py", "sub/legacy/model.py") == []
    assert files("sub/generated/model.py") == ["sub/generated/model.py"]  # named: checked
    for name in ("sub/generated/model.py", "sub/legacy/model.py"):
        code, out, _ = run("check", "--no-cache", "--force-exclude", "-", "--stdin-filename", name, input=BROKEN)
        assert code == 0 and out == "", name
    run("fix", "--no-cache", ".")
    assert (sub / "generated" / "model.py").read_text() == BROKEN
    # a configuration file given with --config is every file's: the nested one is not read
    assert files("--config", "pyproject.toml", ".") == [
        "kept/model.py", "model.py", "sub/generated/model.py", "sub/kept/model.py"]
