"""Speed work (issue 27, stop 45): part of the project index worked out on demand. Each module's
other dtype and hooks (``ModuleFacts.other_dtype``, ``hooks``) are read only for the first module,
by name, of a connected part that has one (``ProjectIndex.other_dtype``, ``hooks``); a run asks
them of a few parts. Where the index pass keeps a module's source in memory for the file pass
anyway (and writes no cache entry), ``collect(..., later=True)`` leaves them to be worked out from
it when first asked. These tests compare every answer with the eager facts, show which modules are
worked out, and that a copy for another process (``-j N``) carries them worked out."""

from __future__ import annotations

import pathlib
import pickle
import textwrap

import pytest

from codemod.analysis.indexing import collect
from codemod.analysis.model import SemanticModel
from codemod.analysis.project import ModuleFacts, ProjectIndex, module_name
from codemod.analysis.source import Source
from codemod.engine import parsed
from codemod.engine.pipeline import will_parse
from codemod.engine.project import build_index

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::7] + sorted((ROOT / "codemod" / "analysis").glob("*.py"))

# Two connected parts: a (imports b; b makes halves, hooks nothing) and c -- d (d hooks, c makes doubles);
# e is alone and has neither.
PACKAGE = {
    "a": "import torch\nfrom pkg.b import lower\n\ndef f(x):\n    x.mul_(2)\n    return lower(x)\n",
    "b": "import torch\n\ndef lower(x):\n    return x.half()\n",
    "c": "import torch\nfrom pkg.d import hooked\n\ndef g(x):\n    return hooked(x.double())\n",
    "d": ("import torch\n\ndef hooked(m):\n    m.register_forward_hook(lambda *a: None)\n    return m\n"),
    "e": "import torch\n\ndef h(x):\n    return x + 1\n",
}


def _facts(later: bool) -> list:
    project = frozenset(f"pkg.{m}" for m in PACKAGE)
    return [collect(SemanticModel(Source(text.encode())), f"pkg.{m}", project, arguments=False, later=later)
            for m, text in PACKAGE.items()]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_worked_out_later_the_facts_are_the_eager_ones(path):
    data = path.read_bytes()
    project = frozenset({"pkg.main", "pkg.other"})
    eager = collect(SemanticModel(Source(data)), "pkg.main", project, arguments=False)
    late = collect(SemanticModel(Source(data)), "pkg.main", project, arguments=False, later=True)
    assert late.later is not None
    assert late.resolved() == eager and late.later is None
    assert (late.other_dtype, late.hooks) == (eager.other_dtype, eager.hooks)


def test_the_index_answers_alike_and_works_out_only_the_first_module_of_a_part():
    eager, late = ProjectIndex(_facts(False)), ProjectIndex(_facts(True))
    assert all(f.later is not None for f in late.modules.values())
    assert late.other_dtype("pkg.a") == eager.other_dtype("pkg.a") == "pkg.b: " + eager.modules["pkg.b"].other_dtype
    # a's part is a and b: a (first by name) has no other dtype, so b was worked out; c, d, e were not
    assert [m for m, f in late.modules.items() if f.later is None] == ["pkg.a", "pkg.b"]
    assert late.other_dtype("pkg.b") == eager.other_dtype("pkg.b")
    assert late.hooks("pkg.c") == eager.hooks("pkg.c") is not None  # (c's part: c has none, d hooks)
    assert late.modules["pkg.e"].later is not None
    for module in sorted(eager.modules):
        assert late.other_dtype(module) == eager.other_dtype(module)
        assert late.hooks(module) == eager.hooks(module)
    assert late.other_dtype("pkg.elsewhere") == eager.other_dtype("pkg.elsewhere")  # (sees every file)
    assert [late.modules[m] for m in sorted(late.modules)] == [eager.modules[m] for m in sorted(eager.modules)]


def test_a_copy_for_another_process_carries_the_facts_worked_out():
    late = ProjectIndex(_facts(True))
    copy = pickle.loads(pickle.dumps(late))
    eager = ProjectIndex(_facts(False))
    assert all(f.later is None for f in copy.modules.values())
    assert {m: (f.other_dtype, f.hooks) for m, f in copy.modules.items()} == \
        {m: (f.other_dtype, f.hooks) for m, f in eager.modules.items()}
    one = pickle.loads(pickle.dumps(_facts(True)[1]))
    assert isinstance(one, ModuleFacts) and one.later is None and one.other_dtype is not None


def test_a_run_leaves_them_for_later_only_where_the_source_is_kept_and_no_cache_is_written(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in PACKAGE.items():
        (pkg / f"{name}.py").write_text(text)
    files = [str(p) for p in sorted(pkg.glob("*.py"))]
    try:
        kept = build_index(files, keep_sources=True)
    finally:
        parsed.clear()
    plain = build_index(files)
    cached = build_index(files, cache_dir=str(tmp_path / "cache"), keep_sources=True)
    parsed.clear()
    assert kept is not None and plain is not None and cached is not None
    # (kept: a file with something the rules look for, here a alone; the others' facts are made now)
    assert {m for m, f in kept.modules.items() if f.later is not None} \
        == {module_name(pathlib.Path(p)) for p in files if will_parse(pathlib.Path(p).read_bytes())} == {"pkg.a"}
    assert all(f.later is None for f in plain.modules.values())
    assert all(f.later is None for f in cached.modules.values())
    for module in sorted(plain.modules):
        assert kept.other_dtype(module) == plain.other_dtype(module) == cached.other_dtype(module)
        assert kept.hooks(module) == plain.hooks(module) == cached.hooks(module)


def test_the_command_says_the_same(tmp_path):
    """The file pass of z asks the other dtype of its part (a, b, z): a, first by name, was kept
    for the file pass, which took its source back before z (``parsed.take``); it is worked out
    from it, and the answer (b's) is the one every process gives."""
    import subprocess
    import sys

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("import torch\n\ndef bump(t):\n    t.add_(1)\n    return t\n")
    (pkg / "b.py").write_text(PACKAGE["b"])
    (pkg / "z.py").write_text(textwrap.dedent('''\
        import torch
        import torch.nn as nn
        from pkg.a import bump
        from pkg.b import lower


        class Block(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.fc = nn.Linear(d, d)

            def forward(self, x):
                h = torch.relu(self.fc(x))
                h += self.fc(x)
                return lower(bump(h))
        '''))
    runs = [subprocess.run([sys.executable, "-m", "codemod", "check", "--select", "ALL", "--no-cache", "-j", j,
                            "--output-format", "json", str(pkg)], cwd=ROOT, capture_output=True, text=True)
            for j in ("1", "2")]
    assert runs[0].stdout == runs[1].stdout
    assert '"reason": "dtype-promotion"' in runs[0].stdout  # (z's `h +=`: b makes halves)
