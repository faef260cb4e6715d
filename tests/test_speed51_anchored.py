"""Speed work (issue 27) that must change no result: ``fix`` positions only the statements that
hold its fixes (``fixes.anchored``), not every node of the function they are in. The positions
are libcst's own, node for node, and the fixed text is byte for byte what positioning the whole
region gives. Real libcst, real ``ast``, real torch sources."""

from __future__ import annotations

import ast
import pathlib

import libcst
import pytest
import torch
from libcst.metadata import MetadataWrapper, PositionProvider

from codemod.config import Settings
from codemod.engine import pipeline
from codemod.fixes import anchored, statements

SETTINGS = Settings(select=("ALL",), unsafe_fixes=True)
ROOT = pathlib.Path(__file__).resolve().parent.parent

LAYOUTS = '''\
import torch  # c


# above
@decorator(
    1)
# between
@other
def f(x, y):
    """doc"""
    # a comment
    a = 1; b = 2
    del a
    if x:
        y.add_(1)
    elif y:
        pass
    else:
        x = x + 1

    for i in range(3):
        # inside
        with torch.no_grad():
            y[i] = 0
    else:
        z = 3
    try:
        w = 1
    except ValueError:
        w = 2
    finally:
        w = 3
    while False: x += 1
    async def g():
        async with a as b:
            await b
        async for q in b:
            q.mul_(2)

    class C:
        x = 1

        def m(self):
            return self.x
        # tail comment


    return y
x = [
    1,
]
'''


def _every_line(text: str) -> None:
    """For each line holding a statement, the nodes positioned are positioned as libcst does,
    and every node starting there is positioned (or is a block walked through)."""
    tree = ast.parse(text)
    module = libcst.parse_module(text)
    whole = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = sorted({n.lineno for n in ast.walk(tree) if isinstance(n, ast.stmt)})
    for line in lines:
        found = anchored.anchored(module, tree.body, {line}, 0, statements._LINE.findall(text))
        assert found is not None, line
        for node, rng in found.positions.items():
            assert whole[node] == rng, (line, type(node).__name__)
        for node, rng in whole.items():
            if rng.start.line == line and id(node) not in found.path \
                    and not isinstance(node, (libcst.IndentedBlock, libcst.Module)):
                assert node in found.positions, (line, type(node).__name__)
    both = anchored.anchored(module, tree.body, set(lines), 0, statements._LINE.findall(text))  # all at once
    assert both is not None and all(whole[n] == r for n, r in both.positions.items())


def test_positions_are_libcsts_on_every_layout():
    _every_line(LAYOUTS)
    _every_line(LAYOUTS.replace("    ", "\t"))  # the module's own indentation
    _every_line("class A:\n  def f(self):\n      x = 1\n      if x:\n         y = 2\n")  # mixed widths


TORCH = pathlib.Path(torch.__file__).parent
SOURCES = [TORCH / "optim" / "adam.py", TORCH / "optim" / "lbfgs.py", TORCH / "nn" / "modules" / "rnn.py"]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_positions_are_libcsts_on_torch_sources(path):
    _every_line(path.read_text(encoding="utf-8"))


def test_a_pairing_that_does_not_hold_gives_none():
    text = "def f():\n    a = 1\n    b = 2\n"
    module = libcst.parse_module(text)
    other = ast.parse("def f():\n    a = 1\n    if b:\n        pass\n")
    assert anchored.anchored(module, other.body, {3}, 0, statements._LINE.findall(text)) is None  # kinds differ
    shifted = ast.parse("\n" + text)
    assert anchored.anchored(module, shifted.body, {3}, 0, statements._LINE.findall(text)) is None  # lines differ


BIG = "import torch\n\n\ndef f(x):\n" + "".join(f"    v{i} = torch.ones(3) * {i}\n" for i in range(60)) + (
    "    h = torch.sigmoid(x)\n"
    "    h += 1\n"
    "    return h + v1\n"
)


def test_fix_positions_only_the_statements_it_touches(monkeypatch):
    """The statement way resolves no whole-tree positions: 60 untouched statements are not
    printed (before this change every node of the function was positioned)."""
    resolved = []
    real = MetadataWrapper.resolve

    def spy(self, provider):
        resolved.append(provider)
        return real(self, provider)

    monkeypatch.setattr(MetadataWrapper, "resolve", spy)
    taken = []
    real_fixes = statements.statement_fixes

    def counted(*args):
        found = real_fixes(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(statements, "statement_fixes", counted)
    result = pipeline.process_source(BIG.encode(), "m.py", SETTINGS, fix=True)
    assert taken == [True]
    assert b"h = h + 1" in result.fixed_bytes
    assert PositionProvider not in resolved


FIXTURES = [p for p in sorted((ROOT / "fixtures").rglob("*.in.py"))
            if (p.parent / p.name.replace(".in.py", ".unsafe.out.py")).exists()
            or (p.parent / p.name.replace(".in.py", ".out.py")).exists()][::2]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_fixed_text_is_the_whole_regions(path, monkeypatch):
    """Fixes built on the anchored positions give the text and titles of the whole region's."""
    data = path.read_bytes()
    each = pipeline.process_source(data, "m.py", SETTINGS, fix=True)
    monkeypatch.setattr(statements, "anchored", lambda *args: None)
    whole = pipeline.process_source(data, "m.py", SETTINGS, fix=True)
    assert each.fixed_bytes == whole.fixed_bytes
    assert [(f.code, f.span.line, f.fixable, f.fix_title) for f in each.findings] == \
        [(f.code, f.span.line, f.fixable, f.fix_title) for f in whole.findings]
