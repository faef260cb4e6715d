"""``fix --diff`` is a patch of the file's real text: ``git apply`` and ``patch`` take it for
every line ending (LF, CRLF, CR-only, mixed) and for lines holding a form feed or U+2028 (which
``str.splitlines`` splits at, git and patch do not), and the file they make is byte for byte
what ``fix`` writes. A statement that starts after a form feed is fixed, not only marked."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from typer.testing import CliRunner

from codemod.frontends.cli import app

runner = CliRunner()

BASE = (
    "import torch\n"
    "\n"
    "\n"
    "def f(x):\n"
    "    h = torch.sigmoid(x)\n"
    "    h += 1\n"
    "    return h\n"
)

CASES = {
    "lf": BASE,
    "crlf": BASE.replace("\n", "\r\n"),
    "cr": BASE.replace("\n", "\r"),
    "mixed": "import torch\r\n\r\n\ndef f(x):\r    h = torch.sigmoid(x)\n    h += 1\r\n    return h\r",
    "u2028": BASE.replace("    h += 1\n", "    s = 'a\u2028b'  # c\u2028d\n    h += 1  # e\u2028f\n"),
    "u2029_nel": BASE.replace("    h += 1\n", "    s = 'a\u2029b\x85c\x1cd'\n    h += 1\n"),
    "form_feed": BASE.replace("\n\ndef f", "\n\f\ndef f").replace("    h += 1\n", "    h += 1\f\n"),
    "form_feed_before_def": BASE.replace("def f", "\fdef f"),
    "form_feed_before_statement": BASE.replace("    h += 1\n", "\f    h += 1\n"),
    "form_feed_module_level": "import torch\nx = torch.randn(3, requires_grad=True)\n"
                              "h = torch.sigmoid(x)\n\fh += 1\nh.sum().backward()\n",
    "no_final_newline": BASE.rstrip("\n"),
}
CONTINUED = BASE.replace("    h += 1\n", "    h += \\\n\f        1  # a\u2028b\n")
WRAP = ("from torch import nn, ones\r\nlin = nn.Linear(2, 2)\n\flin.weight.add_(1)\rlin.weight.mul_(2)\r\n"
        "s = '''\f\n\flin.weight.add_(1)'''\ny = lin(ones(2))")
TWO = ("import torch\n\n\ndef f(x):\n    a = torch.exp(x)\n    b = torch.exp(x)\n    out = a + b\n"
       "\f    a.zero_()\n  \f    b.fill_(2.5)\n    return out, a, b\n")
MORE = {  # (text, what fix makes of it)
    "two_rewritten_lines_after_form_feeds": (TWO, TWO.replace("a.zero_()", "a = torch.zeros_like(a)").replace(
        "b.fill_(2.5)", "b = torch.full_like(b, 2.5)")),
    "continuation_cr": (CONTINUED.replace("\n", "\r"),
                        CONTINUED.replace("\n", "\r").replace("h += \\", "h = \\").replace("        1", "        h + 1")),
    "wrap_mixed_endings": (WRAP, WRAP.replace("ones\r\n", "ones\r\nimport torch\r\n\r\n").replace(
        "\n\flin.weight.add_(1)\rlin.weight.mul_(2)\r\n",
        "\nwith torch.no_grad():\r\n\f    lin.weight.add_(1)\r    lin.weight.mul_(2)\r\n")),
}


def _fixed(text: str) -> str:
    """What the fix should make of the case: the one statement rewritten, nothing else."""
    return text.replace("h += 1", "h = h + 1")


@pytest.mark.parametrize("case", sorted(CASES) + sorted(MORE))
def test_diff_applies_with_git_and_patch_and_equals_fix(case, tmp_path, monkeypatch):
    text, expected = MORE[case] if case in MORE else (CASES[case], _fixed(CASES[case]))
    data = text.encode("utf-8")
    for name in ("diffed", "git", "patch", "fixed"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.py").write_bytes(data)

    monkeypatch.chdir(tmp_path / "diffed")
    result = runner.invoke(app, ["fix", "--diff", "model.py"])
    assert result.exit_code == 1, result.stderr
    diff = result.stdout_bytes
    assert (tmp_path / "diffed" / "model.py").read_bytes() == data  # --diff writes nothing
    (tmp_path / "model.diff").write_bytes(diff)

    monkeypatch.chdir(tmp_path / "fixed")
    result = runner.invoke(app, ["fix", "model.py"])
    assert result.exit_code == 0, result.stderr
    written = (tmp_path / "fixed" / "model.py").read_bytes()
    assert written.decode("utf-8") == expected  # the statement after a form feed too

    subprocess.run(["git", "apply", "-p1", str(tmp_path / "model.diff")], cwd=tmp_path / "git",
                   check=True, capture_output=True)
    assert (tmp_path / "git" / "model.py").read_bytes() == written
    if shutil.which("patch"):
        subprocess.run(["patch", "-p1", "--binary", "-i", str(tmp_path / "model.diff")], cwd=tmp_path / "patch",
                       check=True, capture_output=True)
        assert (tmp_path / "patch" / "model.py").read_bytes() == written


def _apply_json_edit(text: str, edit: dict) -> str:
    """A ``check --format json`` edit applied the way its rows and columns count: lines end at
    ``\\n``, ``\\r\\n`` or ``\\r``; columns are characters, from 1."""
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]

    def offset(loc: dict) -> int:
        return starts[loc["row"] - 1] + loc["column"] - 1

    return text[:offset(edit["location"])] + edit["content"] + text[offset(edit["end_location"]):]


@pytest.mark.parametrize("case", sorted(CASES))
def test_json_edit_is_on_the_real_text(case, tmp_path, monkeypatch):
    text = CASES[case]
    (tmp_path / "model.py").write_bytes(text.encode("utf-8"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["check", "--format", "json", "model.py"])
    [finding] = json.loads(result.stdout)["findings"]
    [edit] = finding["fix"]["edits"]
    assert _apply_json_edit(text, edit) == _fixed(text)


def test_wrap_after_a_form_feed_keeps_it(tmp_path, monkeypatch):
    """The no_grad wrap of statements that start after a form feed (a run of two): each form
    feed stays with its statement."""
    text = ("import torch\n\f\nlin = torch.nn.Linear(2, 2)\n\flin.weight.add_(1)\n  \flin.weight.mul_(2)\n"
            "y = lin(torch.ones(2))\n")
    expected = ("import torch\n\f\nlin = torch.nn.Linear(2, 2)\nwith torch.no_grad():\n"
                "\f    lin.weight.add_(1)\n  \f    lin.weight.mul_(2)\ny = lin(torch.ones(2))\n")
    (tmp_path / "model.py").write_bytes(text.encode("utf-8"))
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["fix", "model.py"])
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "model.py").read_bytes().decode("utf-8") == expected


def test_diff_of_a_latin_1_file_is_in_its_encoding(tmp_path, monkeypatch):
    """git apply matches bytes: the diff of a ``coding: latin-1`` file holds its bytes."""
    data = (b"# -*- coding: latin-1 -*-\nimport torch\n\n\ndef f(x):\n    s = 'caf\xe9'\n"
            b"    h = torch.sigmoid(x)\n    h += 1\n    return h, s\n")
    for name in ("git", "fixed"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "model.py").write_bytes(data)
    monkeypatch.chdir(tmp_path / "git")
    result = runner.invoke(app, ["fix", "--diff", "model.py"])
    assert result.exit_code == 1, result.stderr
    (tmp_path / "model.diff").write_bytes(result.stdout_bytes)
    subprocess.run(["git", "apply", "-p1", str(tmp_path / "model.diff")], cwd=tmp_path / "git",
                   check=True, capture_output=True)
    monkeypatch.chdir(tmp_path / "fixed")
    assert runner.invoke(app, ["fix", "model.py"]).exit_code == 0
    written = (tmp_path / "fixed" / "model.py").read_bytes()
    assert written == data.replace(b"h += 1", b"h = h + 1")
    assert (tmp_path / "git" / "model.py").read_bytes() == written
