"""Speed work (issue 27) that must change no result: ``dtype.other_dtype`` in one walk of the
indexed tree, and the garbage collector held back while a file is worked on."""

from __future__ import annotations

import gc

import pytest

from codemod.analysis.dtype import other_dtype
from codemod.analysis.source import Source
from codemod.frontends.workers import each_until_stopped

CASES = [
    # the first in ast.walk's (breadth-first) order, not the first line
    "def f(x):\n    return x.half()\ny = torch.float64\n",
    '"""A docstring that says float16."""\nx = 1\n',
    '"""Doc."""\nmode = "bf16"\n',
    "sd = torch.load(p)\nm.load_state_dict(torch.load(q))\n",
    "m.load_state_dict(torch.load(q))\n",
    "import numpy as np\nt = torch.tensor(np.zeros(3))\n",
    "import numpy as np\nt = torch.tensor([1.0, 2.0])\n",
    "x = y.to(torch.float32)\nz = w.to(dtype)\n",
    "x = y.int()\nn = np.int(3)\n",
    "from torch import bfloat16 as b\n",
    "t = torch.zeros(3, dtype=torch.long)\nu = torch.ones(2, dtype=torch.int32)\n",
    "x = torch.int\n",
    "x = a + b\n",
]


@pytest.mark.parametrize("code", CASES)
def test_other_dtype_walks_the_indexed_tree_in_ast_walks_order(code):
    source = Source(code.encode())
    assert other_dtype(source.tree, source.children) == other_dtype(source.tree)


def test_other_dtype_reports_the_shallowest_first():
    source = Source(CASES[0].encode())
    assert other_dtype(source.tree, source.children) == "`.float64` at line 3"


def test_the_collector_waits_while_a_file_is_worked_on():
    seen = []
    assert gc.isenabled()
    assert list(each_until_stopped(lambda f: seen.append(gc.isenabled()) or f, ["a", "b"])) == ["a", "b"]
    assert seen == [False, False] and gc.isenabled()


def test_the_collector_comes_back_after_a_failure_and_stays_off_if_it_was():
    def boom(_):
        raise ValueError("x")
    with pytest.raises(ValueError):
        list(each_until_stopped(boom, ["a"]))
    assert gc.isenabled()
    gc.disable()
    try:
        list(each_until_stopped(lambda f: f, ["a"]))
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_workers_hold_the_collector_back_too():
    from codemod.frontends.workers import work_on

    assert work_on(lambda f: gc.isenabled(), ["a", "b"]) == [False, False]
    assert gc.isenabled()


CYCLIC = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = torch.sigmoid(self.fc(x))
        h *= 2.0
        v = h.view(-1)
        v.add_(1)
        x[0] = h.sum()
        out = self.act(h)
        out += x
        return out


def helper(t):
    t.mul_(2)
    return t


def main():
    w = torch.randn(3, requires_grad=True)
    y = w.exp()
    y.mul_(2)
    helper(y)
    return Block(3)(y)
'''


@pytest.mark.parametrize("fix", [False, True])
def test_a_files_analysis_leaves_no_reference_cycle(fix):
    """The parts of a model (kinds, views, hazards, summaries, a rule's plans) hold their owner
    weakly: a file's analysis is freed by reference counts when it ends, not by the cyclic
    collector, which scanned every tree of a run (a sixth of a cold ``check``)."""
    from codemod.config import Settings
    from codemod.engine.pipeline import process_source

    settings = Settings(select=("ALL",))
    process_source(CYCLIC.encode(), "cyclic.py", settings, fix=fix)  # imports, first-use caches
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        result = process_source(CYCLIC.encode(), "cyclic.py", settings, fix=fix)
        assert result.findings  # the analysis ran: hazards, views and summaries were asked
        found = len(result.findings)
        del result
        gc.set_debug(gc.DEBUG_SAVEALL)
        unreachable = gc.collect()
        kinds = sorted({type(o).__qualname__ for o in gc.garbage if type(o).__module__.startswith("codemod")})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert found and kinds == [], kinds
    if not fix:
        assert unreachable == 0


def test_a_run_parses_each_file_once(tmp_path, monkeypatch):
    """The index pass keeps what it parsed for the file pass (``engine.parsed``): each file
    with candidates is parsed once per run, the findings are those of a fresh parse, and
    nothing is kept after the run."""
    from typer.testing import CliRunner

    from codemod.analysis import source as source_module
    from codemod.engine import parsed
    from codemod.frontends.cli import app

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(CYCLIC)
    (tmp_path / "pkg" / "use.py").write_text(
        "import torch\nfrom pkg.model import helper\n\n\ndef go(x):\n    y = x.exp()\n    y.add_(1)\n"
        "    return y * helper(x)\n")  # (y reaches the return itself: no callee's
    # summary is asked, which `engine.project.module_summaries` works out from the callee's file again on demand)
    monkeypatch.chdir(tmp_path)
    parses = []
    real = source_module.parse

    def counted(data, filename="<unknown>"):
        parses.append(bytes(data) if not isinstance(data, str) else data.encode())
        return real(data, filename)

    monkeypatch.setattr(source_module, "parse", counted)
    args = ["check", "--no-cache", "-j", "1", "--select", "ALL", "--output-format", "json", "pkg"]
    once = CliRunner().invoke(app, args)
    counts = {p: parses.count(p) for p in set(parses)}
    assert counts[CYCLIC.encode()] == 1, counts
    assert not parsed._kept
    monkeypatch.setattr(parsed, "BUDGET", 0)  # nothing kept: every file parsed in both passes
    parses.clear()
    twice = CliRunner().invoke(app, args)
    assert parses.count(CYCLIC.encode()) == 2
    assert once.output == twice.output and '"IPF' in once.output


def test_a_file_without_candidates_is_parsed_once_per_run(tmp_path, monkeypatch):
    """A file that names torch but holds no candidate is parsed by the index pass; the file
    pass does not parse it again to learn that it parses (``engine.parsed.parses``), and a
    file that does not parse is still reported. A file with candidates is analysed on the
    bindings its index pass worked out (``model.Shared``)."""
    from typer.testing import CliRunner

    from codemod.analysis import source as source_module
    from codemod.frontends.cli import app

    quiet = "import torch\n\n\ndef size(x):\n    return x.shape[0]\n"
    broken = "import torch\n\ndef f(:\n"
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "quiet.py").write_text(quiet)
    (tmp_path / "pkg" / "broken.py").write_text(broken)
    (tmp_path / "pkg" / "use.py").write_text(
        "import torch\nfrom pkg.quiet import size\n\n\ndef go(x):\n    y = x.exp()\n    y.add_(1)\n"
        "    return y * size(x)\n")
    monkeypatch.chdir(tmp_path)
    parses = []
    real = source_module.parse

    def counted(data, filename="<unknown>"):
        parses.append(bytes(data) if not isinstance(data, str) else data.encode())
        return real(data, filename)

    monkeypatch.setattr(source_module, "parse", counted)
    from codemod.analysis import binder as binder_module

    binders = []
    real_init = binder_module.Binder.__init__

    def remembered(self, source):
        binders.append(source.text)
        real_init(self, source)

    monkeypatch.setattr(binder_module.Binder, "__init__", remembered)
    result = CliRunner().invoke(app, ["check", "--no-cache", "-j", "1", "--select", "ALL", "pkg"])
    assert parses.count(quiet.encode()) == 1, parses
    # the file pass's model took over the bindings the index pass's model worked out
    assert sum("def go" in t for t in binders) == 1, binders
    assert "broken.py:3" in result.output and "IPF103" in result.output, result.output


@pytest.mark.parametrize("command", [["check"], ["fix", "--diff"]])
def test_a_callee_file_asked_after_its_own_pass_is_parsed_once(tmp_path, monkeypatch, command):
    """``use.py`` hands the saver's output to another file's helper (``return helper(y)``): its
    analysis asks the helper's summary, which the index works out on demand from ``model.py``'s
    source (``engine.project``), after ``model.py``'s own file pass took that source. The source
    stays kept for such questions until the run ends (``engine.parsed.take``): each file is parsed
    once, and the output is that of a run that keeps nothing (each parsed anew when asked)."""
    from typer.testing import CliRunner

    from codemod.analysis import source as source_module
    from codemod.engine import parsed
    from codemod.frontends.cli import app

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(CYCLIC)
    (tmp_path / "pkg" / "use.py").write_text(
        "import torch\nfrom pkg.model import helper\n\n\ndef go(x):\n    y = x.exp()\n    y.add_(1)\n"
        "    return helper(y)\n")
    monkeypatch.chdir(tmp_path)
    parses = []
    real = source_module.parse

    def counted(data, filename="<unknown>"):
        parses.append(bytes(data) if not isinstance(data, str) else data.encode())
        return real(data, filename)

    monkeypatch.setattr(source_module, "parse", counted)
    args = [*command, "--no-cache", "-j", "1", "--select", "ALL", "pkg"]
    once = CliRunner().invoke(app, args)
    counts = {p: parses.count(p) for p in set(parses)}
    assert counts[CYCLIC.encode()] == 1, counts
    assert not parsed._kept and not parsed._taken
    monkeypatch.setattr(parsed, "BUDGET", 0)  # nothing kept: parsed in both passes and when asked
    parses.clear()
    again = CliRunner().invoke(app, args)
    assert parses.count(CYCLIC.encode()) >= 2
    assert once.output == again.output and ("IPF" in once.output or "+++ b/pkg/" in once.output), once.output
