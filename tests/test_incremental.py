"""The editor's reuse of findings across edits (``engine.incremental``): whatever it reuses, the
result is exactly a fresh full analysis's (spans, messages with their line numbers, quick-fix
edits), and it really reuses (counted, not timed)."""

from __future__ import annotations

import dataclasses
import importlib.util
import pathlib
import random
import textwrap

import pytest

from codemod.config import Settings
from codemod.engine.pipeline import add_edits, process_source
from codemod.testing import FUZZ_CORPUS

ROOT = pathlib.Path(__file__).resolve().parent.parent
HINTS = Settings(select=("ALL",))


def _bench_module() -> str:
    spec = importlib.util.spec_from_file_location("lsp_latency", ROOT / "bench" / "lsp_latency.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.module_text(300)


def view(result) -> list:
    """Everything an editor shows of a result, quick-fix edits included (built as a code
    action builds them, on the result's own text)."""
    add_edits(result, result.original.encode() if result.original else b"", result.findings)
    return [(f.code, f.message, f.span, f.status, f.reason, f.fixable, f.fix_title, f.edit)
            for f in result.findings]


def incremental(before: str, after: str, settings: Settings = HINTS):
    """(the result after the edit, reusing the one before; a fresh full analysis of it)."""
    previous = process_source(before.encode(), "m.py", settings, incremental=True)
    view(previous)  # the editor asked for the quick fixes before the edit: nothing of it may leak
    again = process_source(after.encode(), "m.py", settings, incremental=True, previous=previous)
    return again, process_source(after.encode(), "m.py", settings)


def test_a_line_added_near_the_top_reuses_every_function_and_shifts_what_it_reuses():
    text = _bench_module()
    added = text.replace("import torch.nn as nn\n", "import torch.nn as nn\n# a comment\n\n", 1)
    for before, after in ((text, added), (added, text)):
        again, full = incremental(before, after)
        assert any("at line" in f.message for f in full.findings)  # messages name lines: they move too
        assert view(again) == view(full)
        units = sum(1 for s in again.source.tree.body if s.__class__.__name__ in ("ClassDef", "FunctionDef"))
        assert again.reused_units == units > 10


def test_a_line_removed_inside_a_function_shifts_the_functions_below():
    text = _bench_module()
    at = text.index("        self.norm = nn.LayerNorm(dim)\n")
    after = text[:at] + text[at:].replace("        self.norm = nn.LayerNorm(dim)\n", "", 1)
    again, full = incremental(text, after)
    assert view(again) == view(full)
    assert again.reused_units > 10


def test_a_changed_callee_is_analysed_again():
    """Summaries read the classes a function uses: ``self.ln_1 = Norm()`` then ``x += ...
    self.ln_1(x)``: a saving ``Norm`` makes the write a hazard, a non-saving one does not."""
    before = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Norm(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = nn.LayerNorm(8)

            def forward(self, x):
                return self.ln(x)


        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln_1 = Norm()
                self.fc = nn.Linear(8, 8)

            def forward(self, x):
                x += self.fc(self.ln_1(x))
                return x
        """)
    after = before.replace("return self.ln(x)", "return x * 2 + 0")
    again, full = incremental(before, after)
    assert view(again) == view(full)
    again, full = incremental(after, before)
    assert any(f.code == "IPF101" and "(line 11)" in f.message for f in full.findings)
    assert view(again) == view(full)


def test_a_line_named_in_a_message_outside_the_function_is_not_shifted_by_its_move():
    """``(line N)`` may name a module-level statement (a ``Sequential`` built there): the
    function moves, that statement does not."""
    before = textwrap.dedent("""\
        import torch
        import torch.nn as nn

        net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())


        def f(x):
            h = torch.sigmoid(x)
            h += 1
            y = net(x)
            y += 1
            return h, y
        """)
    after = before.replace("\n\ndef f", "\n\n\ndef f")
    again, full = incremental(before, after)
    assert view(again) == view(full)


def _edit(text: str, rng: random.Random) -> str:
    """One to three lines inserted (blank, comment, statement) or deleted at random places."""
    lines = text.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(lines) + 1)
        op = rng.choice(["blank", "comment", "pass", "drop", "drop"])
        if op == "drop" and i < len(lines):
            del lines[i]
        elif op != "drop":
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())] if i < len(lines) else ""
            lines.insert(i, {"blank": "\n", "comment": f"{indent}# moved\n", "pass": f"{indent}pass\n"}[op])
    return "".join(lines)


@pytest.mark.parametrize("seed", range(3))
def test_incremental_equals_full_after_random_line_insertions_and_deletions(seed):
    rng = random.Random(seed)
    corpus = [p for p in FUZZ_CORPUS if "torch" in p.read_text()]
    reused = compared = 0
    for path in rng.sample(corpus, 40) + [None] * 3:
        before = path.read_text() if path is not None else _bench_module()
        after = _edit(before, rng)
        try:
            compile(after, "m.py", "exec")
        except (SyntaxError, ValueError):
            continue
        again, full = incremental(before, after)
        assert view(again) == view(full), (path, after)
        reused += again.reused_units
        compared += 1
    # the reuse really happens: the fixtures hold one or two functions each, the bench module 300
    # lines of them, edited three times (an edit that does not compile is skipped)
    assert compared > 20 and reused > 20


def test_nothing_is_reused_across_settings():
    text = _bench_module()
    previous = process_source(text.encode(), "m.py", HINTS, incremental=True)
    other = dataclasses.replace(HINTS, assume_same_dtype=not HINTS.assume_same_dtype)
    again = process_source(("# top\n" + text).encode(), "m.py", other, incremental=True, previous=previous)
    assert again.reused_units == 0
    assert view(again) == view(process_source(("# top\n" + text).encode(), "m.py", other))


def test_a_changed_caller_through_a_module_level_instance_is_analysed_again():
    """``block = Block()`` at module level, ``block(y)`` in ``g``: whether ``Block.forward``'s
    write is a hazard depends on what ``g`` passes, though ``g`` never names ``Block``."""
    before = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class Block(nn.Module):
            def forward(self, x):
                x += 1
                return x


        block = Block()


        def g(x):
            y = torch.sigmoid(x)
            return block(y)


        g(torch.ones(3, requires_grad=True))  # x requires grad: what sigmoid saved matters
        """)
    after = before.replace("torch.sigmoid(x)", "x + 0")
    for a, b in ((before, after), (after, before), (before, "# top\n" + before)):
        again, full = incremental(a, b)
        assert view(again) == view(full)
    assert any("at line 17" in f.message for f in full.findings)


def test_an_unrelated_module_level_name_does_not_join_its_users():
    """``log = ...`` holds nothing of a function: its users are reused one by one."""
    text = "import torch\nlog = print\n\n" + "".join(
        f"\ndef f{i}(x):\n    log(x)\n    y = torch.sigmoid(x)\n    y += 1\n    return y\n\n" for i in range(5))
    after = text.replace("y += 1", "y += 2", 1)
    again, full = incremental(text, after)
    assert view(again) == view(full) and again.reused_units == 4


def test_a_file_that_says_line_and_a_number_keeps_moved_messages_unreused():
    """A message quoting the file's text could say ``line 3`` of its own: where the text has
    such words, a finding naming a line is reused only where nothing moved."""
    text = _bench_module().replace("import torch.nn as nn\n", "import torch.nn as nn\nNOTE = 'line 3'\n", 1)
    again, full = incremental(text, text.replace("NOTE =", "\nNOTE ="))
    assert view(again) == view(full)
    assert again.reused_units == 0  # every unit of the bench module has a message naming a line


def test_with_a_project_index_its_answers_are_part_of_the_key_and_nothing_moved_is_reused(tmp_path):
    """A message may then name a line of another file (a summary's ``(line N)``), which does
    not move with this one; and what the index answers may change between two edits."""
    from codemod.engine.project import build_index

    (tmp_path / "lib.py").write_text("import torch\n\n\ndef g(x):\n    return torch.sigmoid(x)\n")
    main = tmp_path / "main.py"
    text = "import torch\nfrom lib import g\n\n\ndef f(x):\n    y = torch.tanh(x)\n    y += 1\n    return g(y)\n"
    main.write_text(text)
    index = build_index([str(tmp_path / "lib.py"), str(main)])
    assert index is not None
    previous = process_source(text.encode(), "main.py", HINTS, incremental=True, project=index, module_name="main")
    same = process_source(text.encode(), "main.py", HINTS, incremental=True, previous=previous, project=index,
                          module_name="main")
    assert same.reused_units == 1
    after = "# top\n" + text
    moved = process_source(after.encode(), "main.py", HINTS, incremental=True, previous=previous, project=index,
                           module_name="main")
    full = process_source(after.encode(), "main.py", HINTS, project=index, module_name="main")
    assert moved.reused_units == 0 and view(moved) == view(full)
    alone = process_source(text.encode(), "main.py", HINTS, incremental=True, previous=previous)
    assert alone.reused_units == 0  # without the index: other answers, another key


def test_a_requires_grad_turned_off_in_another_function_is_read_again():
    """``self.w.requires_grad_(False)`` anywhere in the module makes every update of a
    ``self.w`` one that may not require grad (``analysis.leaves``): no name joins the two."""
    before = textwrap.dedent("""\
        import torch
        import torch.nn as nn


        class A(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.ones(3))

            def freeze(self):
                self.w.requires_grad_(False)


        def bump(self):
            self.w += 1
        """)
    after = before.replace("        self.w.requires_grad_(False)\n", "        pass\n")
    for a, b in ((before, after), (after, before)):
        again, full = incremental(a, b)
        assert view(again) == view(full)
    assert any(f.reason == "leaf-update" for f in full.findings)


def test_names_are_compared_as_python_reads_them():
    """``ｇ`` (fullwidth) is ``g`` to Python (NFKC): a unit calling it is joined to ``g``."""
    before = textwrap.dedent("""\
        import torch


        def g(x):
            x += 1
            return x


        def f(x):
            y = torch.sigmoid(x)
            return ｇ(y)


        f(torch.ones(3, requires_grad=True))  # x requires grad: what sigmoid saved matters
        """)
    after = before.replace("torch.sigmoid(x)", "x + 0")
    for a, b in ((before, after), (after, before)):
        again, full = incremental(a, b)
        assert view(again) == view(full)
    assert any(f.code == "IPF101" for f in full.findings)


def test_a_quick_fix_built_before_an_edit_is_built_again_after_it():
    """A fix that adds ``import torch`` edits the text from the import to the write, another
    function's included: an edit kept from before would undo that function's change."""
    before = textwrap.dedent("""\
        from torch import nn


        def f(x):
            return x


        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(nn.init.zeros_(nn.Linear(2, 2).weight))

            def reset(self):
                self.w += 1
        """)
    again, full = incremental(before, before.replace("return x\n", "return x + 1\n"))
    assert again.reused_units == 1  # M is reused, f analysed again
    assert view(again) == view(full)
    assert any(f.edit is not None and "return x + 1" in f.edit.content for f in again.findings)


def test_a_name_in_a_docstring_joins_nothing():
    """``See :class:`Gate```: people read docstrings, the analysis does not; two classes
    that only mention each other there are reused one by one."""
    text = textwrap.dedent('''\
        """Blocks: `Gate` and `Mix`."""
        import torch
        import torch.nn as nn


        class Gate(nn.Module):
            """Like :class:`Mix`, with a sigmoid."""

            def forward(self, x):
                """Unlike Mix.forward."""
                g = torch.sigmoid(x)
                g *= 2
                return g


        class Mix(nn.Module):
            """See :class:`Gate`."""

            def forward(self, x):
                m = torch.tanh(x)
                m += 1
                return m
        ''')
    again, full = incremental(text, text.replace("m += 1", "m += 2"))
    assert view(again) == view(full) and again.reused_units == 1
    again, full = incremental(text, text.replace('"""See :class:`Gate`."""', "kind = Gate"))
    assert view(again) == view(full) and again.reused_units == 0  # a real reference joins them


def test_a_dtype_made_in_another_function_reaches_the_reused_ones():
    """Whether a rewrite can promote depends on every dtype the file makes (``dtype.other_dtype``),
    not only on the function's own text: a `.half()` added in an unrelated function makes the
    other functions' `x += y` unsafe, as a fresh analysis says."""
    before = textwrap.dedent("""\
        import torch


        def f(x, y):
            h = torch.sigmoid(x)
            h += y
            return h


        def g(z):
            return z * 2
        """)
    after = before.replace("return z * 2", "return z.half()")
    for one, other in ((before, after), (after, before)):
        again, full = incremental(one, other)
        assert view(again) == view(full)
        assert [f.status for f in full.findings] != [f.status for f in process_source(one.encode(), "m.py", HINTS).findings]
