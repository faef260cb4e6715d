"""``repair script.py --write`` writes through the one guarded writer (``engine.fileio``): an
edit saved while the repair runs is kept and reported, every untouched line keeps its own
ending, and the file keeps the encoding its coding cookie names."""

from __future__ import annotations

import pathlib

import pytest

torch = pytest.importorskip("torch")

import codemod.runtime.script_repair as script_repair  # noqa: E402
from codemod.runtime.script import Script, interpreters  # noqa: E402
from codemod.runtime.script_repair import Verdict, repair_script, write_repaired  # noqa: E402

from .test_cli import invoke  # noqa: E402

# A script whose sigmoid output is changed in place; the repair rewrites `h += 1` only.
LINES = [
    b"import torch\n",
    b"\n",
    b"torch.manual_seed(0)\n",
    b"w = torch.randn(4, requires_grad=True)\n",
    b"h = torch.sigmoid(w)\n",
    b"h += 1\n",
    b"(h * 2).sum().backward()\n",
    b"print('grad', w.grad.sum().item())\n",
]
PLAIN = b"".join(LINES)
# Every other line ends in CRLF, the fixed line among them.
MIXED = b"".join(line.replace(b"\n", b"\r\n") if i % 2 else line for i, line in enumerate(LINES))
# latin-1, named by its cookie, with a non-ASCII string the script prints.
LATIN1 = (b"# -*- coding: latin-1 -*-\n" + PLAIN.replace(b"print('grad'", b"print('caf\xe9 \xb5'")
          .replace(b"h += 1\n", b"h += 1  # \xe0 corriger\n"))


@pytest.fixture(scope="module")
def server():
    shared = interpreters(seed=True)
    yield shared
    if shared is not None:
        shared.close()


def _repair(tmp_path: pathlib.Path, data: bytes, server):
    (tmp_path / "train.py").write_bytes(data)
    return repair_script(Script(path="train.py", cwd=str(tmp_path)), max_backward=1, server=server)


@pytest.mark.parametrize("data", [MIXED, PLAIN.replace(b"\n", b"\r")], ids=["mixed", "cr-only"])
def test_a_mixed_ending_file_keeps_every_untouched_line_ending(tmp_path, server, data):
    result = _repair(tmp_path, data, server)
    assert result.verdict is Verdict.verified, (result.reasons, result.actions)
    assert write_repaired(result) == [str(tmp_path / "train.py")]
    assert (tmp_path / "train.py").read_bytes() == data.replace(b"h += 1", b"h = h + 1")


def test_a_latin1_file_with_a_cookie_is_repaired_and_written_in_latin1(tmp_path, server):
    result = _repair(tmp_path, LATIN1, server)
    assert "cannot read the file to fix" not in " ".join(result.actions)
    assert result.verdict is Verdict.verified, (result.reasons, result.actions)
    assert write_repaired(result)
    assert (tmp_path / "train.py").read_bytes() == LATIN1.replace(b"h += 1", b"h = h + 1")
    assert "caf\u00e9 \u00b5" in result.diff() or "h = h + 1" in result.diff()


@pytest.mark.parametrize("when", ["after the first run", "during the proof"])
def test_an_edit_saved_while_the_repair_runs_is_kept_and_reported(tmp_path, monkeypatch, when):
    """The user saves the script at a fixed point of the run: the write is refused (exit 2),
    the user's bytes stay, and nothing says "wrote"."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    script.write_bytes(PLAIN)
    users_edit = PLAIN + b"# the user's edit\n"
    calls = []
    if when == "after the first run":
        real = script_repair.run_script

        def run_then_save(*args, **kwargs):
            done = real(*args, **kwargs)
            calls.append(1)
            if len(calls) == 1:
                script.write_bytes(users_edit)
            return done

        monkeypatch.setattr(script_repair, "run_script", run_then_save)
    else:
        real = script_repair._prove

        def save_then_prove(*args, **kwargs):
            script.write_bytes(users_edit)
            calls.append(1)
            return real(*args, **kwargs)

        monkeypatch.setattr(script_repair, "_prove", save_then_prove)
    code, out, err = invoke("repair", "--write", "--max-backward", "1", "train.py")
    assert calls, "the hook never ran"
    assert script.read_bytes() == users_edit
    assert code == 2, out + err
    assert "changed on disk since it was read" in err
    assert "wrote" not in out


HELPER = b"import torch\n\n\ndef gate(w):\n    h = torch.sigmoid(w)\n    h += 1\n    return h\n"
USES_HELPER = (b"import torch\nfrom helper import gate\n\ntorch.manual_seed(0)\n"
               b"w = torch.randn(4, requires_grad=True)\n(gate(w) * 2).sum().backward()\n")


def test_a_module_saved_between_the_run_and_the_read_is_not_rewritten(tmp_path, monkeypatch, server):
    """The fix goes in an imported module, which the run read (and fixed) before the user saved
    it, and the tool reads after: the fix was computed on another text, so nothing is written."""
    (tmp_path / "helper.py").write_bytes(HELPER)
    (tmp_path / "train.py").write_bytes(USES_HELPER)
    users_edit = HELPER + b"# the user's edit\n"
    real, calls = script_repair.run_script, []

    def run_then_save(*args, **kwargs):
        done = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            (tmp_path / "helper.py").write_bytes(users_edit)
        return done

    monkeypatch.setattr(script_repair, "run_script", run_then_save)
    result = repair_script(Script(path="train.py", cwd=str(tmp_path)), max_backward=1, server=server)
    write_repaired(result)
    assert calls
    assert (tmp_path / "helper.py").read_bytes() == users_edit
    assert not result.written and result.exit_code == 2
    assert any("helper.py" in e and "changed on disk since it was read" in e for e in result.errors)
