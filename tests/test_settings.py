"""Settings are validated: every key's type and value, every rule selector, from pyproject.toml
and from the command line alike; a pyproject.toml that cannot be read is an error, not skipped."""

from __future__ import annotations

import os

import pytest
from typer.testing import CliRunner

from codemod.config import ConfigError, Settings, load_settings
from codemod.frontends.cli import app

from .test_cli import BROKEN

runner = CliRunner()


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(BROKEN)
    return tmp_path


def check(*args):
    result = runner.invoke(app, ["check", *map(str, args)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


BAD_TABLES = {
    "unsafe-fixes-string": ('unsafe-fixes = "false"', "unsafe-fixes", "true or false"),
    "notebooks-number": ("include-notebooks = 1", "include-notebooks", "true or false"),
    "ignore-string": ('ignore = "IPF104"', "ignore", "a list"),
    "select-string": ('select = "IPF1"', "select", "a list"),
    "select-unknown": ('select = ["FOO"]', "select", "unknown rule selector `FOO`"),
    "select-no-such-prefix": ('select = ["IPF3"]', "select", "unknown rule selector `IPF3`"),
    "select-too-long": ('select = ["IPF1011"]', "select", "unknown rule selector `IPF1011`"),
    "ignore-number": ("ignore = [104]", "ignore", "a list of strings"),
    "exclude-number": ("exclude = [1]", "exclude", "a list of strings"),
    "extend-exclude-string": ('extend-exclude = "build"', "extend-exclude", "a list"),
}


@pytest.mark.parametrize("name", BAD_TABLES)
def test_bad_values_exit_2_naming_file_and_key(project, name):
    line, key, problem = BAD_TABLES[name]
    (project / "pyproject.toml").write_text(f"[tool.inplacefix]\n{line}\n")
    code, out, err = check("model.py")
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert str(project / "pyproject.toml") in err and f"[tool.inplacefix] {key}:" in err and problem in err


@pytest.mark.parametrize("table", ["[tool]\ninplacefix = 5\n", "tool = 5\n", "[tool]\ninplacefix = [1]\n"])
def test_tables_of_the_wrong_shape_exit_2(project, table):
    (project / "pyproject.toml").write_text(table)
    code, _, err = check("model.py")
    assert code == 2 and "pyproject.toml" in err and "must be a table" in err


def test_prefixes_select_exactly_the_codes_they_start(project):
    settings = Settings(select=("IPF1",))
    assert [c for c in ("IPF001", "IPF004", "IPF101", "IPF104") if settings.selects(c)] == ["IPF101", "IPF104"]
    (project / "pyproject.toml").write_text('[tool.inplacefix]\nselect = ["IPF1"]\nignore = ["IPF104"]\n')
    _, out, _ = check("model.py")
    assert {line.split()[1] for line in out.splitlines()} == {"IPF101"}
    _, out, _ = check("--select", "ipf00", "model.py")  # flags are case-insensitive, as before
    assert {line.split()[1] for line in out.splitlines()} == {"IPF001"}


@pytest.mark.parametrize("flag", ["--select", "--ignore"])
def test_unknown_selectors_on_the_command_line_exit_2(project, flag):
    code, out, err = check(flag, "IPF101,FOO", "model.py")
    assert code == 2 and out == "" and err.strip() == (
        f"error: {flag}: unknown rule selector `FOO` (expected ALL, IPF or a prefix of a rule code such as IPF1 or IPF101)")


def test_broken_nearest_pyproject_exits_2_naming_it(project):
    (project / "pyproject.toml").write_text("[tool.inplacefix\nselect = [\n")
    code, _, err = check("model.py")
    assert code == 2 and str(project / "pyproject.toml") in err and "cannot read" in err


def test_non_utf8_parent_pyproject_exits_2(project):
    (project / "pyproject.toml").write_bytes(b"[project]\nname = 'caf\xe9'\n")
    (project / "sub").mkdir()
    (project / "sub" / "m.py").write_text(BROKEN)
    code, _, err = check("sub/m.py")
    assert code == 2 and str(project / "pyproject.toml") in err and "utf-8" in err.lower()


def test_unreadable_pyproject_exits_2(project):
    os.symlink("pyproject.toml", project / "pyproject.toml")  # a loop: unreadable even for root
    code, _, err = check("model.py")
    assert code == 2 and str(project / "pyproject.toml") in err and "cannot read" in err


def test_pyproject_without_the_table_is_passed_over(project):
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert check("model.py")[0] == 1


def test_load_settings_raises_config_error_not_type_error(tmp_path):
    path = tmp_path / "pyproject.toml"
    path.write_text("[tool.inplacefix]\nassume-same-dtype = 'yes'\n")
    with pytest.raises(ConfigError):
        load_settings(path, tmp_path)
    good = tmp_path / "good.toml"
    good.write_text("[tool.inplacefix]\n")
    assert load_settings(good, tmp_path, select=("IPF",)).select == ("IPF",)
    with pytest.raises(ConfigError, match="--select"):
        load_settings(good, tmp_path, select=("X1",))
