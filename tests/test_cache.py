"""The result cache: salted with everything that decides a result (the interpreter and libcst
included), and an entry that cannot be decoded into a result is a miss, never a crash."""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
import sys

import pytest
from typer.testing import CliRunner

from codemod.config import Settings
from codemod.engine import cache
from codemod.frontends.cli import app

from .conftest import ROOT
from .test_cli import BROKEN

runner = CliRunner()


def key() -> str:
    cache._run_salt.cache_clear()
    try:
        return cache.cache_key(BROKEN.encode(), "model.py", Settings(), False, False)
    finally:
        cache._run_salt.cache_clear()


def test_the_interpreter_salts_the_key(monkeypatch):
    before = key()
    monkeypatch.setattr(sys, "version", "3.12.0 (main) [GCC]")
    monkeypatch.setattr(sys, "version_info", (3, 12, 0, "final", 0))
    assert key() != before


def test_libcst_and_the_tool_versions_salt_the_key(monkeypatch):
    assert importlib.metadata.version("libcst") in cache._libcst_version()
    before = key()
    monkeypatch.setattr(cache, "_libcst_version", lambda: "libcst-0.0.1.dist-info")
    libcst_changed = key()
    monkeypatch.undo()
    monkeypatch.setattr(cache, "__version__", "9.9.9")
    assert len({before, libcst_changed, key()}) == 3


GOOD_FINDING = {
    "code": "IPF101", "message": "m", "span": [7, 4, 7, 10], "status": "safe", "reason": None,
    "fix_title": "t", "cell": None, "fixable": True, "edit": None,
}
BAD_ENTRIES = {
    "not-json": "{",
    "a-list": "[]",
    "findings-a-number": '{"findings": 5}',
    "no-findings": "{}",
    "finding-a-string": '{"findings": ["x"]}',
    "missing-field": json.dumps({"findings": [{k: v for k, v in GOOD_FINDING.items() if k != "span"}]}),
    "code-a-list": json.dumps({"findings": [{**GOOD_FINDING, "code": []}]}),
    "status-a-list": json.dumps({"findings": [{**GOOD_FINDING, "status": []}]}),
    "code-a-number": json.dumps({"findings": [{**GOOD_FINDING, "code": 101}]}),
    "unknown-code": json.dumps({"findings": [{**GOOD_FINDING, "code": "IPF999"}]}),
    "span-of-strings": json.dumps({"findings": [{**GOOD_FINDING, "span": ["a", "b", "c", "d"]}]}),
    "span-too-short": json.dumps({"findings": [{**GOOD_FINDING, "span": [1, 2]}]}),
    "bad-status": json.dumps({"findings": [{**GOOD_FINDING, "status": "bogus"}]}),
    "bad-edit": json.dumps({"findings": [{**GOOD_FINDING, "edit": [[1, 2, 3, 4], 5]}]}),
    "cell-a-string": json.dumps({"findings": [{**GOOD_FINDING, "cell": "3"}]}),
    "fixable-a-string": json.dumps({"findings": [{**GOOD_FINDING, "fixable": "yes"}]}),
    "not-utf8": b"\xff\xfe",
}


@pytest.mark.parametrize("name", BAD_ENTRIES)
def test_an_entry_of_the_wrong_shape_is_a_miss(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "model.py").write_text(BROKEN)
    first = runner.invoke(app, ["check", "model.py"])
    [entry] = (tmp_path / ".inplacefix_cache").rglob("*.json")
    bad = BAD_ENTRIES[name]
    entry.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
    assert cache.Cache(tmp_path / ".inplacefix_cache").get(entry.stem) is None
    again = runner.invoke(app, ["check", "model.py"])
    assert again.exception is None or isinstance(again.exception, SystemExit), again.exception
    assert (again.exit_code, again.stdout) == (first.exit_code, first.stdout)


def test_a_good_entry_is_a_hit(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "ab").mkdir()
    (folder / "ab" / "abcd.json").write_text(json.dumps({"findings": [GOOD_FINDING]}))
    [finding] = cache.Cache(folder).get("abcd")["findings"]
    assert (finding.code, finding.span.line, finding.fixable) == ("IPF101", 7, True)


def test_the_cache_key_covers_every_module_of_the_tool(tmp_path):
    """A changed rule or analysis module must miss the cache, not only a changed engine module
    (the digest once covered ``codemod/engine/`` alone: results of the old rules came back)."""
    import shutil

    from codemod.engine import cache

    root = pathlib.Path(cache.__file__).resolve().parent.parent
    assert cache._code_digest() == cache._code_digest(root)
    copy = tmp_path / "codemod"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = cache._code_digest(copy)
    rule = copy / "rules" / "leaf_update.py"
    rule.write_text(rule.read_text() + "\n# changed\n")
    assert cache._code_digest(copy) != before
