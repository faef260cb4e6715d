"""Speed work (issue 27) that must change no result: the fixes of a region are applied entering
only the nodes whose span holds a fixed node (``fixes.apply.applied``), and where some fixed
node lies outside its parent's span (a decorator's, before its function's ``def``) the whole
tree is visited as before. The text is the plain ``FixApplier``'s, byte for byte."""

from __future__ import annotations

import pathlib

import libcst
import pytest

from codemod.config import Settings
from codemod.engine import pipeline
from codemod.findings import Fix
from codemod.fixes import apply

SETTINGS = Settings(select=("ALL",), unsafe_fixes=True)
ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = [p for p in sorted((ROOT / "fixtures").rglob("*.in.py"))
            if (p.parent / p.name.replace(".in.py", ".unsafe.out.py")).exists()
            or (p.parent / p.name.replace(".in.py", ".out.py")).exists()][::3]


def _fixes(data: bytes):
    result = pipeline.source_with_fixes(data, "m.py", SETTINGS)
    return result, [f.fix for f in result.findings if f.fix is not None]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pruned_application_is_the_whole_visit(path):
    result, fixes = _fixes(path.read_bytes())
    if result.wrapper is None or not fixes:
        pytest.skip("no fix here")
    site = apply._Site(result.wrapper)
    expected = site.module.visit(apply.FixApplier(fixes)).code
    assert apply.applied(site, fixes).code == expected
    for fix in fixes:  # one at a time too: other nodes left out, and as an edit (JSON, editors)
        assert apply.applied(site, [fix]).code == site.module.visit(apply.FixApplier([fix])).code
        assert apply.single_edit(site.module, fix, site=site) == apply.single_edit(site.module, fix)


def test_a_fixed_node_outside_its_parents_span_is_fixed_by_the_whole_visit():
    text = b"import torch\n\n\n@deco(x)\ndef f(a):\n    return a\n\n\ndef g(a):\n    return a.add_(1)\n"
    site = apply._Site(apply.parse(text))
    function = site.module.body[1]
    name = function.decorators[0].decorator.func
    ret = site.module.body[2].body.body[0].body[0]
    outside = site.positions[name].start.line < site.positions[function].start.line
    assert outside  # libcst's span of a function starts at `def`, after its decorators
    fixes = [Fix(name, lambda n: n.with_changes(value="renamed"), "rename"),
             Fix(ret, lambda n: n.with_changes(value=libcst.parse_expression("a + 1")), "copy")]
    pruned = apply._Pruned(fixes, site.positions)
    site.module.visit(pruned)
    assert len(pruned.reached) == 1  # `f` was not entered: its span does not hold the decorator
    code = apply.applied(site, fixes).code
    assert code == site.module.visit(apply.FixApplier(fixes)).code
    assert "@renamed(x)" in code and "return a + 1" in code
