"""Issue 24 recall (recall47b), family C: a name rebound on one branch of an ``if`` to the output
of a custom ``autograd.Function`` that hands its input back as-is (through helpers of the file),
then viewed and written in place after the ``if``.

``s = self.lin(x)`` / ``if flag: s = tag(s, aux)`` / ``s = s.view(-1, n)`` / ``s.masked_fill_(m, v)``:
wherever the branch runs, ``s`` is a view PyTorch made inside a custom Function, and the write
raises "... is a view and is being modified inplace. This view was created inside a custom
Function". Before, a view reached by a second binding (the plain one before the ``if``) was proven
only for multi-output views on two branches of one ``if``; the binding before the ``if`` that the
branch overrides hid it. Look-alikes that must not be proven: the plain binding after the branch
(it always wins), a branch that leaves before the view is used, a loop that binds the plain value
again on its next turn, a Function returning a fresh tensor. Programs written from the pattern,
run with torch: the original raises at the write, the fixed program's gradients equal an
out-of-place control.
"""

from __future__ import annotations

import torch

from codemod.config import Settings
from tests.programs import fixed_source, process_in_project, raises_inplace, run_program

PROGRAM = """\
import torch
import torch.nn as nn


class Tag(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.shape = y.shape
        return x

    @staticmethod
    def backward(ctx, g):
        return g, torch.ones(ctx.shape)


def tag(x, y):
    return Tag.apply(x, y)


def penalize(x, limit):
    aux = (x.abs() - limit).relu()
    x = tag(x, aux)
    return x


class Scores(nn.Module):
    def __init__(self, d, heads, penalize_now):
        super().__init__()
        self.lin = nn.Linear(d, d * heads)
        self.heads = heads
        self.penalize_now = penalize_now

    def forward(self, x, mask):
        n = x.shape[0]
        s = self.lin(x)
        if self.training:
            if self.penalize_now:
                s = penalize(s, 1.0)
        s = s.view(n * self.heads, -1)
        s.masked_fill_(mask, -1e4)
        return s.softmax(-1)


def main():
    torch.manual_seed(0)
    net = Scores(4, 2, True)
    mask = torch.zeros(6, 4, dtype=torch.bool)
    mask[:, 0] = True
    net(torch.randn(3, 4), mask).pow(2).sum().backward()
    return [p.grad for p in net.parameters()]
"""
WRITE = "        s.masked_fill_(mask, -1e4)\n"
CONTROL = PROGRAM.replace(WRITE, "        s = s.masked_fill(mask, -1e4)\n")
C_ERROR = "This view was created inside a custom Function"


def proven_at(source: str, text: str):
    result = process_in_project(source, Settings())
    line = source[:source.index(text)].count("\n") + 1
    return [(f.code, f.status.value if f.status else None) for f in result.findings
            if f.code.startswith("IPF1") and f.span.line == line]


def test_branch_rebinding_to_a_custom_function_view_is_proven_and_fixed():
    assert raises_inplace(PROGRAM, message=C_ERROR)  # the branch runs: PyTorch refuses the write
    assert proven_at(PROGRAM, WRITE) == [("IPF106", "safe")]
    result = fixed_source(PROGRAM, project=True)
    assert "s = s.masked_fill(mask, -1e4)" in result and "s.masked_fill_(" not in result
    for got, want in zip(run_program(result), run_program(CONTROL)):
        assert torch.equal(got, want)


def test_branch_not_taken_runs_and_the_fix_keeps_its_results():
    source = PROGRAM.replace("Scores(4, 2, True)", "Scores(4, 2, False)")
    want = run_program(source)  # the other path: no custom Function, no error
    result = fixed_source(source, project=True)
    for got, exp in zip(run_program(result), want):
        assert torch.equal(got, exp)


def test_plain_binding_after_the_branch_is_not_proven():
    source = PROGRAM.replace("        s = s.view(n * self.heads, -1)\n",
                             "        s = self.lin(x)\n        s = s.view(n * self.heads, -1)\n")
    run_program(source)  # runs: the plain value always wins
    assert proven_at(source, WRITE) == []


def test_branch_that_leaves_is_not_proven():
    source = PROGRAM.replace("                s = penalize(s, 1.0)\n",
                             "                s = penalize(s, 1.0)\n                return s.sum(-1)\n")
    run_program(source)  # the view never reaches the write
    assert proven_at(source, WRITE) == []


def test_loop_binding_the_plain_value_again_is_not_proven():
    source = PROGRAM.replace(
        "        s = self.lin(x)\n        if self.training:\n            if self.penalize_now:\n"
        "                s = penalize(s, 1.0)\n",
        "        for k in range(2):\n            s = self.lin(x)\n            if k == 0:\n"
        "                s = penalize(s, 1.0)\n")
    assert source != PROGRAM
    run_program(source)  # the last turn binds the plain value: the write is allowed
    assert proven_at(source, WRITE) == []


def test_function_returning_a_fresh_tensor_is_not_proven():
    source = PROGRAM.replace("        ctx.shape = y.shape\n        return x\n",
                             "        ctx.shape = y.shape\n        return x * 1.0\n")
    run_program(source)  # not a view: the write is allowed
    assert proven_at(source, WRITE) == []


SCRIPTING = PROGRAM.replace("def tag(x, y):\n    return Tag.apply(x, y)\n",
                            "def tag(x, y):\n    if torch.jit.is_scripting():\n        return x\n"
                            "    return Tag.apply(x, y)\n")


def test_a_return_under_is_scripting_never_runs_eagerly():
    """``if torch.jit.is_scripting(): return x`` (TorchScript cannot run a custom Function):
    eagerly the helper always hands back the Function's view."""
    assert SCRIPTING != PROGRAM
    assert raises_inplace(SCRIPTING, message=C_ERROR)
    assert proven_at(SCRIPTING, WRITE) == [("IPF106", "safe")]
    result = fixed_source(SCRIPTING, project=True)
    for got, want in zip(run_program(result), run_program(CONTROL)):
        assert torch.equal(got, want)


def test_the_function_only_when_scripting_is_not_proven():
    source = SCRIPTING.replace("    if torch.jit.is_scripting():\n", "    if not torch.jit.is_scripting():\n")
    run_program(source)  # eagerly the helper hands back its argument: no custom Function
    assert proven_at(source, WRITE) == []
