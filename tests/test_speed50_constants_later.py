"""Issue 27 (stop 50): a method's ``constant_returns`` (``FunctionFact``) is worked out when some
analysis first asks it (``project.returns_constant``), not for every method of every file while
the index is built: on torch's nn/optim/autograd/distributions a cold check read 2,744 methods
for it and asked about none.

Where the index pass keeps a file's source for the file pass and writes no cache entry
(``collect(..., later=True)``), the facts leave ``constant_returns`` (with the other dtype and
the hooks) to ``ModuleFacts.resolved``; the answers are those of the eager way. With a cache,
the facts are written whole as before, and a file's cached result still follows an edit of the
other file's method (warm cache: the verdict changes both ways). The programs are those of
``tests/test_xfile46_cross_file_facts.py`` (torchao's ``super().remove_mean(p.detach())``), run
with torch.
"""

from __future__ import annotations

import ast
import json
import pathlib
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")

from codemod.analysis.indexing import collect  # noqa: E402
from codemod.analysis.model import SemanticModel  # noqa: E402
from codemod.analysis.project import module_name, returns_constant  # noqa: E402
from codemod.analysis.source import Source  # noqa: E402
from codemod.engine import parsed  # noqa: E402
from codemod.engine.project import build_index  # noqa: E402

QUANTIZER = '''\
import torch

SHIFT = torch.zeros(1, requires_grad=True)


class Quantizer:
    def __init__(self, center=True):
        self.center = center

    @staticmethod
    def remove_mean(p, dim=None):
        mean = p.mean()
        return p - mean, mean

    @staticmethod
    def shifted(p):
        return p + SHIFT, SHIFT

    @classmethod
    def centered(cls, p):
        return p - p.mean(), p.mean()
'''

UNIFORM = '''\
import torch

from .quantizer import Quantizer


class UnifQuantizer(Quantizer):
    def quantize(self, p, dim=None):
        q, mean = super().remove_mean(p.detach())
        q_max = torch.max(q.abs())
        q.copy_(torch.minimum(torch.maximum(q, -q_max), q_max))
        return q + mean


def example():
    w = torch.randn(4, 8, requires_grad=True)
    out = UnifQuantizer().quantize(w * 1.0)
    if out.requires_grad:
        out.sum().backward()
'''

# The edit of the other file: the helper now hands on what requires grad (a global).
HANDS_ON = QUANTIZER.replace("        mean = p.mean()\n        return p - mean, mean\n",
                             "        return p + SHIFT, SHIFT\n")


def _project(tmp_path) -> list:
    files = {"pq/__init__.py": "", "pq/quantizer.py": QUANTIZER, "pq/uniform.py": UNIFORM}
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return sorted(files)


def _raises(tmp_path) -> bool:
    run = subprocess.run([sys.executable, "-c", "import pq.uniform as m\ntry:\n    m.example()\n"
                          "except RuntimeError as e:\n    assert 'inplace' in str(e), e\n    print('raised')\n"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    return "raised" in run.stdout


def _check(tmp_path, names, *extra) -> list:
    run = subprocess.run([sys.executable, "-m", "codemod", "check", "--select", "IPF1", "--output-format", "json",
                          "--no-progress", *extra, *names], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    return [(f["filename"].replace("\\", "/").rsplit("pq/", 1)[-1], f["code"]) for f in json.loads(run.stdout)["findings"]]


def test_an_edit_of_the_other_files_method_changes_the_cached_verdict_both_ways(tmp_path):
    """Warm cache (the project's folder): ``uniform.py`` is unchanged between the runs; only
    ``quantizer.py``'s ``remove_mean`` is edited, so the cached result of ``uniform.py`` must
    not be taken: the write becomes proven, and unproven again when the edit is undone."""
    names = _project(tmp_path)
    assert not _raises(tmp_path)
    assert _check(tmp_path, names) == [] and _check(tmp_path, names) == []
    (tmp_path / "pq/quantizer.py").write_text(HANDS_ON)
    assert _raises(tmp_path)
    assert _check(tmp_path, names) == [("uniform.py", "IPF103")] == _check(tmp_path, names, "--no-cache")
    assert _check(tmp_path, names) == [("uniform.py", "IPF103")]
    (tmp_path / "pq/quantizer.py").write_text(QUANTIZER)
    assert _check(tmp_path, names) == [] == _check(tmp_path, names, "--no-cache")


def test_cold_runs_alike_with_and_without_cache_and_with_two_processes(tmp_path):
    names = _project(tmp_path)
    (tmp_path / "pq/quantizer.py").write_text(HANDS_ON)
    assert _check(tmp_path, names, "--no-cache", "-j", "1") == [("uniform.py", "IPF103")]
    assert _check(tmp_path, names, "--no-cache", "-j", "2") == [("uniform.py", "IPF103")]
    assert _check(tmp_path, names, "-j", "1") == [("uniform.py", "IPF103")]  # (cold, writing the cache)
    assert _check(tmp_path, names, "-j", "2") == [("uniform.py", "IPF103")]  # (warm)


def test_collect_later_leaves_constant_returns_and_works_out_the_eager_ones():
    """The late facts name no ``constant_returns`` until resolved; then they are the eager ones."""
    data = textwrap.dedent(QUANTIZER).encode()
    project = frozenset({"pq", "pq.quantizer", "pq.uniform"})
    eager = collect(SemanticModel(Source(data)), "pq.quantizer", project, arguments=False)
    late = collect(SemanticModel(Source(data)), "pq.quantizer", project, arguments=False, later=True)
    assert [f.constant_returns for f in eager.functions if f.constant_returns] != []
    assert all(f.constant_returns is None for f in late.functions)  # (not worked out yet)
    assert late.returns_constant("pq.quantizer.Quantizer.remove_mean") \
        == eager.returns_constant("pq.quantizer.Quantizer.remove_mean") is not None
    assert late.later is None and late == eager


def test_a_run_works_out_constant_returns_only_for_the_modules_asked(tmp_path):
    """The index of a run that keeps sources and writes no cache: every module's methods are
    left for later; asking one module's method works out that module's only, as the cached
    index gives it."""
    names = _project(tmp_path)
    (tmp_path / "pq/other.py").write_text("import torch\n\n\nclass Other:\n    def f(self, p):\n        p.add_(1)\n        return p.detach()\n")
    paths = [str(tmp_path / n) for n in names] + [str(tmp_path / "pq/other.py")]
    try:
        kept = build_index(paths, keep_sources=True)
    finally:
        parsed.clear()
    cached = build_index(paths, cache_dir=str(tmp_path / "cache"))
    assert kept is not None and cached is not None
    module = module_name(pathlib.Path(paths[names.index("pq/quantizer.py")]))
    late = [m for m, f in kept.modules.items() if f.later is not None]
    assert module in late and f"{module.rpartition('.')[0]}.other" in late
    assert all(f.constant_returns is None for f in kept.modules[module].functions)
    name = f"{module}.Quantizer.remove_mean"
    assert returns_constant(kept, name) == returns_constant(cached, name) is not None
    assert kept.modules[module].later is None
    assert kept.modules[f"{module.rpartition('.')[0]}.other"].later is not None  # (not asked)
    for m in kept.modules:
        for f in kept.modules[m].functions:
            assert returns_constant(kept, f.qualname) == returns_constant(cached, f.qualname)


GLOBALS = '''\
global top_level
COUNT = "n"
OTHER = "o"
THIRD = "t"


def f():
    global COUNT
    COUNT = 1

    def g():
        nonlocal_name = 1

        def h():
            nonlocal nonlocal_name
            global OTHER

        class Inner:
            global THIRD

    return g


class Outer:
    global in_class

    def m(self):
        global in_method


async def a():
    global in_async
'''


@pytest.mark.parametrize("text", [GLOBALS, "x = 1\n", "def f():\n    return 'global'\n"])
def test_the_names_functions_declare_global_are_each_functions_flow_declared(text):
    """``ModuleFacts.strings``/``names`` read the names every function declares ``global`` or
    ``nonlocal`` off the syntax (no function's dataflow worked out): the union of the
    functions' ``Flow.declared``, a class body's and the module's own left out."""
    from codemod.analysis.indexing import _declared_in_functions

    model = SemanticModel(Source(text.encode()))
    flows = {n for func in model.tree.source.walked(ast.FunctionDef) for n in model.flow(func).declared}
    assert _declared_in_functions(model) == flows
    if text == GLOBALS:
        assert flows == {"COUNT", "nonlocal_name", "OTHER", "in_method", "in_async"}


def test_the_digest_reads_each_modules_callees_grouped_once(tmp_path):
    """``_digest`` takes a module's classes called elsewhere from one grouping of the run's
    callees (``project._named_in``), the set each digest made by going over all of them."""
    from codemod.analysis.project import _named_in

    names = _project(tmp_path)
    index = build_index([str(tmp_path / n) for n in names], cache_dir=str(tmp_path / "cache"))
    assert index is not None
    digests = {m: index.digest_for(m, passed=False) for m in index.modules}
    grouped = _named_in(index)
    for m in index.modules:
        assert grouped.get(m, set()) == {q for q in index._by_module or {} if q.rpartition(".")[0] == m}
    assert any(grouped.values())
    again = build_index([str(tmp_path / n) for n in names], cache_dir=str(tmp_path / "cache"))
    assert {m: again.digest_for(m, passed=False) for m in again.modules} == digests
