"""An editor's next version parsed where the edit is (``engine.reparse``): the tree, positions,
parents, children and candidate nodes are those of parsing the whole text, for edits of every
kind; where that cannot be told, the whole text is parsed (None)."""

from __future__ import annotations

import ast
import pathlib
import random

import pytest

from codemod.analysis.source import WALKED_GROUPS, Source
from codemod.config import Settings
from codemod.engine import pipeline
from codemod.engine.reparse import reparse
from codemod.rules import registry

ROOT = pathlib.Path(__file__).resolve().parent.parent

BASE = '''import torch
import torch.nn as nn


@torch.no_grad()
def helper(t: torch.Tensor, n: int):
    total = 0
    for k in range(n):
        total += k
    y = t * 2
    y += 1
    return y, total


x = 1; y = 2
z = (1 +
     2)


class Block(nn.Module):
    """A block."""

    def forward(self, x):
        h = torch.sigmoid(x)
        h *= 2
        s = f"{h!r:>{10}}"
        return h
# the end
'''


def _shape(source: Source):
    """Everything the analysis reads of a ``Source``, positions included."""
    def where(n):
        return (type(n).__name__, getattr(n, "lineno", None), getattr(n, "col_offset", None),
                getattr(n, "end_lineno", None), getattr(n, "end_col_offset", None))

    parents = sorted((where(c), where(p)) for c, p in source.parents.items())
    children = sorted((where(n), [where(c) for c in kids]) for n, kids in source.children.items())
    candidates = {t.__name__: [where(n) for n in found] for t, found in source.candidates.items()}
    walked = {group[0].__name__: [where(n) for n in source.walked(group[0])] for group in WALKED_GROUPS}
    return (ast.dump(source.tree, include_attributes=True), parents, children, candidates, walked, source.text,
            source.lines)


def _check(old_text: str, new_text: str) -> bool:
    """Whether the new version was parsed where the edit is; asserts it is the whole parse."""
    types = registry.node_types()
    old = Source(old_text.encode(), types)
    got = reparse(old, new_text.encode(), types)
    if got is None:
        return False
    assert _shape(got) == _shape(Source(new_text.encode(), types))
    return True


EDITS = {  # name: (new text, parsed where the edit is)
    "line_added_at_top": (BASE.replace("import torch.nn as nn\n", "import torch.nn as nn\n# edit\n"), True),
    "comment_on_top_line": (BASE.replace("import torch.nn as nn\n", "import torch.nn as nn  # e\n"), True),
    "inside_function": (BASE.replace("y += 1", "y += 2"), True),
    "line_removed_inside": (BASE.replace("    total = 0\n", ""), True),
    "lines_added_inside": (BASE.replace("    y += 1\n", "    y += 1\n    y = y * 3\n    q = [\n1]\n"), True),
    "new_function": (BASE.replace("\n\nx = 1;", "\n\ndef g():\n    return 1\n\n\nx = 1;"), True),
    "function_removed": (BASE[:BASE.index("@torch")] + BASE[BASE.index("x = 1;"):], True),
    "shared_line": (BASE.replace("y = 2", "y = 3"), True),
    "continued": (BASE.replace("(1 +", "(1 -"), True),
    "fstring": (BASE.replace("{10}", "{12}"), True),
    "at_the_end": (BASE + "w = 3\n", True),
    "last_line_changed": (BASE.replace("# the end\n", "# the end!\n"), True),
    "no_final_newline": (BASE.rstrip("\n"), True),
    "nothing": (BASE, True),
    "blank_line_removed": (BASE.replace("\n\n\nx = 1;", "\n\nx = 1;"), True),
    # whole parses: the edit opens what runs past its lines
    "bracket_opened": (BASE.replace("x = 1; y = 2", "x = [1; y = 2"), False),
    "string_opened": (BASE.replace("x = 1; y = 2", 'x = """1; y = 2'), False),
    "indented_after_a_function": (BASE.replace("\n\nx = 1;", "\n    extra = 1\nx = 1;"), False),
    # a decorator above a statement left alone: those lines do not parse alone
    "decorator_added": (BASE.replace("class Block", "@dataclass\nclass Block"), False),
    "backslash": (BASE.replace("x = 1; y = 2", "x = 1; y = 2 + \\"), False),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_edit(name):
    new, parsed_alone = EDITS[name]
    try:
        ast.parse(new)
    except SyntaxError:
        assert not parsed_alone
        assert reparse(Source(BASE.encode(), registry.node_types()), new.encode(), registry.node_types()) is None
        return
    assert _check(BASE, new) is parsed_alone


def test_random_line_edits_of_the_fixtures():
    """Lines added, removed and changed at random in real files: whenever the result parses,
    the tree is the whole parse's (or the whole text is parsed)."""
    rng = random.Random(27)
    files = sorted((ROOT / "fixtures").rglob("*.in.py"))
    alone = 0
    for path in rng.sample(files, min(40, len(files))):
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        for _ in range(5):
            i = rng.randrange(len(lines) + 1)
            edit = rng.choice(["add", "remove", "change"])
            new = list(lines)
            if edit == "add":
                new.insert(i, rng.choice(["# c\n", "\n", "q = 1\n", "    r = 2\n"]))
            elif new and i < len(new):
                if edit == "remove":
                    del new[i]
                else:
                    new[i] = new[i].replace("1", "2").replace("x", "xx")
            try:
                ast.parse("".join(new))
            except SyntaxError:
                continue
            alone += _check(text, "".join(new))
            lines = new
            text = "".join(new)
    assert alone > 50


def test_editor_rounds_take_over_the_previous_tree():
    """The editor's pipeline: findings of a version made from the previous one's tree are those
    of a fresh analysis, round after round."""
    text = ROOT.joinpath("fixtures").rglob("*.in.py").__next__().read_text()
    settings = Settings()
    previous = pipeline.editor_source(BASE.encode(), "m.py", settings)
    for new in [BASE.replace("y += 1", "y.add_(1)"), EDITS["line_added_at_top"][0], BASE, text]:
        got = pipeline.editor_source(new.encode(), "m.py", settings, previous)
        fresh = pipeline.process_source(new.encode(), "m.py", settings)
        assert [(f.code, f.span, f.message) for f in got.findings] == \
            [(f.code, f.span, f.message) for f in fresh.findings]
        assert previous.source is None  # taken over
        previous = got


SHARED_OPERATORS = '''import torch


def first(a, b):
    if a == b and a is not None:
        return a < b
    return a in b


def second(c):
    return c == 1 or c is None or c < 2 or c in (3, 4)


def third(x):
    y = torch.sigmoid(x)
    y += 1
    return y.sum() if x.dim() == 2 else y
'''


@pytest.mark.parametrize("new", [
    SHARED_OPERATORS.replace("    if a == b and a is not None:\n        return a < b\n", ""),
    SHARED_OPERATORS.replace("a == b and a is not None", "a").replace("a < b", "a + b").replace("a in b", "b"),
    SHARED_OPERATORS.replace("c == 1 or c is None or c < 2 or c in (3, 4)", "c"),
])
def test_comparison_operators_shared_by_kept_and_replaced_statements(new):
    """``ast`` shares one node per comparison operator (every ``==`` of a module is one ``Eq``):
    an edit that takes the last ``==`` out of the lines parsed again must not take the ``Eq``
    of the statements kept (their walk met a node with no children listed: KeyError)."""
    assert _check(SHARED_OPERATORS, new)


def test_editor_round_that_drops_a_shared_comparison_operator():
    settings = Settings()
    new = SHARED_OPERATORS.replace("    if a == b and a is not None:\n        return a < b\n", "")
    previous = pipeline.editor_source(SHARED_OPERATORS.encode(), "m.py", settings)
    got = pipeline.editor_source(new.encode(), "m.py", settings, previous)
    fresh = pipeline.process_source(new.encode(), "m.py", settings)
    assert [(f.code, f.span, f.message) for f in got.findings] == [(f.code, f.span, f.message) for f in fresh.findings]
