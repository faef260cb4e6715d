"""A callee's summary asked by another file's analysis is worked out on the source the index
pass kept for the callee's own file pass (``engine.parsed``) where that pass has not come yet
(``zlib.py`` comes after ``use.py``), as what its calls pass already
was: the file is parsed once per run, and the findings are those of a fresh parse."""

from __future__ import annotations

from typer.testing import CliRunner

LIB = ("import torch\n\n\ndef act(x):\n    y = torch.sigmoid(x)\n    return y\n\n\n"
       "def bump(z):\n    w = z * 2\n    w.add_(1)\n    return w\n")
USE = ("import torch\nfrom pkg.zlib import act\n\n\ndef go(x):\n    y = act(x)\n    y.add_(1)\n"
       "    return y.sum()\n")


def test_a_summary_is_worked_out_on_the_kept_source(tmp_path, monkeypatch):
    from codemod.analysis import source as source_module
    from codemod.engine import parsed
    from codemod.frontends.cli import app

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "zlib.py").write_text(LIB)
    (tmp_path / "pkg" / "use.py").write_text(USE)
    monkeypatch.chdir(tmp_path)
    parses = []
    real = source_module.parse

    def counted(data, filename="<unknown>"):
        parses.append(bytes(data) if not isinstance(data, str) else data.encode())
        return real(data, filename)

    monkeypatch.setattr(source_module, "parse", counted)
    args = ["check", "--no-cache", "-j", "1", "--select", "ALL", "--output-format", "json", "pkg"]
    once = CliRunner().invoke(app, args)
    assert '"pkg/use.py"' in once.output and "act" in once.output  # (the summary of act was asked)
    assert parses.count(LIB.encode()) == 1, parses.count(LIB.encode())
    monkeypatch.setattr(parsed, "BUDGET", 0)  # nothing kept: parsed by each pass and the summary
    parses.clear()
    again = CliRunner().invoke(app, args)
    assert parses.count(LIB.encode()) == 3
    assert once.output == again.output
