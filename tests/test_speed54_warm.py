"""Speed work for the warm run (issue 27, stop 54) that must change no result:

- a file's facts read back from the cache are made without a frozen dataclass's ``__init__``
  per call, and checked with the checks written out: the same facts, the same entries refused;
- the index keeps which of its modules holds a name (``_module_of``, asked by every digest);
  a copy for a worker starts without it, as with the other answers worked out on use;
- the run's module names resolve each folder once (a file that is a link is resolved itself);
- the nearest configuration file: each folder as named is resolved once per run;
- a run with no configuration file imports no TOML parser.
"""

from __future__ import annotations

import json
import os
import pathlib
import pickle
import subprocess
import sys

import pytest

from codemod import config
from codemod.analysis.project import CallFact, module_name
from codemod.engine import project as engine_project
from codemod.engine.project import build_index, facts_from_json, facts_to_json

ROOT = pathlib.Path(__file__).resolve().parent.parent

FILES = {
    "pkg/__init__.py": "from pkg.a import f\n",
    "pkg/a.py": (
        "import torch\n\n\n"
        "def f(x, scale=2.0):\n    x.mul_(scale)\n    return x\n\n\n"
        "class Block(torch.nn.Module):\n    act = None\n\n"
        "    def forward(self, x):\n        return f(x, 3)\n"
    ),
    "pkg/b.py": (
        "import torch\nfrom pkg.a import f, Block\n\n\n"
        "def g(x):\n    with torch.no_grad():\n        f(x)\n    y = f(x, scale=0.5)\n"
        "    b = Block()\n    return b(y), f\n\n\n"
        "def h(w):\n    f(w, 'name')\n    f(w, None)\n    f(w, True)\n"
    ),
    "pkg/sub/__init__.py": "",
    "pkg/sub/c.py": "from pkg.b import g\n\nNAME = 'c'\n\n\ndef k(t):\n    return g(t)\n",
    "top.py": "import pkg\nfrom pkg.sub.c import k\n\nk(1)\n",
}


def _project(root: pathlib.Path) -> list:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return sorted(str(root / n) for n in FILES)


def test_facts_read_back_are_the_facts_made(tmp_path):
    paths = _project(tmp_path / "proj")
    cache = str(tmp_path / "cache")
    made = build_index(paths, cache)
    read = build_index(paths, cache)  # every file's facts from the cache now
    assert made is not None and read is not None
    assert sum(len(f.calls) for f in made.modules.values()) >= 10
    for module, facts in made.modules.items():
        again = read.modules[module]
        assert again == facts.resolved()
        for call, back in zip(facts.calls, again.calls):
            assert back == call and type(back) is CallFact
            assert back.__dict__ == call.__dict__ and list(back.__dict__) == list(call.__dict__)
            assert repr(back) == repr(call) and hash(back) == hash(call)
        assert pickle.loads(pickle.dumps(again)) == again
    assert [read.digest_for(m, passed=False) for m in sorted(read.modules)] == \
        [made.digest_for(m, passed=False) for m in sorted(made.modules)]


def _entry(tmp_path) -> dict:
    paths = _project(tmp_path / "proj")
    index = build_index(paths)
    facts = index.modules["pkg.b"]
    return json.loads(json.dumps(facts_to_json(facts)))


BAD = [
    lambda e: e["calls"][0].__setitem__(2, 1),  # a flag that is no bool
    lambda e: e["calls"][0].__setitem__(5, None),  # `bound` neither
    lambda e: e["calls"][0].__setitem__(0, 3),  # a callee that is no text
    lambda e: e["calls"][0].__setitem__(6, [["0", True, [1]]]),  # a literal's value that is a list
    lambda e: e["calls"][0].__setitem__(6, [["0", 1, 2]]),  # whether literal: no bool
    lambda e: e["calls"][0].__setitem__(6, [["0", True]]),  # two of three
    lambda e: e["calls"][0].append(1),  # a field too many
    lambda e: e["functions"][0].__setitem__(1, ["x", 2]),  # a parameter that is no text
    lambda e: e["functions"][0].__setitem__(2, "no"),  # grad off: no bool
    lambda e: e["functions"][0].__setitem__(3, [1]),  # what it needs: no text
    lambda e: e["classes"].append(["pkg.b.C", [1], []]),  # a base that is no text
    lambda e: e.__setitem__("strings", [None]),
    lambda e: e.__setitem__("exports", []),
]


@pytest.mark.parametrize("spoil", range(len(BAD)))
def test_entries_of_another_shape_are_refused(tmp_path, spoil):
    entry = _entry(tmp_path)
    facts_from_json(json.loads(json.dumps(entry)), "k")  # as written: read
    BAD[spoil](entry)
    with pytest.raises(Exception):
        facts_from_json(entry, "k")


def test_values_of_literals_read_back(tmp_path):
    entry = _entry(tmp_path)
    facts = facts_from_json(entry, "k")
    values = {v for c in facts.calls for _, literal, v in c.args_values if literal}
    assert {0.5, "name", None, True} <= values and any(v is True for v in values)
    assert all(c.args_read_after == frozenset() and c.args_saved == () for c in facts.calls)


def test_a_copy_of_the_index_starts_without_the_owners_kept(tmp_path):
    paths = _project(tmp_path / "proj")
    index = build_index(paths)
    digests = {m: index.digest_for(m, passed=False) for m in index.modules}
    assert index._owners  # kept while the digests were made
    assert index._owners["pkg.a.f"] == "pkg.a" and None in index._owners.values()
    for name, owner in index._owners.items():  # the longest name of a module of the run it starts with
        parts = name.split(".")
        assert owner == next((".".join(parts[:n]) for n in range(len(parts), 0, -1)
                              if ".".join(parts[:n]) in index.modules), None)
    copy = pickle.loads(pickle.dumps(index))
    assert copy._owners == {}
    assert {m: copy.digest_for(m, passed=False) for m in copy.modules} == digests


def _counted(monkeypatch, owner, name: str) -> list:
    """Each first argument ``owner.name`` is called with, as a string (the real one still answers)."""
    seen: list = []
    real = getattr(owner, name)

    def counting(first, *args, **kwargs):
        seen.append(str(first))
        return real(first, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return seen


def test_module_names_resolve_each_folder_once(tmp_path, monkeypatch):
    paths = _project(tmp_path / "proj")
    proj = tmp_path / "proj"
    os.symlink(proj / "pkg" / "sub", proj / "linked")  # a folder that is a link
    os.symlink(proj / "pkg" / "a.py", proj / "pkg" / "sub" / "alias.py")  # a file that is a link
    paths += [str(proj / "linked" / "c.py"), str(proj / "pkg" / "sub" / "alias.py"),
              str(proj / "linked" / "alias.py")]
    expected = {p: module_name(pathlib.Path(p)) for p in paths}
    assert expected[str(proj / "pkg" / "sub" / "alias.py")] == "pkg.a"
    assert expected[str(proj / "linked" / "c.py")] == "pkg.sub.c"
    real = pathlib.Path.resolve
    resolved = _counted(monkeypatch, pathlib.Path, "resolve")
    packages: dict = {}
    folders: dict = {}
    assert {p: module_name(pathlib.Path(p), packages, folders) for p in paths} == expected
    links = [p for p in resolved if p.endswith("alias.py")]  # the links are resolved themselves
    assert len(links) == 2 and len(resolved) - len(links) == len({os.path.dirname(p) for p in paths})
    monkeypatch.setattr(pathlib.Path, "resolve", real)
    assert build_index(paths).module_names == expected


def test_nearest_configuration_resolves_each_folder_once(tmp_path, monkeypatch):
    (tmp_path / "proj" / "inner").mkdir(parents=True)
    (tmp_path / "proj" / ".inplacefix.toml").write_text("")
    (tmp_path / "proj" / "inner" / "inplacefix.toml").write_text("")
    os.symlink(tmp_path / "proj" / "inner", tmp_path / "outside")
    starts = [tmp_path / "proj", tmp_path / "proj" / "inner", tmp_path / "outside", tmp_path] * 3
    expected = [config.nearest_config(s) for s in starts]
    assert expected[2] == tmp_path / "proj" / "inner" / "inplacefix.toml"
    asked = _counted(monkeypatch, os.path, "realpath")
    config.remember(True)
    try:
        assert [config.nearest_config(s) for s in starts] == expected
    finally:
        config.remember(False)
    assert sorted(asked) == sorted({str(s) for s in starts})
    asked.clear()
    assert [config.nearest_config(s) for s in starts] == expected  # not remembered: each time
    assert len(asked) == len(starts)


def test_no_toml_parser_without_a_configuration_file(tmp_path):
    (tmp_path / "m.py").write_text("import torch\n\ndef f(x):\n    return x.exp()\n")
    script = (
        "import sys; from codemod.frontends.cli import app\n"
        "try:\n    app(['check', '--no-cache', 'm.py'])\n"
        "except SystemExit:\n    pass\n"
        "assert 'tomllib' not in sys.modules\n"
        "from codemod.config import _config_value, _read_toml\n"
        "assert _config_value('select = [\"IPF1\"]', ()) is not None\n"
        "assert 'tomllib' in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-c", script], check=True, cwd=tmp_path, env=env)


def test_bad_toml_is_still_reported(tmp_path):
    (tmp_path / ".inplacefix.toml").write_text("select = [\n")
    with pytest.raises(config.ConfigError, match="cannot read"):
        config._read_toml(tmp_path / ".inplacefix.toml")
    with pytest.raises(config.ConfigError, match="neither a file"):
        config._config_value("select = [", ())


def test_the_call_facts_are_made_as_the_dataclass_makes_them():
    made = engine_project._call_fact("m.f", "m.g", True, False, True, False, (("0", True, 1),))
    assert made == CallFact("m.f", "m.g", True, False, True, frozenset(), bound=False,
                            args_values=(("0", True, 1),))
    with pytest.raises(Exception):
        made.callee = "x"  # still frozen
