"""The fix toolkit (``codemod.fixes``): block-level sites, ``wrap_in_with``, ``ensure_import``.

No shipped rule wraps statements yet; these tests build such a fix the way a rule would (a
plan whose ``make`` asks the site for the statement's block) and run the result with torch.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
import torch

from codemod.findings import Finding, Fix, Span, Status
from codemod.fixes import apply, edits
from codemod.fixes.site import Plan

LEAF_UPDATE = textwrap.dedent('''\
    """Manual SGD on a leaf."""
    from __future__ import annotations


    def step(w, lr):
        loss = (w * 2).sum()
        loss.backward()
        # update the weights
        w -= lr * w.grad  # the leaf error without no_grad
        w.grad = None
        return w
    ''')


def wrap_fix(text: str, line: int, count: int, context: str, import_torch: bool) -> str:
    """Wrap ``count`` statements from ``line`` in ``with <context>:`` through a plan, as a rule
    would, and apply it (with ``import torch`` added where asked)."""
    wrapper = apply.parse(text.encode())
    line_text = text.splitlines()[line - 1]
    column = len(line_text) - len(line_text.lstrip())

    def make(stmt, site) -> Fix:
        block, index = site.block(stmt)
        return Fix(block, lambda b: edits.wrap_in_with(b, index, index + count, context), "Wrap")

    finding = Finding("IPF999", "m", Span(line, column, line, column + 1), Status.SAFE,
                      plan=Plan((line, column), "SimpleStatementLine", make))
    apply.build_fixes(wrapper, [finding])
    fixes = [finding.fix]
    if import_torch:
        fixes.append(Fix(wrapper.module, lambda m: edits.ensure_import(m, "torch"), "Import torch"))
    fixed, _ = apply.apply_fixes(wrapper.module, fixes, "m.py")
    return fixed


def test_wrap_in_with_reindents_keeps_comments_and_adds_the_import():
    fixed = wrap_fix(LEAF_UPDATE, 9, 2, "torch.no_grad()", import_torch=True)
    assert fixed == textwrap.dedent('''\
        """Manual SGD on a leaf."""
        from __future__ import annotations
        import torch


        def step(w, lr):
            loss = (w * 2).sum()
            loss.backward()
            # update the weights
            with torch.no_grad():
                w -= lr * w.grad  # the leaf error without no_grad
                w.grad = None
            return w
        ''')


def run_step(text: str) -> torch.Tensor:
    scope: dict = {}
    exec(compile(text, "m.py", "exec"), scope)
    w = torch.ones(3, requires_grad=True)
    return scope["step"](w, 0.5)


def test_the_wrapped_update_runs_and_updates_the_leaf_in_place():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        run_step(LEAF_UPDATE.replace("from __future__ import annotations\n", "import torch\n"))
    fixed = wrap_fix(LEAF_UPDATE, 9, 2, "torch.no_grad()", import_torch=True)
    w = run_step(fixed)
    assert torch.equal(w.detach(), torch.zeros(3)) and w.requires_grad and w.grad is None


def test_wrap_in_a_module_level_block_and_an_existing_import_is_kept():
    text = "import torch\n\nw = torch.ones(2, requires_grad=True)\nw.zero_()  # reset\nprint(w)\n"
    fixed = wrap_fix(text, 4, 1, "torch.no_grad()", import_torch=True)
    assert fixed == ("import torch\n\nw = torch.ones(2, requires_grad=True)\n"
                     "with torch.no_grad():\n    w.zero_()  # reset\nprint(w)\n")


def test_ensure_import_once_after_the_docstring_and_future_imports():
    module = cst.parse_module('"""Doc."""\nfrom __future__ import annotations\n\nx = 1\n')
    once = edits.ensure_import(module, "torch")
    assert once.code == '"""Doc."""\nfrom __future__ import annotations\nimport torch\n\nx = 1\n'
    assert edits.ensure_import(once, "torch").code == once.code
    aliased = cst.parse_module("import torch as T\n")
    assert "import torch\n" in edits.ensure_import(aliased, "torch").code  # `torch` itself unbound


def test_wrap_in_with_rejects_a_range_outside_the_block():
    module = cst.parse_module("a = 1\n")
    with pytest.raises(ValueError):
        edits.wrap_in_with(module, 0, 2, "torch.no_grad()")


def test_a_dropped_plan_is_said_under_debug(monkeypatch, capsys):
    from codemod import debug

    def build(text):
        wrapper = apply.parse(text.encode())
        finding = Finding("IPF001", "m", Span(1, 0, 1, 1), Status.SAFE,
                          plan=Plan((1, 0), "Assign", lambda node, site: None))
        apply.build_fixes(wrapper, [finding])
        return finding

    monkeypatch.delenv(debug.VARIABLE, raising=False)
    assert not build("x = 1\n").fixable and capsys.readouterr().err == ""
    monkeypatch.setenv(debug.VARIABLE, "1")
    assert not build("x = 1\n").fixable
    assert "dropped the fix plan of IPF001 at 1:0 Assign" in capsys.readouterr().err
