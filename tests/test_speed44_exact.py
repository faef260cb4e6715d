"""Speed work (issue 27, stop 44) that must change no answer: ``Calls._index`` passes over the
names and attributes ``_resolve`` cannot resolve without asking it (a name no top-level function
has, ``x.m`` with no method ``m`` in a class of the module); the call sites it files are those of
asking ``_resolve`` of every load."""

from __future__ import annotations

import ast
import pathlib

import pytest

from codemod.analysis.model import SemanticModel
from codemod.analysis.source import Source
from codemod.analysis.syntax import FUNCTIONS

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "fixtures").rglob("*.in.py"))[::6] + sorted((ROOT / "codemod" / "analysis").glob("*.py"))[::3]

CALLS = '''
import torch


def helper(x):
    return x * 2


class Block(torch.nn.Module):
    def step(self, x):
        return helper(x)

    def forward(self, x):
        y = self.step(x)
        step = self.step
        cls_step = Block.step
        def helper(z):  # a local of the same name: not the module's
            return z
        return helper(y) + step(x) + cls_step(self, x) + other.step(x)


fn = helper
helper(torch.ones(1))
'''


def _reference(model: SemanticModel):
    """The sites of asking ``_resolve`` of every load of a name or an attribute."""
    calls = model.calls
    top = {s.name: s for s in calls.module.body if isinstance(s, FUNCTIONS)}
    methods = {s: {f.name: f for f in s.body if isinstance(f, FUNCTIONS)}
               for s in calls.module.body if isinstance(s, ast.ClassDef)}
    classes = {c.name: c for c in methods}
    found = {}
    for node in model.tree.source.walked(ast.Name):
        if isinstance(node.ctx, ast.Load):  # type: ignore[attr-defined]
            func = calls._resolve(node, top, methods, classes)  # type: ignore[arg-type]
            if func is not None:
                found.setdefault(func, []).append(node)
    return found


@pytest.mark.parametrize("path", ["calls", *FILES], ids=str)
def test_call_sites_are_those_of_resolving_every_load(path):
    data = CALLS.encode() if path == "calls" else pathlib.Path(path).read_bytes()
    got = SemanticModel(Source(data)).calls._index()
    expected = _reference(SemanticModel(Source(data)))  # (another model: nothing remembered shared)

    def positions(nodes):
        return sorted((n.lineno, n.col_offset) for n in nodes)

    assert {(f.lineno, f.name): positions(s.node.func if isinstance(s.node, ast.Call) else s.node for s in sites)
            for f, sites in got.items()} == {(f.lineno, f.name): positions(nodes) for f, nodes in expected.items()}
    if path == "calls":
        assert sorted(f.name for f in got) == ["helper", "step"]
