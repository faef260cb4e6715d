"""Speed work (issue 27, stop 58) that must change no result: a run without a cache folder
names its index facts without the tool's code (the keys never leave the run), so it does not
read and hash every source file of the tool; a run with one still does (its entries outlive it)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("cached", [False, True])
def test_the_tools_code_is_read_only_for_a_cache(tmp_path, monkeypatch, cached):
    from typer.testing import CliRunner

    from codemod.engine import cache
    from codemod.frontends.cli import app

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text("import torch\n\n\ndef f(x):\n    y = x.exp()\n    y.add_(1)\n    return y\n")
    (tmp_path / "pkg" / "b.py").write_text("import torch\nfrom pkg.a import f\n\n\ndef g(x):\n    return f(x * 2)\n")
    monkeypatch.chdir(tmp_path)
    asked = []
    real = cache._code_digest

    def counted(*args, **kwargs):
        asked.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(cache, "_OWN_DIGEST", [])  # (worked out once per process: not yet here)
    monkeypatch.setattr(cache, "_code_digest", counted)
    args = ["check", "-j", "1", "--output-format", "json", "pkg", *([] if cached else ["--no-cache"])]
    result = CliRunner().invoke(app, args)
    assert '"IPF' in result.output, result.output
    assert bool(asked) == cached, asked
    if cached:  # a rerun answered from the cache says the same
        assert CliRunner().invoke(app, args).output == result.output
